// How the CUDA backend lays a Plan out in device memory, as plain C++ (no
// CUDA headers) so that tests without a GPU can check it.
//
//   Buffer{count, dtype}  ──►  device bytes = DTypeBytes(dtype) × count
//   fp32 buffer  ──► float storage     fp16 ──► IEEE binary16    bf16 ──► bfloat16
//
// A 16-bit buffer is 16-bit on the GPU: a transfer moves what the plan says
// it moves (Op::bytes). Arithmetic on 16-bit data runs in fp32 and is
// stored back in the dtype: matrix products on tensor cores with fp32
// accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F); element-wise kernels
// read their 16-bit operands into a per-rank fp32 scratch, run the float
// kernel, and round the operands they write back into the dtype.
//
// The host keeps float mirrors (what BufferData returns); upload packs them
// into the dtype's bits (rounded as verify/bounds.h's RoundTo rounds, to
// nearest even), download unpacks them exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/plan/plan.h"

namespace shardlab::cuda {

/// Bytes of one element of `dtype` on the device: 4, 2, 2.
std::size_t DeviceElementBytes(DType dtype);

/// Bytes a buffer occupies on the device: DTypeBytes(dtype) × count.
std::size_t DeviceBufferBytes(const Buffer& buffer);

/// Bytes the device copies for a Send into its Recv: min(src, dst count)
/// elements of the source buffer's dtype (a transfer between buffers of two
/// dtypes is a cast: the source's bytes cross the link).
std::size_t TransferDeviceBytes(const Plan& plan, const Op& send);

/// How a matrix product runs: cublasSgemm on fp32 operands; cublasGemmEx
/// on tensor cores (fp32 accumulation) when A and B share a 16-bit dtype
/// and C is that dtype or fp32; otherwise the 16-bit operands are staged
/// in fp32 and multiplied with Sgemm.
enum class GemmPath : std::uint8_t { kSgemm, kTensorCore, kStaged };
GemmPath ChooseGemm(DType a, DType b, DType c);

/// One region of a kernel's fp32 scratch: elements [begin, end) of a
/// 16-bit buffer, at `scratch_offset` floats into the scratch. The kernel
/// writes [written_begin, written_end) of it (empty: nothing), and only
/// that range is converted back: the rest of the buffer may belong to
/// ops on other streams.
struct StagedRegion {
  BufferId buffer = kNoBuffer;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t scratch_offset = 0;
  std::int64_t written_begin = 0;
  std::int64_t written_end = 0;
  bool written() const { return written_end > written_begin; }
};

/// The 16-bit operand ranges a kernel call stages in fp32 (one region per
/// buffer, the union of its operands' spans; none for kCopy, and none for a
/// product on the tensor-core or Sgemm path). Empty when every operand is
/// fp32.
std::vector<StagedRegion> StagedRegions(const Plan& plan, const KernelCall& call);

/// Floats of scratch a call needs (the sum of its regions).
std::int64_t StagingFloats(const std::vector<StagedRegion>& regions);

/// The scratch each rank needs: the largest StagingFloats of its calls
/// (the backend keeps one scratch per stream, sized the same way).
std::vector<std::int64_t> ScratchFloatsPerRank(const Plan& plan);

/// float ↔ dtype storage on the host. Pack rounds to nearest even (inf
/// past the largest finite value); Unpack is exact. kF32 copies.
void PackDType(DType dtype, std::span<const float> values, void* out);
void UnpackDType(DType dtype, const void* in, std::span<float> values);
/// One fp16 / bf16 value's bits.
std::uint16_t HalfBits(float value);
std::uint16_t Bf16Bits(float value);
float HalfValue(std::uint16_t bits);
float Bf16Value(std::uint16_t bits);

}  // namespace shardlab::cuda
