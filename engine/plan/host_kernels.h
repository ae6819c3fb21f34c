// Host (float32) implementations of the Plan's kernels, used by the
// simulator and by ExecutePlanInOrder. Plain loops: they serve a small model
// exactly, not a large one quickly.
#pragma once

#include <vector>

#include "engine/plan/kernel.h"

namespace shardlab {

/// Applies `call` to `buffers` (indexed by BufferId). Operands are assumed
/// valid (ValidatePlan checks them).
void RunHostKernel(const KernelCall& call, std::vector<std::vector<float>>& buffers);

}  // namespace shardlab
