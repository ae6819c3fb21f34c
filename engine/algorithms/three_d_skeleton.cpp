#include "engine/algorithms/three_d_skeleton.h"

#include <algorithm>
#include <tuple>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/group_collective.h"
#include "engine/algorithms/pipeline.h"
#include "engine/core/error.h"

namespace shardlab::three_d {
namespace {

class Skeleton {
 public:
  Skeleton(const SkeletonParams& params, StageModel& model)
      : p_(params), grid_(params.grid), model_(model), builder_(params.title, params.grid.ranks()) {}

  ThreeDPlan Build() {
    ThreeDPlan out;
    out.stage_first_layer = p_.stage_first_layer;
    const int ranks = grid_.ranks();
    out.tensors.resize(ranks);
    out.loss.assign(ranks, kNoBuffer);
    ready_.assign(ranks, {});
    const int m = p_.microbatches;
    recv_forward_.assign(static_cast<std::size_t>(ranks) * m, kNoOp);
    recv_backward_ = recv_forward_;
    for (int r = 0; r < ranks; ++r) {
      const GridCoord c = grid_.CoordOf(r);
      out.tensors[r] = model_.AddBuffers(builder_, r, c, p_.stage_first_layer[c.pp],
                                         p_.stage_first_layer[c.pp + 1]);
      AddMoments(r, c, out.tensors[r]);
      out.loss[r] = model_.Loss(r);
    }
    for (const ThreeDTensor& t : out.tensors[0]) out.gradient_elements_per_rank += t.count;

    const PipelineShape shape{grid_.pp, m, 1};
    const auto order = PipelineOrder(p_.schedule, shape);
    const auto ticks = PipelineSlotTicks(shape, order);
    std::vector<std::tuple<int, int, std::size_t>> slots;  // tick, stage, index
    for (int s = 0; s < grid_.pp; ++s)
      for (std::size_t i = 0; i < order[s].size(); ++i) slots.emplace_back(ticks[s][i], s, i);
    std::sort(slots.begin(), slots.end());
    // Room for the whole plan before it grows large: a paper-sized step
    // has millions of ops, and growing the plan by doubling copied it (and
    // the kernel faulted in the copies) about twice over. The slots add
    // about as many ops each; the data-parallel step is counted exactly.
    const std::size_t dp_ops = DataParallelOps(out);
    std::size_t largest_slot = 0, slots_added = 0;
    for (const auto& [tick, stage, index] : slots) {
      const std::size_t before = builder_.op_count();
      AddSlot(stage, order[stage][index]);
      largest_slot = std::max(largest_slot, builder_.op_count() - before);
      const std::size_t left = slots.size() - ++slots_added;
      const std::size_t need = builder_.op_count() + left * largest_slot + dp_ops;
      if (need > builder_.plan().ops.capacity())
        builder_.Reserve(need, builder_.plan().deps.size() + need - builder_.op_count());
    }
    builder_.Reserve(builder_.op_count() + dp_ops, builder_.plan().deps.size() + dp_ops);
    AddDataParallelStep(out);
    out.plan = builder_.Finish();
    out.collectives = std::move(collectives_);
    return out;
  }

 private:
  std::size_t At(int rank, int j) const {
    return static_cast<std::size_t>(rank) * p_.microbatches + j;
  }
  // A new collective call in group `group` of `kind` (whose ranks are
  // `ranks`), named for the labels: "TP g3" / "tensor-parallel all-reduce
  // in the forward, TP group 3 (ranks 6,7)".
  int NewSeq(GroupKind kind, int group, const std::vector<int>& ranks, const std::string& what,
             bool two_passes) {
    collectives_.push_back({kind, group});
    const int seq = static_cast<int>(collectives_.size()) - 1;
    std::string list;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (ranks.size() > 5 && i == 3) {
        list += ",..," + std::to_string(ranks.back());
        break;
      }
      list += (i ? "," : "") + std::to_string(ranks[i]);
    }
    const std::string name = std::string(GroupKindName(kind)) + " group " + std::to_string(group);
    builder_.NoteCollective(seq, {std::string(GroupKindName(kind)) + " g" + std::to_string(group),
                                  what + ", " + name + " (ranks " + list + ")", two_passes});
    return seq;
  }

  void AddMoments(int rank, GridCoord c, std::vector<ThreeDTensor>& tensors) {
    if (!model_.NeedsMoments()) return;
    for (ThreeDTensor& t : tensors) {
      // ZeRO-1 keeps the optimizer state of this rank's chunk only.
      const std::int64_t count = p_.zero_stage >= 1 ? ChunkCount(t.count, grid_.dp, c.dp) : t.count;
      for (int k = 0; k < 2; ++k) {
        Buffer b;
        b.name = std::string(k == 0 ? "adam.m." : "adam.v.") + t.name;
        b.rank = rank;
        b.count = count;
        b.dtype = model_.MomentType();
        b.category = MemoryCategory::kOptimizerStates;
        (k == 0 ? t.first_moment : t.second_moment) = builder_.AddBuffer(b);
      }
    }
  }

  OpId AddPiece(int rank, const Piece& piece, Phase phase, int stage, int j,
                const std::vector<OpId>& deps) {
    Op op;
    op.rank = rank;
    op.lane = Lane::kCompute;
    op.step = step_;
    op.flops = piece.flops;
    op.bytes = piece.bytes;
    op.dst = piece.written;
    op.tags.phase = phase;
    op.tags.microbatch = j;
    op.tags.chunk = stage;
    op.tags.layer = piece.layer;
    return builder_.AddCompute(op, piece.kernels, deps);
  }

  // One schedule slot (F or B of micro-batch j on `stage`) on every rank of the stage.
  void AddSlot(int stage, const PipelineSlot& slot) {
    const bool forward = slot.pass == PipelinePass::kForward;
    const int j = slot.microbatch;
    const Phase phase = forward ? Phase::kForward : Phase::kBackward;
    // deps[d][t]: what rank (d, stage, t)'s next op waits for.
    std::vector<std::vector<std::vector<OpId>>> deps(grid_.dp, std::vector<std::vector<OpId>>(grid_.tp));
    std::vector<std::vector<std::vector<Piece>>> pieces(grid_.dp, std::vector<std::vector<Piece>>(grid_.tp));
    for (int d = 0; d < grid_.dp; ++d)
      for (int t = 0; t < grid_.tp; ++t) {
        const int r = grid_.RankOf({d, stage, t});
        deps[d][t] = ready_[r];
        const OpId recv = forward ? recv_forward_[At(r, j)] : recv_backward_[At(r, j)];
        if (recv != kNoOp) deps[d][t].push_back(recv);
        pieces[d][t] = forward ? model_.Forward(r, j) : model_.Backward(r, j);
      }
    const std::size_t count = pieces[0][0].size();
    for (std::size_t k = 0; k < count; ++k) {
      std::vector<std::vector<OpId>> computed(grid_.dp, std::vector<OpId>(grid_.tp));
      for (int d = 0; d < grid_.dp; ++d)
        for (int t = 0; t < grid_.tp; ++t)
          computed[d][t] = AddPiece(grid_.RankOf({d, stage, t}), pieces[d][t][k], phase, stage, j,
                                    deps[d][t]);
      ++step_;
      if (!pieces[0][0][k].tp_allreduce.valid()) {
        for (int d = 0; d < grid_.dp; ++d)
          for (int t = 0; t < grid_.tp; ++t) deps[d][t] = {computed[d][t]};
        continue;
      }
      int steps = 0;
      for (int d = 0; d < grid_.dp; ++d) {
        GroupCollective c;
        c.kind = GroupCollectiveKind::kAllReduce;
        c.first_step = step_;
        c.tags.microbatch = j;
        c.tags.layer = pieces[d][0][k].layer;
        c.tags.chunk = stage;
        const RankGroups groups = grid_.GroupsOf(grid_.RankOf({d, stage, 0}));
        c.collective_seq = NewSeq(GroupKind::kTensor, groups.tp_group, groups.tp,
                                  "tensor-parallel all-reduce of layer " + std::to_string(c.tags.layer) + " in the " +
                                      (forward ? "forward" : "backward"),
                                  true);
        for (int t = 0; t < grid_.tp; ++t) {
          c.ranks.push_back(groups.tp[t]);
          c.slices.push_back(pieces[d][t][k].tp_allreduce);
          c.after.push_back({computed[d][t]});
        }
        const GroupCollectiveOps ops = AppendGroupCollective(builder_, c);
        steps = ops.steps;
        for (int t = 0; t < grid_.tp; ++t) deps[d][t] = ops.done[t];
      }
      step_ += steps;
    }
    // The activation (forward) or input gradient (backward) to the
    // neighbouring stage's rank with the same (dp, tp).
    const int to_stage = forward ? stage + 1 : stage - 1;
    const bool sends = forward ? to_stage < grid_.pp : to_stage >= 0;
    for (int d = 0; d < grid_.dp; ++d)
      for (int t = 0; t < grid_.tp; ++t) {
        const int r = grid_.RankOf({d, stage, t});
        ready_[r] = deps[d][t];
        if (!sends) continue;
        const int to = grid_.RankOf({d, to_stage, t});
        OpTags tags;
        tags.phase = phase;
        tags.microbatch = j;
        tags.chunk = stage;
        const RankGroups pp = grid_.GroupsOf(r);
        const int seq = NewSeq(GroupKind::kPipeline, pp.pp_group, pp.pp,
                               forward ? "activations to the next stage" : "activation gradients to the previous stage",
                               false);
        const auto transfer =
            forward ? builder_.AddTransfer(r, to, model_.Output(r, j), model_.Input(to, j),
                                           ReduceOp::kNone, step_, tags, deps[d][t], {}, seq)
                    : builder_.AddTransfer(r, to, model_.InputGrad(r, j), model_.OutputGrad(to, j),
                                           ReduceOp::kNone, step_, tags, deps[d][t], {}, seq);
        (forward ? recv_forward_ : recv_backward_)[At(to, j)] = transfer.recv;
      }
    if (sends) ++step_;
  }

  // The ops AddDataParallelStep adds: the optimizer's, and per DP group and
  // tensor two ring passes (the all-reduce, or ZeRO-1's reduce-scatter and
  // all-gather) of n(n-1) transfers, 2 ops each. Deps: as many at most.
  std::size_t DataParallelOps(const ThreeDPlan& out) const {
    const std::size_t n = static_cast<std::size_t>(grid_.dp);
    std::size_t ops = static_cast<std::size_t>(grid_.ranks());  // the optimizer
    if (n == 1 || p_.skip_dp_reduce) return ops;
    const std::size_t per_pass = 2 * n * (n - 1);
    for (const auto& group : grid_.DpGroups())
      ops += out.tensors[group[0]].size() * 2 * per_pass;
    return ops;
  }

  // Gradients over each DP group (same stage and tp index), then the
  // optimizer; ZeRO-1: reduce-scatter, update the own chunk, all-gather.
  void AddDataParallelStep(ThreeDPlan& out) {
    const bool zero1 = p_.zero_stage >= 1;
    const int n = grid_.dp;
    int max_steps = 0;
    // After the gradient collectives: done[rank] = what the optimizer waits for.
    std::vector<std::vector<OpId>> reduced(grid_.ranks());
    const int first_step = step_;
    for (const auto& group : grid_.DpGroups()) {
      const std::size_t tensors = out.tensors[group[0]].size();
      std::vector<std::vector<OpId>> after(n);
      for (int i = 0; i < n; ++i) after[i] = ready_[group[i]];
      int step = first_step;
      for (std::size_t k = 0; k < tensors && !p_.skip_dp_reduce; ++k) {
        GroupCollective c;
        c.kind = zero1 ? GroupCollectiveKind::kReduceScatter : GroupCollectiveKind::kAllReduce;
        c.ranks = group;
        c.after = after;
        c.first_step = step;
        c.tags.layer = out.tensors[group[0]][k].layer;
        c.collective_seq = NewSeq(GroupKind::kData, grid_.GroupsOf(group[0]).dp_group, group,
                                  std::string(zero1 ? "reduce-scatter" : "all-reduce") + " of the gradients of " +
                                      out.tensors[group[0]][k].name,
                                  !zero1);
        for (int i = 0; i < n; ++i) {
          const ThreeDTensor& t = out.tensors[group[i]][k];
          c.slices.push_back({t.grad, 0, t.count});
        }
        const GroupCollectiveOps ops = AppendGroupCollective(builder_, c);
        step += ops.steps;
        for (int i = 0; i < n; ++i)
          reduced[group[i]].insert(reduced[group[i]].end(), ops.done[i].begin(), ops.done[i].end());
      }
      for (int i = 0; i < n; ++i)
        if (reduced[group[i]].empty()) reduced[group[i]] = after[i];
      max_steps = std::max(max_steps, step - first_step);
    }
    step_ = first_step + max_steps;
    std::vector<OpId> updated(grid_.ranks());
    for (int r = 0; r < grid_.ranks(); ++r) {
      const GridCoord c = grid_.CoordOf(r);
      Piece all;
      for (const ThreeDTensor& t : out.tensors[r]) {
        const std::int64_t begin = zero1 ? ChunkBegin(t.count, n, c.dp) : 0;
        const std::int64_t count = zero1 ? ChunkCount(t.count, n, c.dp) : t.count;
        if (count == 0) continue;
        const bool moments = t.first_moment != kNoBuffer;
        const Piece piece = model_.Optimizer(
            t, {t.param, begin, count}, {t.grad, begin, count},
            moments ? BufferSlice{t.first_moment, 0, count} : BufferSlice{},
            moments ? BufferSlice{t.second_moment, 0, count} : BufferSlice{});
        all.kernels.insert(all.kernels.end(), piece.kernels.begin(), piece.kernels.end());
        all.flops += piece.flops;
        all.bytes += piece.bytes;
        if (!all.written.valid()) all.written = piece.written;
      }
      updated[r] = AddPiece(r, all, Phase::kOptimizer, c.pp, -1, reduced[r]);
    }
    ++step_;
    if (!zero1 || p_.skip_dp_reduce) return;
    for (const auto& group : grid_.DpGroups()) {
      int step = step_;
      std::vector<std::vector<OpId>> after(n);
      for (int i = 0; i < n; ++i) after[i] = {updated[group[i]]};
      for (std::size_t k = 0; k < out.tensors[group[0]].size(); ++k) {
        GroupCollective c;
        c.kind = GroupCollectiveKind::kAllGather;
        c.ranks = group;
        c.after = after;
        c.first_step = step;
        c.tags.layer = out.tensors[group[0]][k].layer;
        c.collective_seq = NewSeq(GroupKind::kData, grid_.GroupsOf(group[0]).dp_group, group,
                                  "all-gather of the updated " + out.tensors[group[0]][k].name, false);
        for (int i = 0; i < n; ++i) {
          const ThreeDTensor& t = out.tensors[group[i]][k];
          c.slices.push_back({t.param, 0, t.count});
        }
        step += AppendGroupCollective(builder_, c).steps;
      }
    }
  }

  const SkeletonParams& p_;
  const ParallelGrid grid_;
  StageModel& model_;
  PlanBuilder builder_;
  int step_ = 0;
  std::vector<std::vector<OpId>> ready_;               // by rank
  std::vector<OpId> recv_forward_, recv_backward_;     // [rank][micro-batch]
  std::vector<ThreeDCollectiveInfo> collectives_;
};

}  // namespace

ThreeDPlan BuildSkeleton(const SkeletonParams& params, StageModel& model) {
  return Skeleton(params, model).Build();
}

}  // namespace shardlab::three_d
