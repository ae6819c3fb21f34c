#include "engine/plan/kernel.h"

namespace shardlab {

const char* KernelKindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::kMatMul: return "matmul";
    case KernelKind::kAddBias: return "add-bias";
    case KernelKind::kRelu: return "relu";
    case KernelKind::kReluBackward: return "relu-backward";
    case KernelKind::kColumnSum: return "column-sum";
    case KernelKind::kMseGrad: return "mse-grad";
    case KernelKind::kMseLoss: return "mse-loss";
    case KernelKind::kAxpy: return "axpy";
    case KernelKind::kAdam: return "adam";
    case KernelKind::kSoftmax: return "softmax";
    case KernelKind::kSoftmaxBackward: return "softmax-backward";
    case KernelKind::kLayerNorm: return "layer-norm";
    case KernelKind::kLayerNormBackward: return "layer-norm-backward";
    case KernelKind::kCopy: return "copy";
  }
  return "?";
}

KernelCall MatMulCall(BufferSlice a, BufferSlice b, BufferSlice c, int m, int n, int k) {
  KernelCall call;
  call.kind = KernelKind::kMatMul;
  call.a = a;
  call.b = b;
  call.c = c;
  call.m = m;
  call.n = n;
  call.k = k;
  return call;
}

KernelCall ElementwiseCall(KernelKind kind, BufferSlice a, BufferSlice b, BufferSlice c, int m,
                           int n, float alpha) {
  KernelCall call = MatMulCall(a, b, c, m, n, 0);
  call.kind = kind;
  call.alpha = alpha;
  return call;
}

static std::int64_t Elements(const KernelCall& call) {
  return static_cast<std::int64_t>(call.m) * call.n;
}

// Elements a stored rows × cols matrix spans with row stride ld (0: cols).
static std::int64_t Span(std::int64_t rows, std::int64_t cols, std::int32_t ld) {
  if (rows == 0 || cols == 0) return 0;
  const std::int64_t stride = ld > 0 ? ld : cols;
  return (rows - 1) * stride + cols;
}

std::int64_t KernelCall::a_count() const {
  switch (kind) {
    case KernelKind::kMatMul: return transpose_a ? Span(k, m, lda) : Span(m, k, lda);
    case KernelKind::kAddBias: return n;
    case KernelKind::kAxpy:
    case KernelKind::kCopy:
    case KernelKind::kAdam: return n;
    default: return Elements(*this);
  }
}

std::int64_t KernelCall::b_count() const {
  switch (kind) {
    case KernelKind::kMatMul: return transpose_b ? Span(n, k, ldb) : Span(k, n, ldb);
    case KernelKind::kReluBackward:
    case KernelKind::kSoftmaxBackward:
    case KernelKind::kLayerNormBackward:
    case KernelKind::kMseGrad:
    case KernelKind::kMseLoss: return Elements(*this);
    case KernelKind::kAdam: return n;
    default: return 0;
  }
}

std::int64_t KernelCall::c_count() const {
  switch (kind) {
    case KernelKind::kMatMul: return Span(m, n, ldc);
    case KernelKind::kColumnSum: return n;
    case KernelKind::kMseLoss: return 1;
    case KernelKind::kAxpy:
    case KernelKind::kCopy:
    case KernelKind::kAdam: return n;
    default: return Elements(*this);
  }
}

std::int64_t KernelCall::d_count() const { return kind == KernelKind::kAdam ? n : 0; }

Flops KernelFlops(const KernelCall& call) {
  const double elements = static_cast<double>(Elements(call));
  switch (call.kind) {
    case KernelKind::kMatMul: return 2.0 * call.m * call.n * static_cast<double>(call.k);
    case KernelKind::kMseLoss: return 3.0 * elements;
    case KernelKind::kAxpy: return 2.0 * call.n;
    case KernelKind::kAdam: return 12.0 * call.n;  // moments, bias correction, sqrt, update
    case KernelKind::kSoftmax: return 5.0 * elements;  // scale, max, exp, sum, divide
    case KernelKind::kSoftmaxBackward: return 5.0 * elements;
    case KernelKind::kLayerNorm: return 5.0 * elements;
    case KernelKind::kLayerNormBackward: return 10.0 * elements;
    case KernelKind::kCopy: return 0;
    default: return elements;
  }
}

Bytes KernelBytes(const KernelCall& call, int element_bytes) {
  // Each operand read once, the output written once (and read too when it
  // accumulates or is updated in place); a strided product touches only
  // its m×k, k×n and m×n elements.
  KernelCall packed = call;
  packed.lda = packed.ldb = packed.ldc = 0;
  std::int64_t elements = packed.a_count() + packed.b_count() + packed.c_count() + packed.d_count();
  const bool in_place = call.accumulate || call.kind == KernelKind::kAddBias ||
                        call.kind == KernelKind::kMseLoss || call.kind == KernelKind::kAxpy ||
                        call.kind == KernelKind::kAdam;
  if (in_place) elements += packed.c_count();
  if (call.kind == KernelKind::kAdam) elements += packed.b_count() + packed.d_count();
  return elements * element_bytes;
}

}  // namespace shardlab
