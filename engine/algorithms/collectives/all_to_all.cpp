// All-to-all: block j of rank i's "send" lands in block i of rank j's
// "recv", blocks of count/n elements (the last count % n take no part and
// stay zero in "recv", as in nccl-tests). nccl-tests: alltoall_perf,
// busbw = algbw·(n-1)/n.
//
//   direct  every pair exchanges directly: max(n-1, 1) steps, the local
//           copy in step 0 (algorithms/all_to_all.cpp)
//   nccl    ncclAllToAll
//   n = 1   the local copy: 1 step
#include <algorithm>

#include "engine/algorithms/collective_cost.h"
#include "engine/algorithms/collective_internal.h"

namespace shardlab {

void RegisterCollective_all_to_all() {
  CollectiveDef d;
  d.kind = CollectiveKind::kAllToAll;
  d.name = "alltoall";
  d.title = "all-to-all";
  d.tag = "A2A";
  d.nccl_tests = "alltoall_perf";
  d.busbw_factor = [](int n) { return (n - 1.0) / n; };
  d.busbw_formula = "(n-1)/n";
  d.layout = CollectiveLayout::kSendRecv;
  d.chunks = ChunkCut::kBlocks;
  d.algos = {
      {CollectiveAlgo::kDirect, detail::BuildDirectAllToAll,
       [](const CollectiveParams& p) { return std::max(p.ranks - 1, 1); },
       [](const CollectiveParams& p) -> std::int64_t {
         const std::int64_t n = p.ranks;
         return 2 * n * (n - 1) + n;
       },
       [](const CollectiveParams& p, TimeNs alpha, Gbps b) {
         // Every step a permutation; the bound: one latency, (n-1)/n of M at B.
         CollectiveCost cost = CollectiveCostWithTotal(RingStepsCost(p, alpha, b, /*twice=*/false));
         const int n = p.ranks;
         const double piece = static_cast<double>(CollectiveSizeBytes(p)) / n;
         const TimeNs bound_ns = alpha + (n - 1) * piece / b;
         cost.formula += "; lower bound α + (n-1)/n·M/B = " + FormatTime(bound_ns);
         return cost;
       }},
  };
  d.input = detail::WholeInput;  // all of "send"
  d.final_contributors = [](const CollectiveParams&, int, int chunk) { return std::vector<int>{chunk}; };
  d.reference = [](const CollectiveParams& p, ReferenceSink& out) {
    const int n = p.ranks;
    const std::int64_t block = detail::AllToAllBlockCount(p.count, n);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) out.Copied(j, i * block, (i + 1) * block, i, j * block);
      out.Zero(j, n * block, p.count);  // never written
    }
  };
  d.library = LibraryCollective::kAllToAll;
  d.nccl_phase = Phase::kAllToAll;
  RegisterCollective(std::move(d));
}

}  // namespace shardlab
