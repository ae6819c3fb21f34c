// Kernels: the arithmetic a Compute op performs, so that training scenarios
// (pipeline, tensor parallel, ZeRO) run real numbers on every backend.
//
//   Op{kind = kCompute, kernel_begin, kernel_count} ──► Plan::kernels[begin .. begin+count)
//        e.g. "F3 on stage 1" = MatMul, AddBias, Relu, MatMul, AddBias, Relu
//
// A kernel names its operands as slices of buffers on the op's rank. Matrices
// are row-major; `m`, `n`, `k` follow BLAS: C[m×n] (+)= op(A)[m×k] · op(B)[k×n].
// The simulator applies kernels on host memory (host_kernels.h); the CUDA
// backend will launch its own kernels with the same meaning. The op's flops and
// bytes, from which backends model time, are the sum of its kernels'.
#pragma once

#include <cstdint>

#include "engine/core/units.h"
#include "engine/plan/buffer_slice.h"

namespace shardlab {

enum class KernelKind : std::uint8_t {
  kMatMul,        // c[m×n] = (c if accumulate) + op(a)[m×k]·op(b)[k×n]
  kAddBias,       // c[m×n] += a[n] on every row
  kRelu,          // c[m×n] = max(a, 0)
  kReluBackward,  // c[m×n] = a where b > 0, else 0        (a = dY, b = pre-activation)
  kColumnSum,     // c[n] = (c if accumulate) + Σ_rows a[m×n]
  kMseGrad,       // c[m×n] = alpha·(a − b)               (a = output, b = target)
  kMseLoss,       // c[0] += alpha·Σ (a − b)²            over m×n elements
  kAxpy,          // c[n] += alpha·a[n]                   (SGD: alpha = −lr)
  kAdam,          // c = params, a = grads, b = first moment, d = second moment, n elements
  kSoftmax,       // c[m×n] = softmax of each row of alpha·a
  kSoftmaxBackward,   // c[m×n] = alpha·b⊙(a − rowsum(a⊙b))   (a = dP, b = P = softmax output)
  kLayerNorm,         // c[m×n] = (a − mean)/sqrt(var + epsilon), each row; no scale or shift
  kLayerNormBackward, // c[m×n] = dX of kLayerNorm       (a = dY, b = its input X)
  kCopy,              // c[n] = a[n]  (a cast when the buffers' types differ)
};
const char* KernelKindName(KernelKind kind);

struct KernelCall {
  KernelKind kind = KernelKind::kMatMul;
  bool transpose_a = false;
  bool transpose_b = false;
  bool accumulate = false;
  std::int32_t m = 0, n = 0, k = 0;
  /// MatMul only: row strides of the stored a, b and c (0: packed, the
  /// stored row length), as BLAS's lda/ldb/ldc, so a product can read and
  /// write a column block of a wider matrix (one attention head's columns).
  std::int32_t lda = 0, ldb = 0, ldc = 0;
  BufferSlice a, b, c, d;
  float alpha = 1.0f;   // scale (MseGrad, MseLoss, Axpy) or learning rate (Adam)
  float beta1 = 0.9f;   // Adam only
  float beta2 = 0.999f;
  float epsilon = 1e-8f;  // Adam; kLayerNorm and its backward use it too
  std::int32_t adam_step = 1;  // Adam's t, for bias correction

  /// Elements each operand must span (0: unused): with a stride, from the
  /// first element to the last one read or written.
  std::int64_t a_count() const;
  std::int64_t b_count() const;
  std::int64_t c_count() const;
  std::int64_t d_count() const;
};

/// C[m×n] = A[m×k]·B[k×n]; set transpose_a/b and accumulate on the result
/// for the other forms.
KernelCall MatMulCall(BufferSlice a, BufferSlice b, BufferSlice c, int m, int n, int k);
/// Any other kind over an m×n block (operands a, b, c as the kind reads
/// them; `alpha` where it scales).
KernelCall ElementwiseCall(KernelKind kind, BufferSlice a, BufferSlice b, BufferSlice c, int m,
                           int n, float alpha = 1.0f);

/// Floating-point operations of one call (2mnk for a matrix product; one or a
/// few per element otherwise).
Flops KernelFlops(const KernelCall& call);
/// Bytes the call reads and writes in device memory, with operands of
/// `element_bytes` each (4: float32, 2: fp16).
Bytes KernelBytes(const KernelCall& call, int element_bytes = 4);

}  // namespace shardlab
