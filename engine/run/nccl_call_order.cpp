#include "engine/run/nccl_call_order.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace shardlab {
namespace {

// Whether `early` is reached from `late` through dependencies. `seen`
// (sized to the plan's ops) marks the ops visited by this search.
bool DependsOn(const Plan& plan, OpId late, OpId early, std::vector<char>& seen) {
  std::fill(seen.begin(), seen.end(), 0);
  std::vector<OpId> stack{late};
  while (!stack.empty()) {
    const OpId id = stack.back();
    stack.pop_back();
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    for (const OpId* d = plan.deps_begin(op); d != plan.deps_end(op); ++d) {
      if (*d == early) return true;
      if (*d < 0 || *d >= static_cast<OpId>(seen.size()) || seen[*d]) continue;
      seen[*d] = 1;
      stack.push_back(*d);
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

void CheckNcclCallOrder(const Plan& plan) {
  std::vector<std::vector<OpId>> per_rank(static_cast<std::size_t>(std::max(plan.num_ranks, 0)));
  for (OpId id = 0; id < static_cast<OpId>(plan.ops.size()); ++id) {
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    if (op.kind == OpKind::kCollective && op.rank >= 0 && op.rank < plan.num_ranks)
      per_rank[static_cast<std::size_t>(op.rank)].push_back(id);
  }
  std::vector<char> seen(plan.ops.size(), 0);
  for (std::size_t rank = 0; rank < per_rank.size(); ++rank) {
    std::vector<OpId>& calls = per_rank[rank];
    std::stable_sort(calls.begin(), calls.end(), [&plan](OpId a, OpId b) {
      return plan.ops[static_cast<std::size_t>(a)].collective_seq <
             plan.ops[static_cast<std::size_t>(b)].collective_seq;
    });
    // Consecutive pairs suffice: dependency order is transitive.
    for (std::size_t k = 1; k < calls.size(); ++k) {
      if (DependsOn(plan, calls[k], calls[k - 1], seen)) continue;
      throw Error("rank " + std::to_string(rank) + ": " + Describe(plan, calls[k]) +
                      " does not depend on " + Describe(plan, calls[k - 1]) +
                      "; NCCL needs every rank to issue its calls in one order, so --algo nccl "
                      "on --backend mpi needs each rank's collectives ordered by dependencies",
                  ErrorKind::kInvalidInput);
    }
  }
}

}  // namespace shardlab
