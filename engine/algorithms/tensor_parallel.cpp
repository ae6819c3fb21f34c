// Builds a tensor-parallel layer. Every weight shard is a buffer that starts
// as its block of the single-device tensor (Buffer::init_*), so the split
// layer and TpLayerReference start from the same model.
//
// MLP, attention and transformer layers are made of residual stages
//
//   in ─► [LN] ─► u ─► sub-block (column then row linear) ─► partial ─► Σ ─► + bias [+ in] ─► out
//
// where Σ is an all-reduce, or with sequence parallelism a reduce-scatter
// that leaves rank r the token rows r·T/tp.. of the sum; the stage input is
// then a shard of rows and u is all-gathered from the shards. Backward runs
// the stages in reverse with the roles swapped (Megatron's f and g):
//
//                      forward                         backward
//   plain              Σ = all-reduce (g)               all-reduce of du (f)
//   sequence parallel  all-gather u (g), reduce-scatter  all-gather dout (ḡ), reduce-scatter
//                      the partial sums (ḡ)             du (g)
//
// (Megatron's operators: f is identity forward and all-reduce backward, g
// the reverse; with sequence parallelism g all-gathers forward and
// reduce-scatters backward, ḡ the reverse.)
#include "engine/algorithms/tensor_parallel.h"

#include <cmath>
#include <string>

#include "engine/core/error.h"
#include "engine/plan/kernel.h"

namespace shardlab {
namespace {

BufferSlice Whole(const PlanBuilder& builder, BufferId id) {
  return BufferSlice{id, 0, builder.buffer(id).count};
}

BufferSlice Part(BufferId id, std::int64_t offset, std::int64_t count) {
  return BufferSlice{id, offset, count};
}

KernelCall Mm(BufferSlice a, BufferSlice b, BufferSlice c, std::int64_t m, std::int64_t n,
              std::int64_t k, bool ta = false, bool tb = false, bool accumulate = false) {
  KernelCall call = MatMulCall(a, b, c, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
  call.transpose_a = ta;
  call.transpose_b = tb;
  call.accumulate = accumulate;
  return call;
}

KernelCall Ew(KernelKind kind, BufferSlice a, BufferSlice b, BufferSlice c, std::int64_t m,
              std::int64_t n, float alpha = 1.0f) {
  return ElementwiseCall(kind, a, b, c, static_cast<int>(m), static_cast<int>(n), alpha);
}

// c += a over `count` elements.
KernelCall AddInto(BufferSlice a, BufferSlice c) {
  return Ew(KernelKind::kAxpy, a, {}, c, 1, c.count);
}

KernelCall Norm(BufferSlice a, BufferSlice c, std::int64_t rows, std::int64_t cols) {
  KernelCall call = Ew(KernelKind::kLayerNorm, a, {}, c, rows, cols);
  call.epsilon = 1e-5f;
  return call;
}

KernelCall NormBackward(BufferSlice dy, BufferSlice x, BufferSlice dx, std::int64_t rows,
                        std::int64_t cols) {
  KernelCall call = Ew(KernelKind::kLayerNormBackward, dy, x, dx, rows, cols);
  call.epsilon = 1e-5f;
  return call;
}

// What a sub-block (attention or MLP) runs on each rank: forward from its
// full input u to a partial output, backward from the full output gradient
// to a partial input gradient (and its weight gradients).
struct SubBlock {
  std::vector<std::vector<KernelCall>> forward, backward;  // [rank]
  std::vector<BufferId> out_bias;                          // [rank], added after Σ
  std::string name;                                        // "MLP", "attention"
};

// Slices a sub-block works on, one per rank, each T × H.
struct SubBlockIo {
  std::vector<BufferSlice> u, partial, dy, du_partial;
};

class TpLayerBuilder {
 public:
  explicit TpLayerBuilder(const TpLayerConfig& c)
      : c_(c), t_(c.tokens()), h_(c.hidden), f_(c.split_width()), fs_(f_ / c.tp),
        heads_(c.head_count()), hr_(heads_ / c.tp), d_(heads_ > 0 ? c.hidden / heads_ : 0),
        rows_(c.sequence_parallel ? t_ / c.tp : t_), specs_(TpLayerTensors(c)),
        builder_(std::string("tensor-parallel ") + TpLayerKindName(c.kind) +
                     (c.sequence_parallel ? " (sequence parallel)" : "") + ", tp " +
                     std::to_string(c.tp) + ", " + std::to_string(c.tokens()) + " tokens x " +
                     std::to_string(c.hidden),
                 c.tp) {}

  TpLayerPlan Build() {
    out_.config = c_;
    out_.allreduce_count = t_ * h_;
    switch (c_.kind) {
      case TpLayerKind::kColumnLinear: BuildColumn(); break;
      case TpLayerKind::kRowLinear: BuildRow(); break;
      case TpLayerKind::kMlp:
      case TpLayerKind::kAttention:
      case TpLayerKind::kTransformer: BuildStages(); break;
    }
    for (const TpCollective& col : out_.collectives) {
      if (col.kind == GroupCollectiveKind::kAllGather) continue;  // an RS + AG pair counts once
      (col.forward ? out_.forward_allreduces : out_.backward_allreduces)++;
    }
    out_.plan = builder_.Finish();
    return std::move(out_);
  }

 private:
  int tp() const { return c_.tp; }

  BufferId Zeros(int rank, const std::string& name, std::int64_t count) {
    return builder_.AddBuffer(rank, name, count, c_.dtype);
  }

  // A buffer that starts as block `b` of tensor `name` ("A", "x", ...); a
  // weight is recorded in the plan's blocks.
  BufferId Block(int rank, const std::string& name, const std::string& label, std::int64_t row0,
                 std::int64_t rows, std::int64_t col0, std::int64_t cols) {
    const TpTensorSpec& spec = FindTpTensor(specs_, name);
    Buffer b{label, rank, rows * cols, c_.dtype, BufferInit::kRandom, spec.stream, spec.scale};
    b.init_offset = row0 * spec.cols + col0;
    b.init_row = cols;
    b.init_stride = spec.cols;
    const BufferId id = builder_.AddBuffer(b);
    if (spec.weight) Record(name, TpTensorRole::kWeight, rank, id, 0, row0, rows, col0, cols);
    return id;
  }

  // Records that `buffer` (from `offset`) holds a block of tensor `name`:
  // an output ("y") or gradient ("dx", "dA") of the reference's shape.
  void Record(const std::string& name, TpTensorRole role, int rank, BufferId buffer,
              std::int64_t offset, std::int64_t row0, std::int64_t rows, std::int64_t col0,
              std::int64_t cols) {
    // A weight is its own spec; the output y has dy's shape; a gradient d·
    // has its tensor's.
    const std::string base = role == TpTensorRole::kWeight ? name
                             : role == TpTensorRole::kOutput ? "dy"
                                                             : name.substr(1);
    const TpTensorSpec& spec = FindTpTensor(specs_, base);
    TpTensorBlock block;
    block.tensor = name;
    block.role = role;
    block.rank = rank;
    block.buffer = buffer;
    block.offset = offset;
    block.block = TpBlock{row0, rows, col0, cols, spec.rows, spec.cols};
    out_.blocks.push_back(block);
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
    std::vector<OpId> real;
    for (OpId d : deps)
      if (d != kNoOp) real.push_back(d);
    return builder_.AddCompute(op, kernels, real);
  }

  // One collective over ranks 0..tp-1 on slices[r], after after[r].
  std::vector<std::vector<OpId>> Collective(GroupCollectiveKind kind,
                                            const std::vector<BufferSlice>& slices,
                                            const std::vector<OpId>& after, bool forward,
                                            std::string what) {
    GroupCollective g;
    g.kind = kind;
    for (int r = 0; r < tp(); ++r) {
      g.ranks.push_back(r);
      g.slices.push_back(slices[static_cast<std::size_t>(r)]);
      g.after.push_back({after[static_cast<std::size_t>(r)]});
    }
    g.first_step = step_;
    g.tags.layer = 0;
    g.collective_seq = seq_;
    if (tp() > 1) {  // one rank: nothing to reduce, and no ops are added
      // Its name for the labels, numbered per kind in plan order: "AR1 fwd",
      // "all-reduce of the MLP output (g) in the forward".
      const int kind_index = static_cast<int>(kind);
      const char* prefix = kind == GroupCollectiveKind::kAllReduce ? "AR"
                           : kind == GroupCollectiveKind::kReduceScatter ? "RS" : "AG";
      const char* words = kind == GroupCollectiveKind::kAllReduce ? "all-reduce"
                          : kind == GroupCollectiveKind::kReduceScatter ? "reduce-scatter" : "all-gather";
      CollectiveNote note;
      note.tag = prefix + std::to_string(++kind_counts_[kind_index % 3]) + (forward ? " fwd" : " bwd");
      note.what = std::string(words) + " of the " + what + " in the " + (forward ? "forward" : "backward");
      note.two_passes = kind == GroupCollectiveKind::kAllReduce;
      builder_.NoteCollective(seq_, std::move(note));
      out_.collectives.push_back(TpCollective{seq_, kind, forward, t_ * h_, std::move(what)});
      ++seq_;
    }
    const GroupCollectiveOps ops = AppendGroupCollective(builder_, g);
    step_ += ops.steps;
    return ops.done;
  }

  // ---- lone linears ---------------------------------------------------------

  // Column linear: Y_r = X·A_r + a_r; dX = Σ dY_r·A_rᵀ.
  void BuildColumn() {
    std::vector<BufferSlice> dx(static_cast<std::size_t>(tp()));
    std::vector<OpId> backward(dx.size());
    for (int r = 0; r < tp(); ++r) {
      const BufferId x = Block(r, "x", "x", 0, t_, 0, h_);
      const BufferId w = Block(r, "A", "A", 0, h_, r * fs_, fs_);
      const BufferId a = Block(r, "a", "a", 0, 1, r * fs_, fs_);
      const BufferId dy = Block(r, "dy", "dy", 0, t_, r * fs_, fs_);
      const BufferId y = Zeros(r, "y", t_ * fs_), dw = Zeros(r, "dA", h_ * fs_),
                     db = Zeros(r, "da", fs_), dxb = Zeros(r, "dx", t_ * h_);
      Record("y", TpTensorRole::kOutput, r, y, 0, 0, t_, r * fs_, fs_);
      Record("dA", TpTensorRole::kGradient, r, dw, 0, 0, h_, r * fs_, fs_);
      Record("da", TpTensorRole::kGradient, r, db, 0, 0, 1, r * fs_, fs_);
      Record("dx", TpTensorRole::kGradient, r, dxb, 0, 0, t_, 0, h_);
      dx[r] = Whole(builder_, dxb);
      const OpId fwd = Compute(r, Phase::kForward, 0,
                               {Mm(Whole(builder_, x), Whole(builder_, w), Whole(builder_, y), t_, fs_, h_),
                                Ew(KernelKind::kAddBias, Whole(builder_, a), {}, Whole(builder_, y), t_, fs_)},
                               {});
      backward[r] = Compute(
          r, Phase::kBackward, 1,
          {Mm(Whole(builder_, x), Whole(builder_, dy), Whole(builder_, dw), h_, fs_, t_, true),
           Ew(KernelKind::kColumnSum, Whole(builder_, dy), {}, Whole(builder_, db), t_, fs_),
           Mm(Whole(builder_, dy), Whole(builder_, w), dx[r], t_, h_, fs_, false, true)},
          {fwd});
    }
    step_ = 2;
    Collective(GroupCollectiveKind::kAllReduce, dx, backward, false, "input gradient (f)");
  }

  // Row linear: Y = Σ X_r·W_r + b; dX_r = dY·W_rᵀ.
  void BuildRow() {
    std::vector<BufferSlice> y(static_cast<std::size_t>(tp()));
    std::vector<OpId> partial(y.size());
    std::vector<BufferId> xs(y.size()), ws(y.size()), bias(y.size()), dys(y.size());
    for (int r = 0; r < tp(); ++r) {
      xs[r] = Block(r, "x", "x", 0, t_, r * fs_, fs_);
      ws[r] = Block(r, "W", "W", r * fs_, fs_, 0, h_);
      bias[r] = Block(r, "b", "b", 0, 1, 0, h_);
      dys[r] = Block(r, "dy", "dy", 0, t_, 0, h_);
      const BufferId yb = Zeros(r, "y", t_ * h_);
      Record("y", TpTensorRole::kOutput, r, yb, 0, 0, t_, 0, h_);
      y[r] = Whole(builder_, yb);
      partial[r] = Compute(r, Phase::kForward, 0,
                           {Mm(Whole(builder_, xs[r]), Whole(builder_, ws[r]), y[r], t_, h_, fs_)}, {});
    }
    step_ = 1;
    const auto reduced = Collective(GroupCollectiveKind::kAllReduce, y, partial, true, "output (g)");
    for (int r = 0; r < tp(); ++r) {
      const BufferId dw = Zeros(r, "dW", fs_ * h_), db = Zeros(r, "db", h_),
                     dx = Zeros(r, "dx", t_ * fs_);
      Record("dW", TpTensorRole::kGradient, r, dw, 0, r * fs_, fs_, 0, h_);
      Record("db", TpTensorRole::kGradient, r, db, 0, 0, 1, 0, h_);
      Record("dx", TpTensorRole::kGradient, r, dx, 0, 0, t_, r * fs_, fs_);
      const OpId biased = Compute(
          r, Phase::kForward, step_,
          {Ew(KernelKind::kAddBias, Whole(builder_, bias[r]), {}, y[r], t_, h_)}, reduced[r]);
      const BufferSlice dy = Whole(builder_, dys[r]);
      Compute(r, Phase::kBackward, step_ + 1,
              {Mm(Whole(builder_, xs[r]), dy, Whole(builder_, dw), fs_, h_, t_, true),
               Ew(KernelKind::kColumnSum, dy, {}, Whole(builder_, db), t_, h_),
               Mm(dy, Whole(builder_, ws[r]), Whole(builder_, dx), t_, fs_, h_, false, true)},
              {biased});
    }
  }

  // ---- sub-blocks -------------------------------------------------------------

  // Megatron MLP on rank r: A by columns, B by rows; b is added after Σ.
  SubBlock Mlp(const SubBlockIo& io) {
    SubBlock s;
    s.name = "MLP";
    for (int r = 0; r < tp(); ++r) {
      const BufferId a_w = Block(r, "A", "A", 0, h_, r * fs_, fs_);
      const BufferId a_b = Block(r, "a", "a", 0, 1, r * fs_, fs_);
      const BufferId b_w = Block(r, "B", "B", r * fs_, fs_, 0, h_);
      s.out_bias.push_back(Block(r, "b", "b", 0, 1, 0, h_));
      const BufferId z = Zeros(r, "mlp.z", t_ * fs_), act = Zeros(r, "mlp.relu", t_ * fs_),
                     dact = Zeros(r, "mlp.dz", t_ * fs_);
      const BufferId da_w = Zeros(r, "dA", h_ * fs_), da_b = Zeros(r, "da", fs_),
                     db_w = Zeros(r, "dB", fs_ * h_), db_b = Zeros(r, "db", h_);
      Record("dA", TpTensorRole::kGradient, r, da_w, 0, 0, h_, r * fs_, fs_);
      Record("da", TpTensorRole::kGradient, r, da_b, 0, 0, 1, r * fs_, fs_);
      Record("dB", TpTensorRole::kGradient, r, db_w, 0, r * fs_, fs_, 0, h_);
      Record("db", TpTensorRole::kGradient, r, db_b, 0, 0, 1, 0, h_);
      auto W = [&](BufferId id) { return Whole(builder_, id); };
      const BufferSlice u = io.u[r], dy = io.dy[r];
      s.forward.push_back({Mm(u, W(a_w), W(z), t_, fs_, h_),
                           Ew(KernelKind::kAddBias, W(a_b), {}, W(z), t_, fs_),
                           Ew(KernelKind::kRelu, W(z), {}, W(act), t_, fs_),
                           Mm(W(act), W(b_w), io.partial[r], t_, h_, fs_)});
      s.backward.push_back({Mm(W(act), dy, W(db_w), fs_, h_, t_, true),
                            Ew(KernelKind::kColumnSum, dy, {}, W(db_b), t_, h_),
                            Mm(dy, W(b_w), W(dact), t_, fs_, h_, false, true),
                            Ew(KernelKind::kReluBackward, W(dact), W(z), W(dact), t_, fs_),
                            Mm(u, W(dact), W(da_w), h_, fs_, t_, true),
                            Ew(KernelKind::kColumnSum, W(dact), {}, W(da_b), t_, fs_),
                            Mm(W(dact), W(a_w), io.du_partial[r], t_, h_, fs_, false, true)});
    }
    return s;
  }

  // Self-attention on rank r: heads [r·hr, (r+1)·hr), that is columns
  // [r·w, (r+1)·w) of Wq, Wk, Wv (w = hr·d) and the same rows of Wo. Q, K,
  // V and O are T × w with head j in columns j·d..; each head's products
  // read and write that column block in place (row stride w), as a fused
  // QKV GEMM followed by batched per-head GEMMs does. bo is added after Σ.
  SubBlock Attention(const SubBlockIo& io) {
    SubBlock s;
    s.name = "attention";
    const std::int64_t seq = c_.seq, ss = seq * seq, w = hr_ * d_;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_)));
    // Rows b·S.. and columns j·d.. of a T × w tensor, as a strided operand.
    auto head = [&](BufferId id, int b, int j) {
      return Part(id, b * seq * w + std::int64_t{j} * d_, (seq - 1) * w + d_);
    };
    auto strided = [&](KernelCall call, bool a, bool b, bool c) {
      if (a) call.lda = static_cast<std::int32_t>(w);
      if (b) call.ldb = static_cast<std::int32_t>(w);
      if (c) call.ldc = static_cast<std::int32_t>(w);
      return call;
    };
    for (int r = 0; r < tp(); ++r) {
      auto W = [&](BufferId id) { return Whole(builder_, id); };
      const BufferSlice u = io.u[r], dy = io.dy[r];
      const std::int64_t c0 = r * w;
      std::vector<KernelCall> fwd, bwd;
      s.out_bias.push_back(Block(r, "bo", "bo", 0, 1, 0, h_));
      const BufferId dbo = Zeros(r, "dbo", h_);
      Record("dbo", TpTensorRole::kGradient, r, dbo, 0, 0, 1, 0, h_);
      BufferId wt[3], bias[3], act[3], dact[3], dw[3], db[3];
      const char* names[3] = {"q", "k", "v"};
      for (int i = 0; i < 3; ++i) {
        const std::string wn = std::string("W") + names[i], bn = std::string("b") + names[i];
        const std::string upper(1, static_cast<char>(names[i][0] - 'a' + 'A'));
        wt[i] = Block(r, wn, wn, 0, h_, c0, w);
        bias[i] = Block(r, bn, bn, 0, 1, c0, w);
        act[i] = Zeros(r, "attn." + upper, t_ * w);
        dact[i] = Zeros(r, "attn.d" + upper, t_ * w);
        dw[i] = Zeros(r, "d" + wn, h_ * w);
        db[i] = Zeros(r, "d" + bn, w);
        Record("d" + wn, TpTensorRole::kGradient, r, dw[i], 0, 0, h_, c0, w);
        Record("d" + bn, TpTensorRole::kGradient, r, db[i], 0, 0, 1, c0, w);
        fwd.push_back(Mm(u, W(wt[i]), W(act[i]), t_, w, h_));
        fwd.push_back(Ew(KernelKind::kAddBias, W(bias[i]), {}, W(act[i]), t_, w));
      }
      const BufferId wo = Block(r, "Wo", "Wo", c0, w, 0, h_);
      const BufferId dwo = Zeros(r, "dWo", w * h_);
      Record("dWo", TpTensorRole::kGradient, r, dwo, 0, c0, w, 0, h_);
      const BufferId p = Zeros(r, "attn.P", std::int64_t{c_.batch} * hr_ * ss);
      const BufferId o = Zeros(r, "attn.O", t_ * w), d_o = Zeros(r, "attn.dO", t_ * w);
      const BufferId dp = Zeros(r, "attn.dP", ss);  // one S × S scratch, reused per head
      auto probs = [&](int b, int j) { return Part(p, (std::int64_t{b} * hr_ + j) * ss, ss); };
      // Forward: per sequence and head, P = softmax(Q·Kᵀ/√d), O = P·V.
      for (int b = 0; b < c_.batch; ++b)
        for (int j = 0; j < hr_; ++j) {
          const BufferSlice pb = probs(b, j);
          fwd.push_back(strided(Mm(head(act[0], b, j), head(act[1], b, j), pb, seq, seq, d_, false, true),
                                true, true, false));
          fwd.push_back(Ew(KernelKind::kSoftmax, pb, {}, pb, seq, seq, scale));
          fwd.push_back(strided(Mm(pb, head(act[2], b, j), head(o, b, j), seq, d_, seq), false, true, true));
        }
      fwd.push_back(Mm(W(o), W(wo), io.partial[r], t_, h_, w));
      // Backward.
      bwd.push_back(Ew(KernelKind::kColumnSum, dy, {}, W(dbo), t_, h_));
      bwd.push_back(Mm(W(o), dy, W(dwo), w, h_, t_, true));
      bwd.push_back(Mm(dy, W(wo), W(d_o), t_, w, h_, false, true));
      for (int b = 0; b < c_.batch; ++b)
        for (int j = 0; j < hr_; ++j) {
          const BufferSlice pb = probs(b, j), dps = W(dp);
          bwd.push_back(strided(Mm(head(d_o, b, j), head(act[2], b, j), dps, seq, seq, d_, false, true),
                                true, true, false));
          bwd.push_back(strided(Mm(pb, head(d_o, b, j), head(dact[2], b, j), seq, d_, seq, true),
                                false, true, true));
          bwd.push_back(Ew(KernelKind::kSoftmaxBackward, dps, pb, dps, seq, seq, scale));
          bwd.push_back(strided(Mm(dps, head(act[1], b, j), head(dact[0], b, j), seq, d_, seq),
                                false, true, true));
          bwd.push_back(strided(Mm(dps, head(act[0], b, j), head(dact[1], b, j), seq, d_, seq, true),
                                false, true, true));
        }
      for (int i = 0; i < 3; ++i) {
        bwd.push_back(Mm(u, W(dact[i]), W(dw[i]), h_, w, t_, true));
        bwd.push_back(Ew(KernelKind::kColumnSum, W(dact[i]), {}, W(db[i]), t_, w));
        bwd.push_back(Mm(W(dact[i]), W(wt[i]), io.du_partial[r], t_, h_, w, false, true, i > 0));
      }
      s.forward.push_back(std::move(fwd));
      s.backward.push_back(std::move(bwd));
    }
    return s;
  }

  // ---- residual stages ----------------------------------------------------------

  struct Stage {
    bool norm = false, residual = false;
    bool attention = false;
    std::vector<BufferSlice> in, out, dout, din;  // [rank]; shards under SP
    std::vector<BufferSlice> u, partial, dy_full, du_partial;  // [rank], T × H
    SubBlock sub;
  };

  BufferSlice ChunkRows(BufferId id, int r) const { return Part(id, r * rows_ * h_, rows_ * h_); }

  // Forward buffers of a stage whose input slices are set.
  void AllocateForward(Stage& st, const std::string& prefix) {
    const bool sp = c_.sequence_parallel;
    for (int r = 0; r < tp(); ++r) {
      // u: what the sub-block reads. Without SP and without a norm it is the input itself.
      st.u.push_back(!sp && !st.norm ? st.in[r] : Whole(builder_, Zeros(r, prefix + ".u", t_ * h_)));
      st.partial.push_back(Whole(builder_, Zeros(r, prefix + ".partial", t_ * h_)));
      st.out.push_back(st.residual ? Whole(builder_, Zeros(r, prefix + ".out", rows_ * h_))
                       : sp        ? ChunkRows(st.partial[r].buffer, r)
                                   : st.partial[r]);
    }
  }

  // Backward buffers of a stage whose output gradient slices are set.
  void AllocateBackward(Stage& st, const std::string& prefix) {
    const bool sp = c_.sequence_parallel;
    for (int r = 0; r < tp(); ++r) {
      st.du_partial.push_back(Whole(builder_, Zeros(r, prefix + ".du_partial", t_ * h_)));
      st.dy_full.push_back(sp ? Whole(builder_, Zeros(r, prefix + ".dout_full", t_ * h_)) : st.dout[r]);
      st.din.push_back(st.norm || st.residual ? Whole(builder_, Zeros(r, prefix + ".din", rows_ * h_))
                       : sp                   ? ChunkRows(st.du_partial[r].buffer, r)
                                              : st.du_partial[r]);
    }
  }

  // Forward of a stage after `after[r]`; returns each rank's last op.
  std::vector<OpId> Forward(const Stage& st, const std::vector<OpId>& after) {
    const bool sp = c_.sequence_parallel;
    std::vector<OpId> ready = after;
    if (sp) {  // u's own rows from the shard, then all-gather the rest
      std::vector<OpId> pre(static_cast<std::size_t>(tp()));
      for (int r = 0; r < tp(); ++r) {
        const BufferSlice mine = ChunkRows(st.u[r].buffer, r);
        pre[r] = Compute(r, Phase::kForward, step_,
                         {st.norm ? Norm(st.in[r], mine, rows_, h_) : AddInto(st.in[r], mine)},
                         {ready[r]});
      }
      ++step_;
      const auto done = Collective(GroupCollectiveKind::kAllGather, st.u, pre, true,
                                   st.sub.name + " input, all-gather (g)");
      for (int r = 0; r < tp(); ++r) ready[r] = done[r].back();
    }
    std::vector<OpId> computed(static_cast<std::size_t>(tp()));
    for (int r = 0; r < tp(); ++r) {
      std::vector<KernelCall> kernels;
      if (!sp && st.norm) kernels.push_back(Norm(st.in[r], st.u[r], t_, h_));
      kernels.insert(kernels.end(), st.sub.forward[r].begin(), st.sub.forward[r].end());
      computed[r] = Compute(r, Phase::kForward, step_, kernels, {ready[r]});
    }
    ++step_;
    const auto reduced =
        sp ? Collective(GroupCollectiveKind::kReduceScatter, st.partial, computed, true,
                        st.sub.name + " output, reduce-scatter (ḡ)")
           : Collective(GroupCollectiveKind::kAllReduce, st.partial, computed, true,
                        st.sub.name + " output (g)");
    std::vector<OpId> last(static_cast<std::size_t>(tp()));
    for (int r = 0; r < tp(); ++r) {
      const BufferSlice sum = sp ? ChunkRows(st.partial[r].buffer, r) : st.partial[r];
      std::vector<KernelCall> kernels = {
          Ew(KernelKind::kAddBias, Whole(builder_, st.sub.out_bias[r]), {}, sum, rows_, h_)};
      if (st.residual) {
        kernels.push_back(AddInto(st.in[r], st.out[r]));
        kernels.push_back(AddInto(sum, st.out[r]));
      }
      last[r] = Compute(r, Phase::kForward, step_, kernels, reduced[r]);
    }
    ++step_;
    return last;
  }

  // Backward of a stage (its dout ready after `after[r]`).
  std::vector<OpId> Backward(const Stage& st, const std::vector<OpId>& after) {
    const bool sp = c_.sequence_parallel;
    std::vector<OpId> ready = after;
    if (sp) {  // the full output gradient from the shards
      std::vector<OpId> pre(static_cast<std::size_t>(tp()));
      for (int r = 0; r < tp(); ++r)
        pre[r] = Compute(r, Phase::kBackward, step_,
                         {AddInto(st.dout[r], ChunkRows(st.dy_full[r].buffer, r))}, {ready[r]});
      ++step_;
      const auto done = Collective(GroupCollectiveKind::kAllGather, st.dy_full, pre, false,
                                   st.sub.name + " output gradient, all-gather (ḡ)");
      for (int r = 0; r < tp(); ++r) ready[r] = done[r].back();
    }
    std::vector<OpId> computed(static_cast<std::size_t>(tp()));
    for (int r = 0; r < tp(); ++r)
      computed[r] = Compute(r, Phase::kBackward, step_, st.sub.backward[r], {ready[r]});
    ++step_;
    const auto reduced =
        sp ? Collective(GroupCollectiveKind::kReduceScatter, st.du_partial, computed, false,
                        st.sub.name + " input gradient, reduce-scatter (g)")
           : Collective(GroupCollectiveKind::kAllReduce, st.du_partial, computed, false,
                        st.sub.name + " input gradient (f)");
    std::vector<OpId> last(static_cast<std::size_t>(tp()));
    for (int r = 0; r < tp(); ++r) {
      const BufferSlice du = sp ? ChunkRows(st.du_partial[r].buffer, r) : st.du_partial[r];
      std::vector<KernelCall> kernels;
      if (st.norm) kernels.push_back(NormBackward(du, st.in[r], st.din[r], rows_, h_));
      else if (st.residual) kernels.push_back(AddInto(du, st.din[r]));
      if (st.residual) kernels.push_back(AddInto(st.dout[r], st.din[r]));
      last[r] = kernels.empty() ? reduced[r].back()
                                : Compute(r, Phase::kBackward, step_, kernels, reduced[r]);
    }
    ++step_;
    return last;
  }

  void BuildStages() {
    const bool sp = c_.sequence_parallel;
    const bool transformer = c_.kind == TpLayerKind::kTransformer;
    std::vector<Stage> stages;
    auto stage = [&](bool attention) {
      Stage st;
      st.norm = st.residual = transformer;  // pre-norm residual blocks
      st.attention = attention;
      return st;
    };
    if (c_.kind != TpLayerKind::kMlp) stages.push_back(stage(true));
    if (c_.kind != TpLayerKind::kAttention) stages.push_back(stage(false));
    // The layer's input and upstream gradient: whole, or each rank's rows.
    for (int r = 0; r < tp(); ++r) {
      const std::int64_t row0 = sp ? r * rows_ : 0;
      stages.front().in.push_back(Whole(builder_, Block(r, "x", "x", row0, rows_, 0, h_)));
      stages.back().dout.push_back(Whole(builder_, Block(r, "dy", "dy", row0, rows_, 0, h_)));
    }
    // Stage i's output is stage i+1's input; stage i+1's input gradient is
    // stage i's output gradient.
    auto prefix = [](const Stage& st) { return std::string(st.attention ? "attn" : "mlp"); };
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (i > 0) stages[i].in = stages[i - 1].out;
      AllocateForward(stages[i], prefix(stages[i]));
    }
    for (std::size_t i = stages.size(); i-- > 0;) {
      if (i + 1 < stages.size()) stages[i].dout = stages[i + 1].din;
      AllocateBackward(stages[i], prefix(stages[i]));
    }
    for (Stage& st : stages) {
      const SubBlockIo io{st.u, st.partial, st.dy_full, st.du_partial};
      st.sub = st.attention ? Attention(io) : Mlp(io);
    }
    // Forward.
    std::vector<OpId> after(static_cast<std::size_t>(tp()), kNoOp);
    step_ = 0;
    for (const Stage& st : stages) after = Forward(st, after);
    for (std::size_t i = stages.size(); i-- > 0;) after = Backward(stages[i], after);
    // Results: the output and the input gradient, whole or the rank's rows.
    for (int r = 0; r < tp(); ++r) {
      const std::int64_t row0 = sp ? r * rows_ : 0;
      const BufferSlice y = stages.back().out[r], dx = stages.front().din[r];
      Record("y", TpTensorRole::kOutput, r, y.buffer, y.offset, row0, rows_, 0, h_);
      Record("dx", TpTensorRole::kGradient, r, dx.buffer, dx.offset, row0, rows_, 0, h_);
    }
  }

  TpLayerConfig c_;
  std::int64_t t_, h_, f_, fs_;
  int heads_, hr_;
  std::int64_t d_, rows_;
  std::vector<TpTensorSpec> specs_;
  PlanBuilder builder_;
  TpLayerPlan out_;
  int step_ = 0;
  int seq_ = 0;
  int kind_counts_[3] = {0, 0, 0};  // collectives named so far, by kind (AR1, RS1, AG1)
};

}  // namespace

TpLayerPlan BuildTpLayer(const TpLayerConfig& config) {
  CheckTpLayerConfig(config);
  return TpLayerBuilder(config).Build();
}

}  // namespace shardlab
