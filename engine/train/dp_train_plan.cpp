#include "engine/train/dp_train_plan.h"

#include <algorithm>

#include "engine/algorithms/group_collective.h"
#include "engine/train/grad_accumulation.h"

namespace shardlab {
namespace {

class DpTrainPlanBuilder {
 public:
  DpTrainPlanBuilder(const DpTrainConfig& c, const DpTrainResult& r, int steps)
      : c_(c), r_(r), steps_(steps), n_(c.ranks), h_(c.model.width),
        split_(SplitForAccumulation(c.model.batch, c.ranks, c.accumulate)),
        b_(split_.microbatch_rows), half_(c.precision),
        builder_(Name(c), c.ranks) {
    psi_ = MlpParameterCount(c.model);
  }

  DpTrainPlan Build() {
    Allocate();
    last_.assign(static_cast<std::size_t>(n_), std::vector<OpId>());
    for (int k = 0; k < steps_; ++k) Step(k);
    DpTrainPlan out;
    out.steps = steps_;
    out.plan = builder_.Finish();
    return out;
  }

 private:
  struct RankBuffers {
    BufferId input, target, loss, params, grads, master = kNoBuffer, flag = kNoBuffer, wire = kNoBuffer;
  };

  static std::string Name(const DpTrainConfig& c) {
    std::string mode = c.staleness > 0 ? "stale-synchronous SGD (S=" + std::to_string(c.staleness) + ")"
                       : c.local_steps > 1 ? "local SGD (H=" + std::to_string(c.local_steps) + ")"
                                           : "data parallel";
    return mode + ", " + std::to_string(c.ranks) + " ranks, MLP " + std::to_string(c.model.layers) + "x" +
           std::to_string(c.model.width) + ", K=" + std::to_string(c.accumulate) +
           (c.loss_scaled() ? ", fp16 + loss scale" : c.mixed() ? ", bf16" : "") +
           (c.compression.kind != Compression::kNone ? std::string(", ") + CompressionName(c.compression.kind) : "");
  }

  BufferId Add(int rank, const std::string& name, std::int64_t count, DType dtype, MemoryCategory category,
               bool transient = false) {
    Buffer b;
    b.name = name;
    b.rank = rank;
    b.count = count;
    b.dtype = dtype;
    b.category = category;
    b.transient = transient;
    return builder_.AddBuffer(b);
  }

  BufferSlice Whole(BufferId id) const { return {id, 0, builder_.buffer(id).count}; }

  // Elements of the buffer that carries the compressed gradient: the
  // all-reduce of `count` of its elements sends the compressed bytes.
  std::int64_t WireCount() const {
    const CompressionConfig& cc = c_.compression;
    switch (cc.kind) {
      case Compression::kInt8:  // Ψ bytes + a 4-byte scale per bucket, in 4-byte words
        return (psi_ + 4 * ((psi_ + cc.bucket_elements - 1) / cc.bucket_elements) + 3) / 4;
      case Compression::kTopK: return 2 * TopKCount(cc, psi_) * n_;  // every rank's (index, value) pairs
      default: return psi_;
    }
  }

  void Allocate() {
    const std::int64_t rows = split_.rows_per_rank;
    rank_.resize(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) {
      RankBuffers& rb = rank_[r];
      rb.input = Add(r, "input", rows * h_, half_, MemoryCategory::kOther);
      rb.target = Add(r, "target", rows * h_, half_, MemoryCategory::kOther);
      rb.loss = Add(r, "loss", steps_, DType::kF32, MemoryCategory::kOther);
      const std::string working = c_.mixed() ? std::string(".") + CompressionName(WireCompression(c_.precision)) : "";
      rb.params = Add(r, "params" + working, psi_, half_, MemoryCategory::kParameters);
      rb.grads = Add(r, "grads" + working, psi_, half_, MemoryCategory::kGradients);
      if (c_.mixed()) rb.master = Add(r, "master.fp32", psi_, DType::kF32, MemoryCategory::kOptimizerStates);
      if (c_.loss_scaled()) rb.flag = Add(r, "overflow flag", 1, DType::kF32, MemoryCategory::kOther);
      const Compression kind = c_.compression.kind;
      if (IsFloatCompression(kind) && !c_.mixed())
        rb.wire = Add(r, std::string("grads.") + CompressionName(kind) + " (wire)", psi_,
                      kind == Compression::kBf16 ? DType::kBF16 : DType::kF16, MemoryCategory::kGradients);
      if (kind == Compression::kInt8) rb.wire = Add(r, "grads.int8+scales (wire)", WireCount(), DType::kF32, MemoryCategory::kGradients);
      inbox_.push_back(c_.staleness > 0 && r > 0 ? Add(0, "pushed by rank " + std::to_string(r), psi_, DType::kF32, MemoryCategory::kGradients)
                                                 : kNoBuffer);
      if (kind == Compression::kTopK) rb.wire = Add(r, "top-k pairs (wire)", WireCount(), DType::kF32, MemoryCategory::kGradients);
    }
  }

  std::int64_t WeightAt(int l) const { return std::int64_t{l} * (h_ * h_ + h_); }

  OpId Compute(int rank, Phase phase, int layer, int microbatch, const std::vector<KernelCall>& kernels,
               const std::vector<OpId>& deps) {
    Op op;
    op.rank = rank;
    op.step = step_;
    op.tags.phase = phase;
    op.tags.layer = layer;
    op.tags.microbatch = microbatch;
    std::vector<OpId> d;
    for (const OpId id : deps)
      if (id != kNoOp) d.push_back(id);
    return builder_.AddCompute(op, kernels, d);
  }

  std::vector<std::vector<OpId>> Collective(GroupCollectiveKind kind, ReduceOp reduce,
                                            const std::vector<BufferSlice>& slices,
                                            const std::vector<std::vector<OpId>>& after, CollectiveNote note) {
    GroupCollective g;
    g.kind = kind;
    g.op = reduce;
    for (int r = 0; r < n_; ++r) g.ranks.push_back(r);
    g.slices = slices;
    g.after = after;
    g.first_step = step_;
    g.collective_seq = n_ > 1 ? seq_++ : -1;
    if (n_ > 1) builder_.NoteCollective(g.collective_seq, std::move(note));
    const GroupCollectiveOps ops = AppendGroupCollective(builder_, g);
    step_ += ops.steps;
    return ops.done;
  }

  // One micro-batch's forward and backward on every rank; the last op of each.
  std::vector<OpId> Microbatch(int k, int j, const std::vector<std::vector<OpId>>& wait) {
    const int layers = c_.model.layers;
    const std::int64_t act = std::int64_t{b_} * h_;
    auto whole = [&](BufferId id) { return BufferSlice{id, 0, act}; };
    const std::string mb = ".s" + std::to_string(k) + ".mb" + std::to_string(j);
    struct Acts { std::vector<BufferId> z, a, g; BufferId y = kNoBuffer; };
    std::vector<Acts> acts(static_cast<std::size_t>(n_));
    auto recomputes = [&](int l) { return !c_.recompute.empty() && c_.recompute[static_cast<std::size_t>(l)]; };
    for (int r = 0; r < n_; ++r) {
      Acts& ac = acts[r];
      for (int l = 0; l < layers; ++l) {
        const std::string ls = std::to_string(l);
        const bool last = l + 1 == layers;
        ac.z.push_back(last ? kNoBuffer : Add(r, "z" + ls + mb, act, half_, MemoryCategory::kActivations, true));
        ac.a.push_back(last ? kNoBuffer : Add(r, "a" + ls + mb, act, half_, MemoryCategory::kActivations, true));
        ac.g.push_back(Add(r, (last ? "dy" : "da" + ls) + mb, act, half_, MemoryCategory::kActivations, true));
      }
      ac.y = Add(r, "y" + mb, act, half_, MemoryCategory::kActivations, true);
    }
    const BufferSlice no{};
    // Forward.
    for (int l = 0; l < layers; ++l) {
      for (int r = 0; r < n_; ++r) {
        const RankBuffers& rb = rank_[r];
        const Acts& ac = acts[r];
        const bool last = l + 1 == layers;
        const BufferSlice in = l == 0 ? BufferSlice{rb.input, std::int64_t{j} * act, act} : whole(ac.a[l - 1]);
        const BufferSlice w{rb.params, WeightAt(l), h_ * h_}, bias{rb.params, WeightAt(l) + h_ * h_, h_};
        const BufferSlice out = last ? whole(ac.y) : whole(ac.z[l]);
        std::vector<KernelCall> kernels = {MatMulCall(in, w, out, b_, h_, h_),
                                           ElementwiseCall(KernelKind::kAddBias, bias, no, out, b_, h_)};
        if (!last) kernels.push_back(ElementwiseCall(KernelKind::kRelu, out, no, whole(ac.a[l]), b_, h_));
        else {
          const BufferSlice target{rb.target, std::int64_t{j} * act, act};
          kernels.push_back(ElementwiseCall(KernelKind::kMseLoss, out, target, {rb.loss, k, 1}, b_, h_));
          kernels.push_back(ElementwiseCall(KernelKind::kMseGrad, out, target, whole(ac.g[l]), b_, h_));
        }
        Compute(r, Phase::kForward, l, j, kernels, l == 0 ? wait[r] : std::vector<OpId>{});
      }
      ++step_;
    }
    // Backward, each recomputed layer's z first.
    std::vector<OpId> done(static_cast<std::size_t>(n_), kNoOp);
    for (int l = layers - 1; l >= 0; --l) {
      std::vector<BufferId> z(static_cast<std::size_t>(n_), kNoBuffer);
      for (int r = 0; r < n_; ++r) z[r] = l + 1 < layers ? acts[r].z[l] : kNoBuffer;
      if (recomputes(l)) {
        for (int r = 0; r < n_; ++r) {
          const RankBuffers& rb = rank_[r];
          z[r] = Add(r, "z" + std::to_string(l) + ".recomputed" + mb, act, half_, MemoryCategory::kActivations, true);
          const BufferSlice in = l == 0 ? BufferSlice{rb.input, std::int64_t{j} * act, act} : whole(acts[r].a[l - 1]);
          Compute(r, Phase::kForward, l, j,
                  {MatMulCall(in, {rb.params, WeightAt(l), h_ * h_}, whole(z[r]), b_, h_, h_),
                   ElementwiseCall(KernelKind::kAddBias, {rb.params, WeightAt(l) + h_ * h_, h_}, no, whole(z[r]), b_, h_)},
                  {});
        }
        ++step_;
      }
      for (int r = 0; r < n_; ++r) {
        const RankBuffers& rb = rank_[r];
        const Acts& ac = acts[r];
        std::vector<KernelCall> kernels;
        if (l + 1 < layers)
          kernels.push_back(ElementwiseCall(KernelKind::kReluBackward, whole(ac.g[l]), whole(z[r]), whole(ac.g[l]), b_, h_));
        const BufferSlice in = l == 0 ? BufferSlice{rb.input, std::int64_t{j} * act, act} : whole(ac.a[l - 1]);
        KernelCall dw = MatMulCall(in, whole(ac.g[l]), {rb.grads, WeightAt(l), h_ * h_}, h_, h_, b_);
        dw.transpose_a = true;
        dw.accumulate = j > 0;
        kernels.push_back(dw);
        KernelCall db = ElementwiseCall(KernelKind::kColumnSum, whole(ac.g[l]), no, {rb.grads, WeightAt(l) + h_ * h_, h_}, b_, h_);
        db.accumulate = j > 0;
        kernels.push_back(db);
        if (l > 0) {
          KernelCall dx = MatMulCall(whole(ac.g[l]), {rb.params, WeightAt(l), h_ * h_}, whole(ac.g[l - 1]), b_, h_, h_);
          dx.transpose_b = true;
          kernels.push_back(dx);
        }
        done[r] = Compute(r, Phase::kBackward, l, j, kernels, {});
      }
      ++step_;
    }
    return done;
  }

  void Step(int k) {
    std::vector<std::vector<OpId>> wait = last_;
    if (c_.staleness > 0) {
      // Step k waits for every rank's step k − S − 1 (the bound S).
      const int behind = k - c_.staleness - 1;
      for (int r = 0; r < n_; ++r) {
        wait[r].clear();
        if (behind >= 0)
          for (int q = 0; q < n_; ++q) wait[r].push_back(step_end_[static_cast<std::size_t>(behind)][q]);
      }
    }
    std::vector<OpId> done;
    for (int j = 0; j < c_.accumulate; ++j) done = Microbatch(k, j, j == 0 ? wait : std::vector<std::vector<OpId>>(static_cast<std::size_t>(n_)));
    std::vector<std::vector<OpId>> after(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) after[r] = {done[r]};
    const std::string s = std::to_string(k);
    if (c_.staleness > 0 || c_.local_steps > 1) {
      // A local update from the rank's own gradient; local SGD averages every H steps.
      for (int r = 0; r < n_; ++r)
        after[r] = {Compute(r, Phase::kOptimizer, -1, -1,
                            {ElementwiseCall(KernelKind::kAxpy, Whole(rank_[r].grads), {}, Whole(rank_[r].params), 1,
                                             static_cast<int>(psi_), -c_.model.learning_rate)},
                            after[r])};
      ++step_;
      if (c_.staleness > 0) {
        // The parameter server on rank 0: every other rank pushes its
        // gradient and pulls the parameters back (4Ψ bytes each way).
        for (int r = 1; r < n_; ++r) {
          OpTags tags;
          const PlanBuilder::Transfer push = builder_.AddTransfer(
              r, 0, Whole(rank_[r].grads), Whole(inbox_[r]), ReduceOp::kNone, step_, tags, after[r], {});
          const PlanBuilder::Transfer pull = builder_.AddTransfer(
              0, r, Whole(rank_[0].params), Whole(rank_[r].params), ReduceOp::kNone, step_ + 1, tags, {push.recv}, {});
          after[r] = {pull.recv};
        }
        step_ += 2;
      }
      if (c_.staleness == 0 && r_.communicated[static_cast<std::size_t>(k)]) {
        std::vector<BufferSlice> slices;
        for (int r = 0; r < n_; ++r) slices.push_back(Whole(rank_[r].params));
        after = Collective(GroupCollectiveKind::kAllReduce, ReduceOp::kSum, slices, after,
                           {"avg s" + s, "local SGD: the average of every rank's parameters after step " + s, true});
      }
      step_end_.push_back(std::vector<OpId>(static_cast<std::size_t>(n_)));
      for (int r = 0; r < n_; ++r) step_end_.back()[r] = after[r].empty() ? done[r] : after[r].back();
      last_ = after;
      return;
    }
    if (c_.loss_scaled()) {  // the one-element all-reduce (max) of the overflow flags
      std::vector<BufferSlice> slices;
      std::string who;
      for (int r = 0; r < n_; ++r) {
        slices.push_back(Whole(rank_[r].flag));
        if (r_.overflow_rank[static_cast<std::size_t>(k * n_ + r)]) who += (who.empty() ? "" : ",") + std::to_string(r);
      }
      const bool skip = r_.skipped[static_cast<std::size_t>(k)];
      after = Collective(GroupCollectiveKind::kAllReduce, ReduceOp::kMax, slices, after,
                         {skip ? "flag s" + s + " SKIP" : "flag s" + s,
                          skip ? "overflow flag of step " + s + ": inf/NaN on rank " + who +
                                     ", so every rank skips the update and halves the loss scale"
                               : "overflow flag of step " + s + " (max over ranks): clear, the step updates"});
      if (skip) {
        last_ = after;
        return;
      }
    }
    // The gradients, compressed or not, then the update.
    std::vector<BufferSlice> slices;
    const bool wire = rank_[0].wire != kNoBuffer;
    if (wire) {
      for (int r = 0; r < n_; ++r) {
        const std::int64_t send = c_.compression.kind == Compression::kTopK ? WireCount() / n_ : WireCount();
        after[r] = {Compute(r, Phase::kNone, -1, -1,
                            {ElementwiseCall(KernelKind::kCopy, Whole(rank_[r].grads), {},
                                             {rank_[r].wire, 0, std::min<std::int64_t>(send, psi_)}, 1,
                                             static_cast<int>(std::min<std::int64_t>(send, psi_)))},
                            after[r])};
        slices.push_back(Whole(rank_[r].wire));
      }
      ++step_;
    } else {
      for (int r = 0; r < n_; ++r) slices.push_back(Whole(rank_[r].grads));
    }
    const char* what = c_.compression.kind == Compression::kTopK ? "all-gather of every rank's top-k (index, value) pairs"
                       : c_.compression.kind == Compression::kInt8 ? "all-reduce of int8 gradients with a scale per bucket"
                       : c_.compression.kind == Compression::kFp16 || c_.loss_scaled() ? "all-reduce of the fp16 gradients"
                       : c_.compression.kind == Compression::kBf16 || c_.mixed()       ? "all-reduce of the bf16 gradients"
                                                                                        : "all-reduce of the gradients";
    after = Collective(c_.compression.kind == Compression::kTopK ? GroupCollectiveKind::kAllGather : GroupCollectiveKind::kAllReduce,
                       ReduceOp::kSum, slices, after,
                       {std::string(c_.compression.kind == Compression::kTopK ? "AG" : "AR") + " s" + s,
                        std::string(what) + " of step " + s, c_.compression.kind != Compression::kTopK});
    for (int r = 0; r < n_; ++r) {
      const RankBuffers& rb = rank_[r];
      std::vector<KernelCall> kernels;
      if (wire)
        kernels.push_back(ElementwiseCall(KernelKind::kCopy, {rb.wire, 0, std::min<std::int64_t>(WireCount(), psi_)}, {},
                                          {rb.grads, 0, std::min<std::int64_t>(WireCount(), psi_)}, 1,
                                          static_cast<int>(std::min<std::int64_t>(WireCount(), psi_))));
      const BufferId target = c_.mixed() ? rb.master : rb.params;
      kernels.push_back(ElementwiseCall(KernelKind::kAxpy, Whole(rb.grads), {}, Whole(target), 1,
                                        static_cast<int>(psi_), -c_.model.learning_rate));
      if (c_.mixed())
        kernels.push_back(ElementwiseCall(KernelKind::kCopy, Whole(rb.master), {}, Whole(rb.params), 1, static_cast<int>(psi_)));
      after[r] = {Compute(r, Phase::kOptimizer, -1, -1, kernels, after[r])};
    }
    ++step_;
    last_ = after;
  }

  const DpTrainConfig& c_;
  const DpTrainResult& r_;
  int steps_, n_;
  std::int64_t h_, psi_ = 0;
  AccumulationSplit split_;
  int b_;
  DType half_;
  PlanBuilder builder_;
  std::vector<RankBuffers> rank_;
  std::vector<BufferId> inbox_;                   // [rank]: stale-synchronous pushes, on rank 0
  std::vector<std::vector<OpId>> last_;           // [rank]: what the next step waits for
  std::vector<std::vector<OpId>> step_end_;       // [step][rank]: stale-synchronous waits
  int step_ = 0, seq_ = 0;
};

}  // namespace

DpTrainPlan BuildDpTrainPlan(const DpTrainConfig& config, const DpTrainResult& result, int steps) {
  CheckDpTrainConfig(config);
  steps = std::clamp(steps, 1, config.steps);
  return DpTrainPlanBuilder(config, result, steps).Build();
}

}  // namespace shardlab
