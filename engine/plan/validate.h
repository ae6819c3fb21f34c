// Plan validation: rejects what a backend could not execute, with a message
// that names the op ("op 17 (rank 3, send->4): no matching recv").
#pragma once

#include <string>

#include "engine/plan/plan.h"

namespace shardlab {

/// Throws shardlab::Error (kInvalidInput) on the first problem found:
/// ranks or peers out of range, a dependency on a missing op, a cycle,
/// a Send/Recv without its partner (or with a partner that disagrees on
/// ranks or bytes), slices outside their buffer or on another rank.
void ValidatePlan(const Plan& plan);

/// "op 17 (rank 3, send->4)" — how errors and dumps name an op.
std::string DescribeOp(const Plan& plan, OpId id);

}  // namespace shardlab
