// The device side of one op, shared by the CUDA backend (every rank in one
// process) and the mpi backend's GPU mode (one rank per process): a kernel
// call (cuBLAS for products), a local copy, a combine. Each enqueues on
// `stream` without waiting and checks every call (CUDA_CHECK, naming `rank`).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "engine/backends/cuda/device_layout.h"
#include "engine/plan/kernel.h"
#include "engine/plan/plan.h"

namespace shardlab::cuda {

/// Where a buffer slice lives on the device (its first element) and the
/// dtype its buffer is stored in there.
struct DeviceSlice {
  void* ptr = nullptr;
  DType dtype = DType::kF32;
};
using SlicePointer = std::function<DeviceSlice(const BufferSlice&)>;

/// One kernel of a compute op. `handle` is the rank's cuBLAS handle, made
/// here on its first product (null until then). 16-bit operands
/// (device_layout.h): products on tensor cores (cublasGemmEx, fp32
/// accumulation) where the dtypes allow, else through `scratch`, the
/// rank's fp32 scratch of at least StagingFloats(regions) floats, with
/// `regions` = StagedRegions(plan, call) (empty when every operand is fp32).
void RunKernelOnDevice(const KernelCall& call, const SlicePointer& ptr, cublasHandle_t& handle,
                       cudaStream_t stream, int rank,
                       const std::vector<StagedRegion>& regions = {}, float* scratch = nullptr);

/// A kCopy op (a cast when the two buffers' dtypes differ); when source
/// and destination overlap it goes through `staging` (at least min(src,
/// dst count) elements of the source's dtype).
void CopySliceOnDevice(const Op& op, const SlicePointer& ptr, void* staging, cudaStream_t stream);

/// dst (op)= src on the device, checked.
void CombineOnDevice(ReduceOp reduce, const float* src, float* dst, std::int64_t count,
                     cudaStream_t stream, int rank);
/// The same for slices in any dtypes (reduced in fp32, stored in dst's).
void CombineOnDevice(ReduceOp reduce, DeviceSlice src, DeviceSlice dst, std::int64_t count,
                     cudaStream_t stream, int rank);

}  // namespace shardlab::cuda
