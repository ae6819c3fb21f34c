// CUDA_CHECK / CUBLAS_CHECK: every runtime and cuBLAS call goes through one
// of these. A failure throws DeviceError naming the call, file, line and
// rank ("cudaMemcpyPeerAsync(...) failed at cuda_backend.cpp:212 on rank 3:
// an illegal memory access was encountered (sticky: restart the process)").
// `rank` is -1 where the call belongs to no rank (device queries).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "engine/backends/cuda/cuda_error.h"

namespace shardlab::cuda {

/// Errors after which the context is poisoned until the process exits.
bool IsStickyCudaStatus(cudaError_t status);

[[noreturn]] void ThrowCudaError(cudaError_t status, const char* call, const char* file, int line,
                                 int rank);
[[noreturn]] void ThrowCublasError(cublasStatus_t status, const char* call, const char* file,
                                   int line, int rank);

}  // namespace shardlab::cuda

#define CUDA_CHECK(call, rank)                                                            \
  do {                                                                                    \
    const cudaError_t shardlab_status_ = (call);                                          \
    if (shardlab_status_ != cudaSuccess)                                                  \
      ::shardlab::cuda::ThrowCudaError(shardlab_status_, #call, __FILE__, __LINE__, rank); \
  } while (0)

#define CUBLAS_CHECK(call, rank)                                                            \
  do {                                                                                      \
    const cublasStatus_t shardlab_status_ = (call);                                         \
    if (shardlab_status_ != CUBLAS_STATUS_SUCCESS)                                          \
      ::shardlab::cuda::ThrowCublasError(shardlab_status_, #call, __FILE__, __LINE__, rank); \
  } while (0)
