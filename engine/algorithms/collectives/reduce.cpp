// Reduce: the root ends with the reduction of every rank's "data" (the
// other ranks' buffers are not part of the result). nccl-tests:
// reduce_perf, busbw = algbw·1.
//
//   ring   a chain along the ring from the root's successor round to the
//          root: n pieces over n-1 hops, 2(n-1) steps (ring.cpp)
//   nccl   ncclReduce
#include "engine/algorithms/collective_cost.h"
#include "engine/algorithms/collective_internal.h"

namespace shardlab {

void RegisterCollective_reduce() {
  CollectiveDef d;
  d.kind = CollectiveKind::kReduce;
  d.name = "reduce";
  d.title = "reduce";
  d.tag = "R";
  d.nccl_tests = "reduce_perf";
  d.busbw_factor = [](int) { return 1.0; };
  d.busbw_formula = "1";
  d.reduces = true;
  d.root = RootRole::kSink;
  d.algos = {
      {CollectiveAlgo::kRing, detail::BuildRingReduce,
       [](const CollectiveParams& p) { return 2 * (p.ranks - 1); },
       [](const CollectiveParams& p) -> std::int64_t {
         const std::int64_t n = p.ranks;
         return 2 * n * (n - 1);
       },
       [](const CollectiveParams& p, TimeNs alpha, Gbps b) {
         return CollectiveCostWithTotal(
             RingStepsCost(p, alpha, b, /*twice=*/true, ", n pieces over n-1 hops"));
       }},
  };
  d.input = detail::WholeInput;
  d.final_contributors = [](const CollectiveParams& p, int rank, int) {
    return rank == p.root ? detail::AllRanks(p.ranks) : std::vector<int>{};
  };
  d.reference = [](const CollectiveParams& p, ReferenceSink& out) { out.Reduced(p.root, 0, p.count); };
  d.library = LibraryCollective::kReduce;
  d.nccl_phase = Phase::kReduce;
  RegisterCollective(std::move(d));
}

}  // namespace shardlab
