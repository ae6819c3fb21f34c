// The device side of one op, shared by the CUDA backend (every rank in one
// process) and the mpi backend's GPU mode (one rank per process): a kernel
// call (cuBLAS for products), a local copy, a combine. Each enqueues on
// `stream` without waiting and checks every call (CUDA_CHECK, naming `rank`).
#pragma once

#include <cstdint>
#include <functional>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "engine/plan/kernel.h"
#include "engine/plan/plan.h"

namespace shardlab::cuda {

/// Where a buffer slice lives on the device (its first element).
using SlicePointer = std::function<float*(const BufferSlice&)>;

/// One kernel of a compute op. `handle` is the rank's cuBLAS handle, made
/// here on its first product (null until then).
void RunKernelOnDevice(const KernelCall& call, const SlicePointer& ptr, cublasHandle_t& handle,
                       cudaStream_t stream, int rank);

/// A kCopy op; when source and destination overlap it goes through
/// `staging` (at least min(src, dst count) floats).
void CopySliceOnDevice(const Op& op, const SlicePointer& ptr, float* staging, cudaStream_t stream);

/// dst (op)= src on the device, checked.
void CombineOnDevice(ReduceOp reduce, const float* src, float* dst, std::int64_t count,
                     cudaStream_t stream, int rank);

}  // namespace shardlab::cuda
