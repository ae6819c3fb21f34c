// All-reduce: every rank ends with the reduction of every rank's buffer
// (in place, "data"). nccl-tests: all_reduce_perf, busbw = algbw·2(n-1)/n.
//
//   ring   2(n-1) steps: n-1 of reduce-scatter, n-1 of all-gather (ring.cpp)
//   tree   K + 2d - 1 steps for K pieces per tree, depth d = floor(log2 n):
//          d steps up, d down, pipelined (tree.cpp)
//   nccl   ncclAllReduce
//   n = 1  nothing moves: 0 steps
#include "engine/algorithms/collective_cost.h"
#include "engine/algorithms/collective_internal.h"
#include "engine/algorithms/double_binary_tree.h"

namespace shardlab {

namespace {

int RingSteps(const CollectiveParams& p) { return p.ranks == 1 ? 0 : 2 * (p.ranks - 1); }

int TreeSteps(const CollectiveParams& p) {
  if (p.ranks == 1) return 0;
  return detail::TreePieces(p) + 2 * DoubleBinaryTreeDepth(p.ranks) - 1;
}

// Each step moves a piece of M/(2K) along every tree edge; the busiest
// rank (inner in one tree, leaf in the other) sends about four of them.
CollectiveCost TreeCost(const CollectiveParams& p, TimeNs alpha, Gbps b) {
  const double m = static_cast<double>(CollectiveSizeBytes(p));
  const int steps = ExpectedSteps(p);
  const int depth = DoubleBinaryTreeDepth(p.ranks);
  const int pieces = steps - 2 * depth + 1;
  const double per_step_bytes = 2.0 * m / pieces;
  CollectiveCost cost;
  cost.ns = steps * (alpha + per_step_bytes / b);
  cost.formula = "estimate S·(α + 2M/(K·B)), S = K + 2d - 1 = " + std::to_string(pieces) + " + " +
                 std::to_string(2 * depth) + " - 1 steps: " + std::to_string(steps) + "·(" +
                 FormatTime(alpha) + " + " + FormulaBytes(per_step_bytes) + " / " +
                 FormulaGbps(b) + ") = " + FormatTime(cost.ns);
  return cost;
}

}  // namespace

void RegisterCollective_all_reduce() {
  CollectiveDef d;
  d.kind = CollectiveKind::kAllReduce;
  d.name = "allreduce";
  d.title = "all-reduce";
  d.tag = "AR";
  d.nccl_tests = "all_reduce_perf";
  d.busbw_factor = [](int n) { return 2.0 * (n - 1.0) / n; };
  d.busbw_formula = "2(n-1)/n";
  d.reduces = true;
  d.algos = {
      {CollectiveAlgo::kRing, detail::BuildRingAllReduce, RingSteps,
       [](const CollectiveParams& p) -> std::int64_t {
         const std::int64_t n = p.ranks;
         return 4 * n * (n - 1);
       },
       [](const CollectiveParams& p, TimeNs alpha, Gbps b) {
         return CollectiveCostWithTotal(RingStepsCost(p, alpha, b, /*twice=*/true));
       },
       /*two_passes=*/true},
      {CollectiveAlgo::kTree, detail::BuildTreeAllReduce, TreeSteps,
       [](const CollectiveParams& p) -> std::int64_t {
         return 8 * static_cast<std::int64_t>(detail::TreePieces(p)) * (p.ranks - 1);
       },
       TreeCost, /*two_passes=*/true},
  };
  d.input = detail::WholeInput;
  d.final_contributors = [](const CollectiveParams& p, int, int) { return detail::AllRanks(p.ranks); };
  d.reference = [](const CollectiveParams& p, ReferenceSink& out) {
    for (int r = 0; r < p.ranks; ++r) out.Reduced(r, 0, p.count);
  };
  d.library = LibraryCollective::kAllReduce;
  d.nccl_phase = Phase::kNone;  // the labels name it by its note
  RegisterCollective(std::move(d));
}

}  // namespace shardlab
