#include "engine/algorithms/elastic.h"

#include <algorithm>
#include <string>
#include <utility>

#include "engine/algorithms/group_collective.h"
#include "engine/core/error.h"
#include "engine/plan/kernel.h"

namespace shardlab {
namespace {

// Activations and data of one rank for one split of the batch.
struct RankRows {
  int rows = 0;
  BufferId input = kNoBuffer, target = kNoBuffer;
  std::vector<BufferId> z, a;          // per layer: pre-activation, ReLU output (hidden only)
  BufferId grad = kNoBuffer, spare = kNoBuffer;  // dL/d(layer output), ping-pong
};

class ElasticBuilder {
 public:
  explicit ElasticBuilder(const ElasticParams& p)
      : p_(p), m_(p.model), h_(p.model.width),
        builder_("elastic data parallel, " + std::to_string(p.ranks) + " ranks, " +
                     std::to_string(p.steps) + " steps, rank " + std::to_string(p.fail_rank) +
                     " fails in step " + std::to_string(p.fail_step),
                 p.ranks) {}

  ElasticPlan Build() {
    ElasticPlan out;
    out.params = p_;
    psi_ = MlpParameterCount(m_);
    for (int r = 0; r < p_.ranks; ++r) out.ranks_before.push_back(r);
    for (int r = 0; r < p_.ranks; ++r)
      if (r != p_.fail_rank || p_.replace) out.ranks_after.push_back(r);
    writer_ = p_.fail_rank == 0 ? 1 : 0;
    out.writer = writer_;
    restart_from_ = p_.fail_step / p_.checkpoint_every * p_.checkpoint_every;
    out.restart_from = restart_from_;
    out.lost_steps = p_.fail_step - restart_from_;
    AllocateParams();
    const std::vector<RankRows> before = AllocateRows(out.ranks_before, "");
    const std::vector<RankRows> after = AllocateRows(out.ranks_after, ".after");

    // Checkpoint 0: the initial parameters.
    std::vector<OpId> last(static_cast<std::size_t>(p_.ranks), kNoOp);
    Checkpoint(0, {}, out);
    Mark(ElasticRole::kCheckpoint);
    last[static_cast<std::size_t>(writer_)] = out.checkpoints.back().op;

    // Before the failure: steps 0 .. S−1 on every rank (those from the
    // restart point on are lost), then the survivors' share of step S.
    for (int t = 0; t < p_.fail_step; ++t) {
      const bool lost = t >= restart_from_;
      TrainStep(t, out.ranks_before, before, last, lost, /*partial=*/false);
      Mark(lost ? ElasticRole::kLost : ElasticRole::kTrain);
      if ((t + 1) % p_.checkpoint_every == 0) {
        Checkpoint(t + 1, {last[static_cast<std::size_t>(writer_)]}, out);
        Mark(lost ? ElasticRole::kLost : ElasticRole::kCheckpoint);
        last[static_cast<std::size_t>(writer_)] = out.checkpoints.back().op;
      }
    }
    std::vector<int> survivors;
    for (int r : out.ranks_before)
      if (r != p_.fail_rank) survivors.push_back(r);
    TrainStep(p_.fail_step, survivors, before, last, /*lost=*/true, /*partial=*/true);
    Mark(ElasticRole::kLost);

    // Recovery: the writer copies the checkpoint back into its parameters
    // and sends them to every other rank of the job that goes on.
    out.used_checkpoint = 0;
    for (std::size_t i = 0; i < out.checkpoints.size(); ++i)
      if (out.checkpoints[i].after_steps == restart_from_) out.used_checkpoint = static_cast<int>(i);
    const ElasticCheckpoint& ck = out.checkpoints[static_cast<std::size_t>(out.used_checkpoint)];
    // Detection: the writer reloads once every survivor has stopped.
    std::vector<OpId> stopped;
    for (int r : survivors) stopped.push_back(last[static_cast<std::size_t>(r)]);
    stopped.push_back(ck.op);
    out.reload_step = step_;
    out.reload = CopyParams(writer_, ck.buffer, /*into_params=*/true, stopped,
                            Note("reload ckpt " + std::to_string(restart_from_),
                                 "reload: the checkpoint after step " + std::to_string(restart_from_) +
                                     " copied back into the parameters (the restart)"));
    ++step_;
    Mark(ElasticRole::kReload);
    last[static_cast<std::size_t>(writer_)] = out.reload;
    const int send_step = step_++;
    for (int r : out.ranks_after) {
      if (r == writer_) continue;
      const int seq = Note("re-shard", std::string("re-shard: the restored parameters to a rank of the ") +
                                           (p_.replace && r == p_.fail_rank ? "replacement"
                                                                            : "shrunk job"));
      std::vector<OpId> recvs;
      const ElasticRankParams& from = params_[static_cast<std::size_t>(writer_)];
      const ElasticRankParams& to = params_[static_cast<std::size_t>(r)];
      const OpId before_r = last[static_cast<std::size_t>(r)];
      std::vector<OpId> recv_deps;
      if (before_r != kNoOp) recv_deps.push_back(before_r);
      for (int l = 0; l < m_.layers; ++l) {
        for (int which = 0; which < 2; ++which) {
          const BufferId src = which == 0 ? from.weights[l] : from.biases[l];
          const BufferId dst = which == 0 ? to.weights[l] : to.biases[l];
          const std::int64_t count = which == 0 ? std::int64_t{h_} * h_ : h_;
          OpTags tags;
          tags.layer = l;
          const auto tr = builder_.AddTransfer(writer_, r, {src, 0, count}, {dst, 0, count},
                                               ReduceOp::kNone, send_step, tags, {out.reload},
                                               recv_deps, seq);
          recvs.push_back(tr.recv);
          out.reshard_bytes += count * 4;
        }
      }
      last[static_cast<std::size_t>(r)] = recvs.back();
    }
    Mark(ElasticRole::kReshard);

    // The redone steps and the rest, on the ranks that go on.
    for (int t = restart_from_; t < p_.steps; ++t) {
      TrainStep(t, out.ranks_after, after, last, /*lost=*/false, /*partial=*/false, /*redone=*/t < p_.fail_step + 1);
      Mark(ElasticRole::kTrain);
    }
    out.checkpoint_bytes = psi_ * 4;
    out.params_of = params_;
    out.plan = builder_.Finish();
    out.roles = roles_;
    return out;
  }

 private:
  int Note(std::string tag, std::string what) {
    const int seq = seq_++;
    builder_.NoteCollective(seq, CollectiveNote{std::move(tag), std::move(what), false});
    return seq;
  }

  void Mark(ElasticRole role) { roles_.resize(builder_.op_count(), role); }

  void AllocateParams() {
    params_.resize(static_cast<std::size_t>(p_.ranks));
    for (int r = 0; r < p_.ranks; ++r) {
      ElasticRankParams& rp = params_[static_cast<std::size_t>(r)];
      for (int l = 0; l < m_.layers; ++l) {
        Buffer w = MlpInitBuffer(r, "w" + std::to_string(l), m_, MlpTensor::kWeight, l, std::int64_t{h_} * h_);
        w.category = MemoryCategory::kParameters;
        rp.weights.push_back(builder_.AddBuffer(w));
        Buffer b = MlpInitBuffer(r, "b" + std::to_string(l), m_, MlpTensor::kBias, l, h_);
        b.category = MemoryCategory::kParameters;
        rp.biases.push_back(builder_.AddBuffer(b));
      }
      Buffer g;
      g.name = "grads";
      g.rank = r;
      g.count = psi_;
      g.category = MemoryCategory::kGradients;
      grads_.push_back(builder_.AddBuffer(g));
    }
  }

  std::vector<RankRows> AllocateRows(const std::vector<int>& ranks, const std::string& suffix) {
    std::vector<RankRows> rows(static_cast<std::size_t>(p_.ranks));
    const int n = static_cast<int>(ranks.size());
    const int per = m_.batch / n;
    for (int i = 0; i < n; ++i) {
      const int r = ranks[static_cast<std::size_t>(i)];
      RankRows& rr = rows[static_cast<std::size_t>(r)];
      rr.rows = per;
      const std::int64_t act = std::int64_t{per} * h_;
      Buffer in = MlpInitBuffer(r, "input" + suffix, m_, MlpTensor::kInput, 0, act);
      in.init_offset = std::int64_t{i} * act;  // this rank's rows of the batch
      rr.input = builder_.AddBuffer(in);
      Buffer target = MlpInitBuffer(r, "target" + suffix, m_, MlpTensor::kTarget, 0, act);
      target.init_offset = std::int64_t{i} * act;
      rr.target = builder_.AddBuffer(target);
      for (int l = 0; l < m_.layers; ++l) {
        rr.z.push_back(Activation(r, "z" + std::to_string(l) + suffix, act));
        rr.a.push_back(l + 1 < m_.layers ? Activation(r, "a" + std::to_string(l) + suffix, act) : kNoBuffer);
      }
      rr.grad = Activation(r, "dy" + suffix, act);
      rr.spare = Activation(r, "dx" + suffix, act);
    }
    return rows;
  }

  BufferId Activation(int rank, const std::string& name, std::int64_t count) {
    Buffer b;
    b.name = name;
    b.rank = rank;
    b.count = count;
    b.category = MemoryCategory::kActivations;
    return builder_.AddBuffer(b);
  }

  std::int64_t WeightOffset(int layer) const { return std::int64_t{layer} * (std::int64_t{h_} * h_ + h_); }
  std::int64_t BiasOffset(int layer) const { return WeightOffset(layer) + std::int64_t{h_} * h_; }

  // Copies every parameter tensor of `rank` into (or, into_params, out of)
  // the flat checkpoint buffer.
  OpId CopyParams(int rank, BufferId flat, bool into_params, const std::vector<OpId>& deps, int seq) {
    const ElasticRankParams& rp = params_[static_cast<std::size_t>(rank)];
    std::vector<KernelCall> kernels;
    for (int l = 0; l < m_.layers; ++l) {
      const std::int64_t hh = std::int64_t{h_} * h_;
      BufferSlice w{rp.weights[l], 0, hh}, b{rp.biases[l], 0, h_};
      BufferSlice fw{flat, WeightOffset(l), hh}, fb{flat, BiasOffset(l), h_};
      kernels.push_back(ElementwiseCall(KernelKind::kCopy, into_params ? fw : w, {}, into_params ? w : fw, 1,
                                        static_cast<int>(hh)));
      kernels.push_back(ElementwiseCall(KernelKind::kCopy, into_params ? fb : b, {}, into_params ? b : fb, 1, h_));
    }
    Op op;
    op.kind = OpKind::kCompute;
    op.rank = rank;
    op.step = step_;
    op.collective_seq = seq;
    std::vector<OpId> d;
    for (OpId id : deps)
      if (id != kNoOp) d.push_back(id);
    return builder_.AddCompute(op, kernels, d);
  }

  void Checkpoint(int after_steps, const std::vector<OpId>& deps, ElasticPlan& out) {
    Buffer flat;
    flat.name = "ckpt" + std::to_string(after_steps);
    flat.rank = writer_;
    flat.count = psi_;
    flat.category = MemoryCategory::kOther;
    ElasticCheckpoint ck;
    ck.after_steps = after_steps;
    ck.buffer = builder_.AddBuffer(flat);
    ck.plan_step = step_;
    const bool lost = after_steps > restart_from_;
    ck.op = CopyParams(writer_, ck.buffer, /*into_params=*/false, deps,
                       Note("ckpt " + std::to_string(after_steps) + (lost ? " lost" : ""),
                            "checkpoint: the parameters after step " + std::to_string(after_steps) +
                                " copied out for the checkpoint file" +
                                (lost ? " (taken after the restart point: never used)" : "")));
    ++step_;
    out.checkpoints.push_back(ck);
  }

  // One training step of `ranks` (the batch split over them); `last[r]` is
  // what rank r's step waits for, and becomes its step's last op. A
  // partial step (the failure's) stops after the backward.
  void TrainStep(int t, const std::vector<int>& ranks, const std::vector<RankRows>& rows,
                 std::vector<OpId>& last, bool lost, bool partial, bool redone = false) {
    const std::string s = std::to_string(t);
    const std::string why = lost ? (partial ? " (lost: rank " + std::to_string(p_.fail_rank) +
                                                  " failed during this step)"
                                            : " (lost: after the checkpoint the job restarts from)")
                                 : redone ? " (redone after the restart)" : "";
    const std::string mark = lost ? " lost" : redone ? " redo" : "";
    const int f_seq = Note("F s" + s + mark, "forward of training step " + s + why);
    const int b_seq = Note("B s" + s + mark, "loss gradient and backward of training step " + s + why);
    std::vector<OpId> backward;
    for (int r : ranks) {
      const RankRows& rr = rows[static_cast<std::size_t>(r)];
      const ElasticRankParams& rp = params_[static_cast<std::size_t>(r)];
      const int b = rr.rows;
      const std::int64_t act = std::int64_t{b} * h_;
      std::vector<KernelCall> fwd;
      BufferSlice x{rr.input, 0, act};
      for (int l = 0; l < m_.layers; ++l) {
        const BufferSlice z{rr.z[l], 0, act};
        fwd.push_back(MatMulCall(x, {rp.weights[l], 0, std::int64_t{h_} * h_}, z, b, h_, h_));
        fwd.push_back(ElementwiseCall(KernelKind::kAddBias, {rp.biases[l], 0, h_}, {}, z, b, h_));
        if (l + 1 < m_.layers) {
          const BufferSlice a{rr.a[l], 0, act};
          fwd.push_back(ElementwiseCall(KernelKind::kRelu, z, {}, a, b, h_));
          x = a;
        } else {
          x = z;
        }
      }
      Op f;
      f.kind = OpKind::kCompute;
      f.rank = r;
      f.step = step_;
      f.collective_seq = f_seq;
      f.tags.phase = Phase::kForward;
      std::vector<OpId> deps;
      if (last[static_cast<std::size_t>(r)] != kNoOp) deps.push_back(last[static_cast<std::size_t>(r)]);
      const OpId f_id = builder_.AddCompute(f, fwd, deps);

      std::vector<KernelCall> bwd;
      BufferSlice grad{rr.grad, 0, act}, spare{rr.spare, 0, act};
      bwd.push_back(ElementwiseCall(KernelKind::kMseGrad, x, {rr.target, 0, act}, grad, b, h_,
                                    1.0f / static_cast<float>(m_.batch)));
      for (int l = m_.layers - 1; l >= 0; --l) {
        const BufferSlice z{rr.z[l], 0, act};
        if (l + 1 < m_.layers) {
          bwd.push_back(ElementwiseCall(KernelKind::kReluBackward, grad, z, spare, b, h_));
          std::swap(grad, spare);
        }
        const BufferSlice in = l == 0 ? BufferSlice{rr.input, 0, act} : BufferSlice{rr.a[l - 1], 0, act};
        KernelCall dw = MatMulCall(in, grad, {grads_[static_cast<std::size_t>(r)], WeightOffset(l),
                                              std::int64_t{h_} * h_},
                                   h_, h_, b);
        dw.transpose_a = true;
        bwd.push_back(dw);
        bwd.push_back(ElementwiseCall(KernelKind::kColumnSum, grad, {},
                                      {grads_[static_cast<std::size_t>(r)], BiasOffset(l), h_}, b, h_));
        if (l > 0) {
          KernelCall dx = MatMulCall(grad, {rp.weights[l], 0, std::int64_t{h_} * h_}, spare, b, h_, h_);
          dx.transpose_b = true;
          bwd.push_back(dx);
          std::swap(grad, spare);
        }
      }
      Op bo;
      bo.kind = OpKind::kCompute;
      bo.rank = r;
      bo.step = step_;
      bo.collective_seq = b_seq;
      bo.tags.phase = Phase::kBackward;
      backward.push_back(builder_.AddCompute(bo, bwd, {f_id}));
      last[static_cast<std::size_t>(r)] = backward.back();
    }
    ++step_;
    if (partial) return;

    GroupCollective g;
    g.kind = GroupCollectiveKind::kAllReduce;
    g.ranks = ranks;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      g.slices.push_back({grads_[static_cast<std::size_t>(ranks[i])], 0, psi_});
      g.after.push_back({backward[i]});
    }
    g.first_step = step_;
    g.collective_seq = ranks.size() > 1 ? Note("AR s" + s + mark, "all-reduce of training step " + s +
                                                                    "'s gradients" + why)
                                        : -1;
    const GroupCollectiveOps ar = AppendGroupCollective(builder_, g);
    step_ += ar.steps;

    const int o_seq = Note("opt s" + s + mark, "SGD update of training step " + s + why);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const int r = ranks[i];
      const ElasticRankParams& rp = params_[static_cast<std::size_t>(r)];
      std::vector<KernelCall> opt;
      for (int l = 0; l < m_.layers; ++l) {
        opt.push_back(MlpOptimizerCall(m_, {rp.weights[l], 0, std::int64_t{h_} * h_},
                                       {grads_[static_cast<std::size_t>(r)], WeightOffset(l),
                                        std::int64_t{h_} * h_},
                                       {}, {}, t + 1));
        opt.push_back(MlpOptimizerCall(m_, {rp.biases[l], 0, h_},
                                       {grads_[static_cast<std::size_t>(r)], BiasOffset(l), h_}, {}, {},
                                       t + 1));
      }
      Op o;
      o.kind = OpKind::kCompute;
      o.rank = r;
      o.step = step_;
      o.collective_seq = o_seq;
      o.tags.phase = Phase::kOptimizer;
      std::vector<OpId> deps = {backward[i]};
      if (i < ar.done.size())
        for (OpId id : ar.done[i]) deps.push_back(id);
      last[static_cast<std::size_t>(r)] = builder_.AddCompute(o, opt, deps);
    }
    ++step_;
  }

  const ElasticParams& p_;
  const MlpConfig& m_;
  const int h_;
  PlanBuilder builder_;
  std::int64_t psi_ = 0;
  int writer_ = 0;
  int restart_from_ = 0;
  int step_ = 0;
  int seq_ = 0;
  std::vector<ElasticRankParams> params_;
  std::vector<BufferId> grads_;
  std::vector<ElasticRole> roles_;
};

}  // namespace

const char* ElasticRoleName(ElasticRole role) {
  switch (role) {
    case ElasticRole::kTrain: return "train";
    case ElasticRole::kCheckpoint: return "checkpoint";
    case ElasticRole::kLost: return "lost";
    case ElasticRole::kReload: return "reload";
    case ElasticRole::kReshard: return "re-shard";
  }
  return "?";
}

void CheckElasticParams(const ElasticParams& p) {
  CheckMlpConfig(p.model);
  if (p.model.optimizer != OptimizerKind::kSgd)
    throw Error("optimizer: the elastic job trains with sgd (its checkpoints hold the parameters alone)");
  if (p.ranks < 2) throw Error("ranks: an elastic job needs at least 2 ranks (got " + std::to_string(p.ranks) + ")");
  if (p.steps < 1) throw Error("steps: must be at least 1 (got " + std::to_string(p.steps) + ")");
  if (p.checkpoint_every < 1)
    throw Error("checkpoint_every: must be at least 1 (got " + std::to_string(p.checkpoint_every) + ")");
  if (p.fail_rank < 0 || p.fail_rank >= p.ranks)
    throw Error("fail_rank: rank " + std::to_string(p.fail_rank) + " is out of range (the run has " +
                std::to_string(p.ranks) + " ranks, 0.." + std::to_string(p.ranks - 1) + ")");
  if (p.fail_step < 0 || p.fail_step >= p.steps)
    throw Error("fail_rank: step " + std::to_string(p.fail_step) + " is past the run's last step (" +
                std::to_string(p.steps - 1) + ")");
  const int after = p.replace ? p.ranks : p.ranks - 1;
  if (p.model.batch % p.ranks != 0 || p.model.batch % after != 0)
    throw Error("batch: " + std::to_string(p.model.batch) + " rows do not split evenly over " +
                std::to_string(p.ranks) + " ranks and, after the failure, " + std::to_string(after) +
                " (choose a multiple of both)");
}

ElasticPlan BuildElastic(const ElasticParams& params) {
  CheckElasticParams(params);
  return ElasticBuilder(params).Build();
}

}  // namespace shardlab
