#include "engine/backends/mpi/nccl_call_order.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace shardlab {
namespace {

// Whether `late` is reached from `early` along the graph's edges (explicit
// dependencies and the in-order lane edges). `stamp`/`generation` mark the
// ops this search visited without clearing the array for every search.
bool Reaches(const OpGraph& graph, OpId early, OpId late, std::vector<std::uint32_t>& stamp,
             std::uint32_t generation) {
  std::vector<OpId> stack{early};
  stamp[static_cast<std::size_t>(early)] = generation;
  while (!stack.empty()) {
    const OpId id = stack.back();
    stack.pop_back();
    for (const OpId* s = graph.successors_begin(id); s != graph.successors_end(id); ++s) {
      if (*s == late) return true;
      if (stamp[static_cast<std::size_t>(*s)] == generation) continue;
      stamp[static_cast<std::size_t>(*s)] = generation;
      stack.push_back(*s);
    }
  }
  return false;
}

// "collective #2 (op 7, step 1)"
std::string Describe(const Plan& plan, OpId id) {
  const Op& op = plan.ops[static_cast<std::size_t>(id)];
  return "collective #" + std::to_string(op.collective_seq) + " (op " + std::to_string(id) +
         ", step " + std::to_string(op.step) + ")";
}

}  // namespace

void CheckNcclCallOrder(const Plan& plan, const OpGraph& graph) {
  std::vector<std::vector<OpId>> per_rank(static_cast<std::size_t>(std::max(plan.num_ranks, 0)));
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    if (op.kind == OpKind::kCollective && op.rank >= 0 && op.rank < plan.num_ranks)
      per_rank[static_cast<std::size_t>(op.rank)].push_back(id);
  }
  std::vector<std::uint32_t> stamp(plan.ops.size(), 0);
  std::uint32_t generation = 0;
  for (std::size_t rank = 0; rank < per_rank.size(); ++rank) {
    std::vector<OpId>& calls = per_rank[rank];
    std::stable_sort(calls.begin(), calls.end(), [&plan](OpId a, OpId b) {
      return plan.ops[static_cast<std::size_t>(a)].collective_seq <
             plan.ops[static_cast<std::size_t>(b)].collective_seq;
    });
    // Consecutive pairs suffice: dependency order is transitive.
    for (std::size_t k = 1; k < calls.size(); ++k) {
      if (Reaches(graph, calls[k - 1], calls[k], stamp, ++generation)) continue;
      throw Error("rank " + std::to_string(rank) + ": " + Describe(plan, calls[k]) +
                      " does not depend on " + Describe(plan, calls[k - 1]) +
                      "; NCCL needs every rank to issue its calls in one order, so --algo nccl "
                      "on --backend mpi needs each rank's collectives ordered by dependencies",
                  ErrorKind::kInvalidInput);
    }
  }
}

}  // namespace shardlab
