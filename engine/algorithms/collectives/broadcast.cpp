// Broadcast: every rank ends with the root's "data". nccl-tests:
// broadcast_perf, busbw = algbw·1.
//
//   ring   a chain along the ring from the root: n pieces over n-1 hops,
//          2(n-1) steps (ring.cpp)
//   nccl   ncclBroadcast
#include "engine/algorithms/collective_cost.h"
#include "engine/algorithms/collective_internal.h"

namespace shardlab {

void RegisterCollective_broadcast() {
  CollectiveDef d;
  d.kind = CollectiveKind::kBroadcast;
  d.name = "broadcast";
  d.title = "broadcast";
  d.tag = "BC";
  d.nccl_tests = "broadcast_perf";
  d.busbw_factor = [](int) { return 1.0; };
  d.busbw_formula = "1";
  d.root = RootRole::kSource;
  d.algos = {
      {CollectiveAlgo::kRing, detail::BuildRingBroadcast,
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
  d.input = [](const CollectiveParams& p, int rank, std::int64_t count) {
    return rank == p.root ? ElementRange{0, count} : ElementRange{};
  };
  d.final_contributors = [](const CollectiveParams& p, int, int) { return std::vector<int>{p.root}; };
  d.reference = [](const CollectiveParams& p, ReferenceSink& out) {
    for (int r = 0; r < p.ranks; ++r) out.Copied(r, 0, p.count, p.root, 0);
  };
  d.library = LibraryCollective::kBroadcast;
  d.nccl_phase = Phase::kBroadcast;
  RegisterCollective(std::move(d));
}

}  // namespace shardlab
