// NCCL matches a communicator's calls by their order on each rank: every
// rank must issue its collectives in one order. The mpi backend's --device
// gpu starts ops as they become ready, so that order holds only when each
// rank's collectives are ordered by the plan's dependencies.
#pragma once

#include "engine/plan/op_graph.h"
#include "engine/plan/plan.h"

namespace shardlab {

/// Throws Error (kInvalidInput) naming the rank and both ops when a rank
/// has two kCollective ops where the one with the lower collective_seq does
/// not come first along `graph` (the plan's dependencies and lane order).
void CheckNcclCallOrder(const Plan& plan, const OpGraph& graph);

}  // namespace shardlab
