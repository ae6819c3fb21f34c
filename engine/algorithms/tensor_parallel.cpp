#include "engine/algorithms/tensor_parallel.h"

#include <string>

#include "engine/algorithms/group_collective.h"
#include "engine/plan/kernel.h"

namespace shardlab {
namespace {

// Columns [col, col + cols) of every row of a rows × total tensor.
Buffer ColumnBlock(int rank, std::string name, const TpLayerConfig& c, TpTensor t,
                   std::int64_t rows, std::int64_t total, std::int64_t col, std::int64_t cols) {
  Buffer b{std::move(name), rank, rows * cols, DType::kF32, BufferInit::kRandom,
           TpLayerStream(t), TpLayerScale(c, t)};
  b.init_offset = col;
  b.init_row = cols;
  b.init_stride = total;
  return b;
}

// Rows [row, row + rows) of a tensor whose rows are `width` long (a vector
// is one row per element).
Buffer RowBlock(int rank, std::string name, const TpLayerConfig& c, TpTensor t, std::int64_t row,
                std::int64_t rows, std::int64_t width) {
  Buffer b{std::move(name), rank, rows * width, DType::kF32, BufferInit::kRandom,
           TpLayerStream(t), TpLayerScale(c, t)};
  b.init_offset = row * width;
  return b;
}

BufferSlice All(const PlanBuilder& builder, BufferId id) {
  return BufferSlice{id, 0, builder.buffer(id).count};
}

class TpLayerBuilder {
 public:
  explicit TpLayerBuilder(const TpLayerConfig& c)
      : c_(c), t_(c.tokens), h_(c.hidden), f_(c.split_width()), fs_(f_ / c.tp),
        builder_(std::string("tensor-parallel ") + TpLayerKindName(c.kind) + ", tp " +
                     std::to_string(c.tp) + ", " + std::to_string(c.tokens) + " tokens x " +
                     std::to_string(c.hidden),
                 c.tp) {}

  TpLayerPlan Build() {
    TpLayerPlan out;
    out.config = c_;
    out.ranks.resize(static_cast<std::size_t>(c_.tp));
    out.allreduce_count = std::int64_t{t_} * h_;
    switch (c_.kind) {
      case TpLayerKind::kColumnLinear: BuildColumn(out); break;
      case TpLayerKind::kRowLinear: BuildRow(out); break;
      case TpLayerKind::kMlp: BuildMlp(out); break;
    }
    out.forward_allreduces = forward_allreduces_;
    out.backward_allreduces = seq_ - forward_allreduces_;
    out.plan = builder_.Finish();
    return out;
  }

 private:
  BufferId Zeros(int rank, const std::string& name, std::int64_t count) {
    return builder_.AddBuffer(rank, name, count);
  }

  OpId Compute(int rank, Phase phase, int step, const std::vector<KernelCall>& kernels,
               const std::vector<OpId>& deps) {
    Op op;
    op.kind = OpKind::kCompute;
    op.lane = Lane::kCompute;
    op.rank = rank;
    op.step = step;
    op.tags.phase = phase;
    op.tags.layer = 0;
    return builder_.AddCompute(op, kernels, deps);
  }

  // All-reduces buf[r] (T × H each) over the tp ranks after after[r];
  // returns each rank's done ops and advances step_.
  std::vector<std::vector<OpId>> AllReduce(const std::vector<BufferId>& bufs,
                                           const std::vector<OpId>& after, bool forward) {
    GroupCollective ar;
    ar.kind = GroupCollectiveKind::kAllReduce;
    for (int r = 0; r < c_.tp; ++r) {
      ar.ranks.push_back(r);
      ar.slices.push_back(All(builder_, bufs[static_cast<std::size_t>(r)]));
      ar.after.push_back({after[static_cast<std::size_t>(r)]});
    }
    ar.first_step = step_;
    ar.tags.layer = 0;
    ar.collective_seq = seq_++;
    if (forward) ++forward_allreduces_;
    const GroupCollectiveOps ops = AppendGroupCollective(builder_, ar);
    step_ += ops.steps;
    return ops.done;
  }

  // Column linear: Y_r = X·A_r + a_r; dX = Σ dY_r·A_rᵀ.
  void BuildColumn(TpLayerPlan& out) {
    std::vector<BufferId> dx(static_cast<std::size_t>(c_.tp));
    std::vector<OpId> backward(static_cast<std::size_t>(c_.tp));
    for (int r = 0; r < c_.tp; ++r) {
      TpRankBuffers& rb = out.ranks[static_cast<std::size_t>(r)];
      const BufferId x = builder_.AddBuffer(RowBlock(r, "x", c_, TpTensor::kInput, 0, t_, h_));
      const BufferId w = builder_.AddBuffer(ColumnBlock(r, "A", c_, TpTensor::kWeight1, h_, f_, r * fs_, fs_));
      const BufferId a = builder_.AddBuffer(RowBlock(r, "a", c_, TpTensor::kBias1, r * fs_, fs_, 1));
      const BufferId dy = builder_.AddBuffer(ColumnBlock(r, "dy", c_, TpTensor::kOutputGrad, t_, f_, r * fs_, fs_));
      rb.y = Zeros(r, "y", std::int64_t{t_} * fs_);
      rb.dw1 = Zeros(r, "dA", std::int64_t{h_} * fs_);
      rb.db1 = Zeros(r, "da", fs_);
      rb.dx = dx[static_cast<std::size_t>(r)] = Zeros(r, "dx", std::int64_t{t_} * h_);
      const OpId fwd = Compute(r, Phase::kForward, 0,
                               {MatMulCall(All(builder_, x), All(builder_, w), All(builder_, rb.y), t_, fs_, h_),
                                ElementwiseCall(KernelKind::kAddBias, All(builder_, a), {}, All(builder_, rb.y), t_, fs_)},
                               {});
      KernelCall dw = MatMulCall(All(builder_, x), All(builder_, dy), All(builder_, rb.dw1), h_, fs_, t_);
      dw.transpose_a = true;
      KernelCall dxk = MatMulCall(All(builder_, dy), All(builder_, w), All(builder_, rb.dx), t_, h_, fs_);
      dxk.transpose_b = true;
      backward[static_cast<std::size_t>(r)] = Compute(
          r, Phase::kBackward, 1,
          {dw, ElementwiseCall(KernelKind::kColumnSum, All(builder_, dy), {}, All(builder_, rb.db1), t_, fs_), dxk},
          {fwd});
    }
    step_ = 2;
    AllReduce(dx, backward, /*forward=*/false);
  }

  // Row linear: Y = Σ X_r·W_r + b; dX_r = dY·W_rᵀ.
  void BuildRow(TpLayerPlan& out) {
    std::vector<BufferId> y(static_cast<std::size_t>(c_.tp));
    std::vector<OpId> partial(static_cast<std::size_t>(c_.tp));
    std::vector<BufferId> bias(static_cast<std::size_t>(c_.tp)), dys(bias.size()), xs(bias.size()),
        ws(bias.size());
    for (int r = 0; r < c_.tp; ++r) {
      TpRankBuffers& rb = out.ranks[static_cast<std::size_t>(r)];
      xs[r] = builder_.AddBuffer(ColumnBlock(r, "x", c_, TpTensor::kInput, t_, f_, r * fs_, fs_));
      ws[r] = builder_.AddBuffer(RowBlock(r, "W", c_, TpTensor::kWeight1, r * fs_, fs_, h_));
      bias[r] = builder_.AddBuffer(RowBlock(r, "b", c_, TpTensor::kBias1, 0, h_, 1));
      dys[r] = builder_.AddBuffer(RowBlock(r, "dy", c_, TpTensor::kOutputGrad, 0, t_, h_));
      rb.y = y[r] = Zeros(r, "y", std::int64_t{t_} * h_);
      rb.dw1 = Zeros(r, "dW", std::int64_t{fs_} * h_);
      rb.db1 = Zeros(r, "db", h_);
      rb.dx = Zeros(r, "dx", std::int64_t{t_} * fs_);
      partial[r] = Compute(r, Phase::kForward, 0,
                           {MatMulCall(All(builder_, xs[r]), All(builder_, ws[r]), All(builder_, rb.y), t_, h_, fs_)},
                           {});
    }
    step_ = 1;
    const auto reduced = AllReduce(y, partial, /*forward=*/true);
    for (int r = 0; r < c_.tp; ++r) {
      TpRankBuffers& rb = out.ranks[static_cast<std::size_t>(r)];
      const OpId biased = Compute(
          r, Phase::kForward, step_,
          {ElementwiseCall(KernelKind::kAddBias, All(builder_, bias[r]), {}, All(builder_, rb.y), t_, h_)},
          reduced[static_cast<std::size_t>(r)]);
      KernelCall dw = MatMulCall(All(builder_, xs[r]), All(builder_, dys[r]), All(builder_, rb.dw1), fs_, h_, t_);
      dw.transpose_a = true;
      KernelCall dxk = MatMulCall(All(builder_, dys[r]), All(builder_, ws[r]), All(builder_, rb.dx), t_, fs_, h_);
      dxk.transpose_b = true;
      Compute(r, Phase::kBackward, step_ + 1,
              {dw, ElementwiseCall(KernelKind::kColumnSum, All(builder_, dys[r]), {}, All(builder_, rb.db1), t_, h_), dxk},
              {biased});
    }
  }

  // MLP: Y = relu(X·A + a)·B + b, A by columns and B by rows.
  void BuildMlp(TpLayerPlan& out) {
    const std::size_t n = static_cast<std::size_t>(c_.tp);
    std::vector<BufferId> y(n), dx(n), x(n), w1(n), w2(n), b2(n), dy(n), z(n), act(n);
    std::vector<OpId> partial(n);
    for (int r = 0; r < c_.tp; ++r) {
      TpRankBuffers& rb = out.ranks[static_cast<std::size_t>(r)];
      x[r] = builder_.AddBuffer(RowBlock(r, "x", c_, TpTensor::kInput, 0, t_, h_));
      w1[r] = builder_.AddBuffer(ColumnBlock(r, "A", c_, TpTensor::kWeight1, h_, f_, r * fs_, fs_));
      const BufferId b1 = builder_.AddBuffer(RowBlock(r, "a", c_, TpTensor::kBias1, r * fs_, fs_, 1));
      w2[r] = builder_.AddBuffer(RowBlock(r, "B", c_, TpTensor::kWeight2, r * fs_, fs_, h_));
      b2[r] = builder_.AddBuffer(RowBlock(r, "b", c_, TpTensor::kBias2, 0, h_, 1));
      dy[r] = builder_.AddBuffer(RowBlock(r, "dy", c_, TpTensor::kOutputGrad, 0, t_, h_));
      z[r] = Zeros(r, "z", std::int64_t{t_} * fs_);
      act[r] = Zeros(r, "relu", std::int64_t{t_} * fs_);
      rb.y = y[r] = Zeros(r, "y", std::int64_t{t_} * h_);
      rb.dw1 = Zeros(r, "dA", std::int64_t{h_} * fs_);
      rb.db1 = Zeros(r, "da", fs_);
      rb.dw2 = Zeros(r, "dB", std::int64_t{fs_} * h_);
      rb.db2 = Zeros(r, "db", h_);
      rb.dx = dx[r] = Zeros(r, "dx", std::int64_t{t_} * h_);
      partial[r] = Compute(
          r, Phase::kForward, 0,
          {MatMulCall(All(builder_, x[r]), All(builder_, w1[r]), All(builder_, z[r]), t_, fs_, h_),
           ElementwiseCall(KernelKind::kAddBias, All(builder_, b1), {}, All(builder_, z[r]), t_, fs_),
           ElementwiseCall(KernelKind::kRelu, All(builder_, z[r]), {}, All(builder_, act[r]), t_, fs_),
           MatMulCall(All(builder_, act[r]), All(builder_, w2[r]), All(builder_, rb.y), t_, h_, fs_)},
          {});
    }
    step_ = 1;
    const auto reduced = AllReduce(y, partial, /*forward=*/true);
    std::vector<OpId> backward(n);
    const int bias_step = step_;
    for (int r = 0; r < c_.tp; ++r) {
      TpRankBuffers& rb = out.ranks[static_cast<std::size_t>(r)];
      const OpId biased = Compute(
          r, Phase::kForward, bias_step,
          {ElementwiseCall(KernelKind::kAddBias, All(builder_, b2[r]), {}, All(builder_, rb.y), t_, h_)},
          reduced[static_cast<std::size_t>(r)]);
      const BufferId dact = Zeros(r, "drelu", std::int64_t{t_} * fs_);
      KernelCall dw2 = MatMulCall(All(builder_, act[r]), All(builder_, dy[r]), All(builder_, rb.dw2), fs_, h_, t_);
      dw2.transpose_a = true;
      KernelCall da = MatMulCall(All(builder_, dy[r]), All(builder_, w2[r]), All(builder_, dact), t_, fs_, h_);
      da.transpose_b = true;
      KernelCall dw1 = MatMulCall(All(builder_, x[r]), All(builder_, dact), All(builder_, rb.dw1), h_, fs_, t_);
      dw1.transpose_a = true;
      KernelCall dxk = MatMulCall(All(builder_, dact), All(builder_, w1[r]), All(builder_, rb.dx), t_, h_, fs_);
      dxk.transpose_b = true;
      backward[r] = Compute(
          r, Phase::kBackward, bias_step + 1,
          {dw2,
           ElementwiseCall(KernelKind::kColumnSum, All(builder_, dy[r]), {}, All(builder_, rb.db2), t_, h_),
           da,
           // In place: dact becomes dZ, zero where the pre-activation was not positive.
           ElementwiseCall(KernelKind::kReluBackward, All(builder_, dact), All(builder_, z[r]), All(builder_, dact), t_, fs_),
           dw1,
           ElementwiseCall(KernelKind::kColumnSum, All(builder_, dact), {}, All(builder_, rb.db1), t_, fs_),
           dxk},
          {biased});
    }
    step_ = bias_step + 2;
    AllReduce(dx, backward, /*forward=*/false);
  }

  TpLayerConfig c_;
  int t_, h_, f_, fs_;
  PlanBuilder builder_;
  int step_ = 0;
  int seq_ = 0;
  int forward_allreduces_ = 0;
};

}  // namespace

TpLayerPlan BuildTpLayer(const TpLayerConfig& config) {
  CheckTpLayerConfig(config);
  return TpLayerBuilder(config).Build();
}

}  // namespace shardlab
