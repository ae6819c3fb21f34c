#include "engine/backends/cuda/device_ops.h"

#include <algorithm>

#include "engine/backends/cuda/cuda_check.h"
#include "engine/backends/cuda/kernels.h"

namespace shardlab::cuda {
namespace {

// Row-major C[m×n] = op(A)·op(B) is column-major C^T = op(B)^T·op(A)^T:
// the same storage read the other way, so B comes first and no data moves.
void MatMul(const KernelCall& call, const SlicePointer& ptr, cublasHandle_t& handle,
            cudaStream_t stream, int rank) {
  if (call.m == 0 || call.n == 0) return;
  const int lda = call.lda > 0 ? call.lda : (call.transpose_a ? call.m : call.k);
  const int ldb = call.ldb > 0 ? call.ldb : (call.transpose_b ? call.k : call.n);
  const int ldc = call.ldc > 0 ? call.ldc : call.n;
  if (handle == nullptr) CUBLAS_CHECK(cublasCreate(&handle), rank);
  CUBLAS_CHECK(cublasSetStream(handle, stream), rank);
  const float alpha = 1.0f;
  const float beta = call.accumulate ? 1.0f : 0.0f;
  if (call.k == 0) {  // C = 0 (or unchanged): cuBLAS treats k = 0 as beta·C
    if (!call.accumulate)
      CUDA_CHECK(cudaMemset2DAsync(ptr(call.c), static_cast<std::size_t>(ldc) * sizeof(float), 0,
                                   static_cast<std::size_t>(call.n) * sizeof(float),
                                   static_cast<std::size_t>(call.m), stream),
                 rank);
    return;
  }
  CUBLAS_CHECK(cublasSgemm(handle, call.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                           call.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, call.n, call.m, call.k,
                           &alpha, ptr(call.b), ldb, ptr(call.a), lda, &beta, ptr(call.c), ldc),
               rank);
}

}  // namespace

void RunKernelOnDevice(const KernelCall& call, const SlicePointer& ptr, cublasHandle_t& handle,
                       cudaStream_t stream, int rank) {
  switch (call.kind) {
    case KernelKind::kMatMul: MatMul(call, ptr, handle, stream, rank); return;
    case KernelKind::kCopy:
      if (call.n > 0)
        CUDA_CHECK(cudaMemcpyAsync(ptr(call.c), ptr(call.a),
                                   static_cast<std::size_t>(call.n) * sizeof(float),
                                   cudaMemcpyDeviceToDevice, stream),
                   rank);
      return;
    default: {
      auto at = [&](const BufferSlice& s) { return s.valid() ? ptr(s) : nullptr; };
      LaunchElementwise(call, at(call.a), at(call.b), at(call.c), at(call.d), stream);
      CUDA_CHECK(cudaGetLastError(), rank);
    }
  }
}

void CopySliceOnDevice(const Op& op, const SlicePointer& ptr, float* staging, cudaStream_t stream) {
  const std::int64_t count = std::min(op.src.count, op.dst.count);
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(float);
  if (bytes == 0) return;
  const bool overlap = op.src.buffer == op.dst.buffer && op.src.offset < op.dst.offset + count &&
                       op.dst.offset < op.src.offset + count;
  if (overlap) {  // memmove through the rank's staging buffer
    CUDA_CHECK(cudaMemcpyAsync(staging, ptr(op.src), bytes, cudaMemcpyDeviceToDevice, stream),
               op.rank);
    CUDA_CHECK(cudaMemcpyAsync(ptr(op.dst), staging, bytes, cudaMemcpyDeviceToDevice, stream),
               op.rank);
    return;
  }
  CUDA_CHECK(cudaMemcpyAsync(ptr(op.dst), ptr(op.src), bytes, cudaMemcpyDeviceToDevice, stream),
             op.rank);
}

void CombineOnDevice(ReduceOp reduce, const float* src, float* dst, std::int64_t count,
                     cudaStream_t stream, int rank) {
  LaunchCombine(reduce, src, dst, count, stream);
  CUDA_CHECK(cudaGetLastError(), rank);
}

}  // namespace shardlab::cuda
