// The data semantics of a Plan on host memory (float32), shared by the
// simulator and by tests that need a reference executor.
//
// A transfer's data moves when its Recv completes: the Recv writes (or with
// ReduceOp::kSum adds) its matched Send's source slice into its destination.
// Reduce and Copy act on two slices of the same rank; Compute runs its
// kernels (host_kernels.h); Send carries no data of its own.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/plan/plan.h"

namespace shardlab {

struct HostBuffers {
  std::vector<std::vector<float>> data;  // indexed by BufferId

  std::span<const float> view(BufferId id) const { return data.at(id); }
};

/// Allocates every buffer of the plan; kRandom buffers are filled with
/// FillInputs(seed, init stream) times the init scale, kZero with zeros.
/// With only_rank >= 0, only that rank's buffers (a process of the mpi
/// backend); the others stay empty.
void AllocateHostBuffers(const Plan& plan, std::uint64_t seed, HostBuffers& buffers,
                         int only_rank = -1);

/// dst[i] = src[i] (kNone) or dst[i] = dst[i] (op) src[i]: what a Recv does
/// with the data it receives.
void CombineHostData(ReduceOp op, const float* src, float* dst, std::int64_t count);

/// Applies one op's effect on the data (see above).
void ApplyOpData(const Plan& plan, OpId id, HostBuffers& buffers);

/// Reference executor: applies every op in an order that respects the
/// dependencies and lane order, with a Send and its Recv run together once
/// both are ready. No timing. Throws shardlab::Error if the plan deadlocks.
void ExecutePlanInOrder(const Plan& plan, HostBuffers& buffers);

}  // namespace shardlab
