// Reduce-scatter: rank r ends with chunk r of the reduction of every
// rank's buffer (in place, in chunk r of "data"; the rest is not part of
// the result). nccl-tests: reduce_scatter_perf, busbw = algbw·(n-1)/n.
//
//   ring   n-1 steps (ring.cpp)
//   nccl   ncclReduceScatter (equal chunks: the count must divide by n)
#include "engine/algorithms/collective_cost.h"
#include "engine/algorithms/collective_internal.h"

namespace shardlab {

void RegisterCollective_reduce_scatter() {
  CollectiveDef d;
  d.kind = CollectiveKind::kReduceScatter;
  d.name = "reducescatter";
  d.title = "reduce-scatter";
  d.tag = "RS";
  d.nccl_tests = "reduce_scatter_perf";
  d.busbw_factor = [](int n) { return (n - 1.0) / n; };
  d.busbw_formula = "(n-1)/n";
  d.reduces = true;
  d.algos = {
      {CollectiveAlgo::kRing, detail::BuildRingReduceScatter,
       [](const CollectiveParams& p) { return p.ranks - 1; },
       [](const CollectiveParams& p) -> std::int64_t {
         const std::int64_t n = p.ranks;
         return 2 * n * (n - 1);
       },
       [](const CollectiveParams& p, TimeNs alpha, Gbps b) {
         return CollectiveCostWithTotal(RingStepsCost(p, alpha, b, /*twice=*/false));
       }},
  };
  d.input = detail::WholeInput;
  d.final_contributors = [](const CollectiveParams& p, int rank, int chunk) {
    return chunk == rank ? detail::AllRanks(p.ranks) : std::vector<int>{};
  };
  d.reference = [](const CollectiveParams& p, ReferenceSink& out) {
    for (int r = 0; r < p.ranks; ++r) {
      const std::int64_t begin = ChunkBegin(p.count, p.ranks, r);
      out.Reduced(r, begin, begin + ChunkCount(p.count, p.ranks, r));
    }
  };
  d.library = LibraryCollective::kReduceScatter;
  d.nccl_phase = Phase::kReduceScatter;
  d.nccl_equal_chunks = true;
  RegisterCollective(std::move(d));
}

}  // namespace shardlab
