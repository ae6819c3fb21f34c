// OpGraph: the successor lists of a Plan in compressed form (CSR), with the
// implicit edges made explicit: an op also waits for the op before it on
// the same rank and lane (lanes are in-order queues, like CUDA streams).
// Validation, the reference executor and the simulator all walk this graph.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/plan/plan.h"

namespace shardlab {

struct OpGraph {
  std::vector<std::uint32_t> succ_begin;  // size ops+1; succ[succ_begin[i] .. succ_begin[i+1])
  std::vector<OpId> succ;
  std::vector<std::int32_t> pred_count;   // explicit deps + lane predecessor

  const OpId* successors_begin(OpId id) const { return succ.data() + succ_begin[id]; }
  const OpId* successors_end(OpId id) const { return succ.data() + succ_begin[id + 1]; }
};

/// Builds the graph. Assumes ranks, lanes and dep ids are in range
/// (ValidatePlan checks them first).
OpGraph BuildOpGraph(const Plan& plan);

}  // namespace shardlab
