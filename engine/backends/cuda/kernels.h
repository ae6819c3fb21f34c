// Host-callable launchers of the CUDA backend's kernels (kernels.cu). Each
// has the meaning of its host twin in engine/plan/host_kernels.cpp or
// host_data.cpp and enqueues on `stream` without synchronizing; launch
// errors are picked up by the caller's CUDA_CHECK(cudaGetLastError()).
//
// Element-wise kernels do the host loop's arithmetic in the same order
// (compiled with --fmad=false), so their results match the simulator bit
// for bit; row reductions (softmax, layer norm, MSE loss) use one thread per
// row walking the row in the host's order, with the GPU's own expf/sqrtf,
// which may differ from the host's in the last bit.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "engine/plan/kernel.h"
#include "engine/core/op_kinds.h"

namespace shardlab::cuda {

/// dst[i] = dst[i] (op) src[i]; op kNone copies. src may live on another
/// GPU when peer access is enabled (it is read through unified addressing).
void LaunchCombine(ReduceOp op, const float* src, float* dst, std::int64_t count,
                   cudaStream_t stream);

/// The same with each side in its own dtype: values are read into fp32,
/// combined in fp32 and stored rounded to nearest even in dst's dtype
/// (kNone: a cast). fp32 on both sides is LaunchCombine.
void LaunchCombineTyped(ReduceOp op, DType src_type, const void* src, DType dst_type, void* dst,
                        std::int64_t count, cudaStream_t stream);

/// Every kernel kind but kMatMul (cuBLAS) and kCopy (a memcpy): `a`, `b`,
/// `c`, `d` point at the operands' first elements (null when unused).
void LaunchElementwise(const KernelCall& call, const float* a, const float* b, float* c, float* d,
                       cudaStream_t stream);

/// Conversions between float32 and the 16-bit types (round to nearest even).
void LaunchFloatToHalf(const float* src, void* dst, std::int64_t count, cudaStream_t stream);
void LaunchHalfToFloat(const void* src, float* dst, std::int64_t count, cudaStream_t stream);
void LaunchFloatToBf16(const float* src, void* dst, std::int64_t count, cudaStream_t stream);
void LaunchBf16ToFloat(const void* src, float* dst, std::int64_t count, cudaStream_t stream);
/// dst = src as float / src rounded into `dtype` (kF32: a copy).
void LaunchToFloat(DType dtype, const void* src, float* dst, std::int64_t count, cudaStream_t stream);
void LaunchFromFloat(DType dtype, const float* src, void* dst, std::int64_t count,
                     cudaStream_t stream);
/// dst = src rounded to `dtype` and back (identity for kF32).
void LaunchRoundTo(DType dtype, const float* src, float* dst, std::int64_t count,
                   cudaStream_t stream);

/// Holds `stream` for `ns` nanoseconds of the GPU's global timer with one
/// thread of one block, so other streams keep the rest of the GPU: how link
/// emulation makes a transfer last as long as the modelled link would.
void LaunchSpin(std::uint64_t ns, cudaStream_t stream);

/// Writes the GPU's %globaltimer (ns) into `*slot` when the stream gets
/// there: how ops are timed inside a CUDA graph.
void LaunchStamp(unsigned long long* slot, cudaStream_t stream);

/// dst[i] = value (benchmarks and calibration).
void LaunchFill(float* dst, std::int64_t count, float value, cudaStream_t stream);

}  // namespace shardlab::cuda
