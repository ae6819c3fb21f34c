// All-gather: rank r's input is chunk r of its "data"; every rank ends
// with every rank's chunk in place. nccl-tests: all_gather_perf,
// busbw = algbw·(n-1)/n.
//
//   ring   n-1 steps (ring.cpp)
//   nccl   ncclAllGather (equal chunks: the count must divide by n)
#include "engine/algorithms/collective_cost.h"
#include "engine/algorithms/collective_internal.h"

namespace shardlab {

void RegisterCollective_all_gather() {
  CollectiveDef d;
  d.kind = CollectiveKind::kAllGather;
  d.name = "allgather";
  d.title = "all-gather";
  d.tag = "AG";
  d.nccl_tests = "all_gather_perf";
  d.busbw_factor = [](int n) { return (n - 1.0) / n; };
  d.busbw_formula = "(n-1)/n";
  d.algos = {
      {CollectiveAlgo::kRing, detail::BuildRingAllGather,
       [](const CollectiveParams& p) { return p.ranks - 1; },
       [](const CollectiveParams& p) -> std::int64_t {
         const std::int64_t n = p.ranks;
         return 2 * n * (n - 1);
       },
       [](const CollectiveParams& p, TimeNs alpha, Gbps b) {
         return CollectiveCostWithTotal(RingStepsCost(p, alpha, b, /*twice=*/false));
       }},
  };
  // Only the rank's own chunk is input; the rest is filled by the run.
  d.input = [](const CollectiveParams& p, int rank, std::int64_t count) {
    return ElementRange{ChunkBegin(count, p.ranks, rank), ChunkBegin(count, p.ranks, rank + 1)};
  };
  d.final_contributors = [](const CollectiveParams&, int, int chunk) { return std::vector<int>{chunk}; };
  d.reference = [](const CollectiveParams& p, ReferenceSink& out) {
    for (int r = 0; r < p.ranks; ++r) {
      for (int c = 0; c < p.ranks; ++c) {
        const std::int64_t begin = ChunkBegin(p.count, p.ranks, c);
        out.Copied(r, begin, begin + ChunkCount(p.count, p.ranks, c), c, begin);  // rank c's chunk c
      }
    }
  };
  d.library = LibraryCollective::kAllGather;
  d.nccl_phase = Phase::kAllGather;
  d.nccl_equal_chunks = true;
  RegisterCollective(std::move(d));
}

}  // namespace shardlab
