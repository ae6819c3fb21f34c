// One rank's part of a collective as NCCL calls, and NCCL_CHECK. Included
// only by code compiled with NCCL (nccl_collective.cpp; the mpi backend's
// GPU mode), since it includes <nccl.h>.
#pragma once

#include <nccl.h>

#include "engine/backends/cuda/nccl_collective.h"

namespace shardlab::cuda {

/// Throws DeviceError naming the call, file, line and rank (-1: none), with
/// NCCL's last error text; sticky when a CUDA failure under NCCL poisoned
/// the context.
[[noreturn]] void ThrowNcclError(ncclResult_t status, const char* call, const char* file, int line,
                                 int rank);

/// Enqueues `c` on `comm` (a communicator of `ranks` ranks), on c.stream.
/// In-place reduce-scatter and all-gather use rank c.rank's chunk.
void EnqueueNcclCall(const NcclRankCall& c, ncclComm_t comm, int ranks);

}  // namespace shardlab::cuda

#define NCCL_CHECK(call, rank)                                                             \
  do {                                                                                     \
    const ncclResult_t shardlab_status_ = (call);                                          \
    if (shardlab_status_ != ncclSuccess)                                                   \
      ::shardlab::cuda::ThrowNcclError(shardlab_status_, #call, __FILE__, __LINE__, rank); \
  } while (0)
