#include "engine/backends/cuda/device_ops.h"

#include <algorithm>
#include <string>

#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/kernels.h"
#include "engine/core/error.h"

namespace shardlab::cuda {
namespace {

cudaDataType_t CudaType(DType dtype) {
  switch (dtype) {
    case DType::kF16: return CUDA_R_16F;
    case DType::kBF16: return CUDA_R_16BF;
    case DType::kF32: break;
  }
  return CUDA_R_32F;
}

char* At(void* base, std::int64_t elements, DType dtype) {
  return static_cast<char*>(base) + static_cast<std::size_t>(elements) * DeviceElementBytes(dtype);
}

// Where an operand lives for the kernel: its own storage when it is fp32
// (or not staged), else its place in the rank's fp32 scratch.
struct Operands {
  const SlicePointer& ptr;
  const std::vector<StagedRegion>& regions;
  float* scratch;

  void* operator()(const BufferSlice& s) const {
    if (!s.valid()) return nullptr;
    for (const StagedRegion& r : regions)
      if (r.buffer == s.buffer) return scratch + r.scratch_offset + (s.offset - r.begin);
    return ptr(s).ptr;
  }
  // The region's first element in its buffer, as a slice.
  DeviceSlice Home(const StagedRegion& r) const { return ptr(BufferSlice{r.buffer, r.begin, r.end - r.begin}); }
};

// Row-major C[m×n] = op(A)·op(B) is column-major C^T = op(B)^T·op(A)^T:
// the same storage read the other way, so B comes first and no data moves.
// fp32 operands: Sgemm; 16-bit A and B: GemmEx on tensor cores with fp32
// accumulation (CUBLAS_COMPUTE_32F; alpha and beta are floats), C stored in
// its own dtype.
void MatMul(const KernelCall& call, const Operands& in, cublasHandle_t& handle, cudaStream_t stream,
            int rank) {
  if (call.m == 0 || call.n == 0) return;
  const int lda = call.lda > 0 ? call.lda : (call.transpose_a ? call.m : call.k);
  const int ldb = call.ldb > 0 ? call.ldb : (call.transpose_b ? call.k : call.n);
  const int ldc = call.ldc > 0 ? call.ldc : call.n;
  const DeviceSlice a = in.ptr(call.a), b = in.ptr(call.b), c = in.ptr(call.c);
  const GemmPath path = ChooseGemm(a.dtype, b.dtype, c.dtype);
  if (handle == nullptr) CUBLAS_CHECK(cublasCreate(&handle), rank);
  CUBLAS_CHECK(cublasSetStream(handle, stream), rank);
  const float alpha = 1.0f;
  const float beta = call.accumulate ? 1.0f : 0.0f;
  if (call.k == 0) {  // C = 0 (or unchanged): cuBLAS treats k = 0 as beta·C
    // Staged: C's scratch is written back by the caller, so clear that.
    const std::size_t element = path == GemmPath::kStaged ? sizeof(float) : DeviceElementBytes(c.dtype);
    if (!call.accumulate)
      CUDA_CHECK(cudaMemset2DAsync(in(call.c), static_cast<std::size_t>(ldc) * element, 0,
                                   static_cast<std::size_t>(call.n) * element,
                                   static_cast<std::size_t>(call.m), stream),
                 rank);
    return;
  }
  const cublasOperation_t op_b = call.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = call.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (path == GemmPath::kTensorCore) {
    CUBLAS_CHECK(cublasGemmEx(handle, op_b, op_a, call.n, call.m, call.k, &alpha, b.ptr,
                              CudaType(b.dtype), ldb, a.ptr, CudaType(a.dtype), lda, &beta, c.ptr,
                              CudaType(c.dtype), ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 rank);
    return;
  }
  // Sgemm, on the operands' own storage or (staged) their fp32 copies.
  CUBLAS_CHECK(cublasSgemm(handle, op_b, op_a, call.n, call.m, call.k, &alpha,
                           static_cast<const float*>(in(call.b)), ldb,
                           static_cast<const float*>(in(call.a)), lda, &beta,
                           static_cast<float*>(in(call.c)), ldc),
               rank);
}

}  // namespace

void RunKernelOnDevice(const KernelCall& call, const SlicePointer& ptr, cublasHandle_t& handle,
                       cudaStream_t stream, int rank, const std::vector<StagedRegion>& regions,
                       float* scratch) {
  if (call.kind == KernelKind::kCopy) {
    if (call.n <= 0) return;
    const DeviceSlice from = ptr(call.a), to = ptr(call.c);
    if (from.dtype == to.dtype) {
      CUDA_CHECK(cudaMemcpyAsync(to.ptr, from.ptr,
                                 static_cast<std::size_t>(call.n) * DeviceElementBytes(from.dtype),
                                 cudaMemcpyDeviceToDevice, stream),
                 rank);
    } else {  // a cast: fp32 master weights into their fp16 working copy
      CombineOnDevice(ReduceOp::kNone, from, to, call.n, stream, rank);
    }
    return;
  }
  if (!regions.empty() && scratch == nullptr)
    throw Error("rank " + std::to_string(rank) + ": a " + KernelKindName(call.kind) +
                    " on 16-bit data has no fp32 scratch",
                ErrorKind::kRuntime);
  const Operands in{ptr, regions, scratch};
  // 16-bit operands into fp32 (every region: a written one may be read too).
  for (const StagedRegion& r : regions) {
    LaunchToFloat(in.Home(r).dtype, in.Home(r).ptr, scratch + r.scratch_offset, r.end - r.begin, stream);
    CUDA_CHECK(cudaGetLastError(), rank);
  }
  if (call.kind == KernelKind::kMatMul) {
    MatMul(call, in, handle, stream, rank);
  } else {
    LaunchElementwise(call, static_cast<const float*>(in(call.a)),
                      static_cast<const float*>(in(call.b)), static_cast<float*>(in(call.c)),
                      static_cast<float*>(in(call.d)), stream);
    CUDA_CHECK(cudaGetLastError(), rank);
  }
  // What the kernel wrote (only that: the rest of a buffer may be another
  // stream's), rounded back into its dtype.
  for (const StagedRegion& r : regions) {
    if (!r.written()) continue;
    const DeviceSlice home = in.ptr(BufferSlice{r.buffer, r.written_begin, r.written_end - r.written_begin});
    LaunchFromFloat(home.dtype, scratch + r.scratch_offset + (r.written_begin - r.begin), home.ptr,
                    r.written_end - r.written_begin, stream);
    CUDA_CHECK(cudaGetLastError(), rank);
  }
}

void CopySliceOnDevice(const Op& op, const SlicePointer& ptr, void* staging, cudaStream_t stream) {
  const std::int64_t count = std::min(op.src.count, op.dst.count);
  if (count <= 0) return;
  const DeviceSlice from = ptr(op.src), to = ptr(op.dst);
  const std::size_t bytes = static_cast<std::size_t>(count) * DeviceElementBytes(from.dtype);
  const bool overlap = op.src.buffer == op.dst.buffer && op.src.offset < op.dst.offset + count &&
                       op.dst.offset < op.src.offset + count;
  if (overlap) {  // memmove through the rank's staging buffer (one buffer: one dtype)
    CUDA_CHECK(cudaMemcpyAsync(staging, from.ptr, bytes, cudaMemcpyDeviceToDevice, stream), op.rank);
    CUDA_CHECK(cudaMemcpyAsync(to.ptr, staging, bytes, cudaMemcpyDeviceToDevice, stream), op.rank);
    return;
  }
  if (from.dtype != to.dtype) {
    CombineOnDevice(ReduceOp::kNone, from, to, count, stream, op.rank);
    return;
  }
  CUDA_CHECK(cudaMemcpyAsync(to.ptr, from.ptr, bytes, cudaMemcpyDeviceToDevice, stream), op.rank);
}

void CombineOnDevice(ReduceOp reduce, const float* src, float* dst, std::int64_t count,
                     cudaStream_t stream, int rank) {
  LaunchCombine(reduce, src, dst, count, stream);
  CUDA_CHECK(cudaGetLastError(), rank);
}

void CombineOnDevice(ReduceOp reduce, DeviceSlice src, DeviceSlice dst, std::int64_t count,
                     cudaStream_t stream, int rank) {
  LaunchCombineTyped(reduce, src.dtype, src.ptr, dst.dtype, dst.ptr, count, stream);
  CUDA_CHECK(cudaGetLastError(), rank);
}

}  // namespace shardlab::cuda
