// NCCL for the "nccl" algorithm: one communicator per run, made with
// ncclCommInitAll over the ranks' GPUs (one process, one GPU per rank), and
// one collective launched for every rank inside one ncclGroupStart/End, as
// NCCL requires when a single thread drives several GPUs.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <cuda_runtime.h>

#include "engine/plan/plan.h"

namespace shardlab::cuda {

/// One rank's part of a collective call.
struct NcclRankCall {
  int rank = 0;
  LibraryCollective call = LibraryCollective::kNone;
  ReduceOp reduce = ReduceOp::kSum;
  int root = 0;
  void* src = nullptr;        // the op's src slice on the rank's GPU
  void* dst = nullptr;        // its dst slice (== src in place)
  DType dtype = DType::kF32;  // the buffers' dtype (ncclFloat, ncclHalf, ncclBfloat16)
  std::int64_t count = 0;     // elements of the rank's buffer
  cudaStream_t stream = nullptr;
};

class NcclCommunicators {
 public:
  /// Throws Error "NCCL needs one GPU per rank: 4 ranks, 1 GPU" when ranks
  /// share a GPU, or "this build has no NCCL" when it was built without.
  static std::unique_ptr<NcclCommunicators> Create(const std::vector<int>& rank_gpus,
                                                   int device_count);
  virtual ~NcclCommunicators() = default;
  /// Enqueues every rank's part of one collective (one group).
  virtual void Launch(const std::vector<NcclRankCall>& calls) = 0;
};

}  // namespace shardlab::cuda
