#include "engine/plan/host_kernels.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace shardlab {
namespace {

float* Data(std::vector<std::vector<float>>& buffers, const BufferSlice& s) {
  return buffers[s.buffer].data() + s.offset;
}

// C[m×n] (+)= op(A)[m×k]·op(B)[k×n], row-major with row strides lda, ldb,
// ldc (0: packed); op(A) = A^T reads A as [k×m]. Each layout gets a loop
// order that walks memory contiguously.
void MatMul(const KernelCall& call, const float* a, const float* b, float* c) {
  const std::int64_t m = call.m, n = call.n, k = call.k;
  const std::int64_t lda = call.lda > 0 ? call.lda : (call.transpose_a ? m : k);
  const std::int64_t ldb = call.ldb > 0 ? call.ldb : (call.transpose_b ? k : n);
  const std::int64_t ldc = call.ldc > 0 ? call.ldc : n;
  auto a_at = [&](std::int64_t i, std::int64_t p) {
    return call.transpose_a ? a[p * lda + i] : a[i * lda + p];
  };
  if (!call.accumulate)
    for (std::int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
  if (call.transpose_b) {  // B stored [n×k]: c[i][j] += dot(row i of op(A), row j of B)
    std::vector<float> a_row(static_cast<std::size_t>(k));
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t p = 0; p < k; ++p) a_row[p] = a_at(i, p);
      for (std::int64_t j = 0; j < n; ++j) {
        const float* b_row = b + j * ldb;
        float sum = 0.0f;
        for (std::int64_t p = 0; p < k; ++p) sum += a_row[p] * b_row[p];
        c[i * ldc + j] += sum;
      }
    }
    return;
  }
  for (std::int64_t p = 0; p < k; ++p) {  // rank-1 updates: row p of B into every row of C
    const float* b_row = b + p * ldb;
    for (std::int64_t i = 0; i < m; ++i) {
      const float a_ip = a_at(i, p);
      float* c_row = c + i * ldc;
      for (std::int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
}

void Adam(const KernelCall& call, const float* grad, float* param, float* m1, float* m2) {
  const double t = call.adam_step;
  const float correct1 = static_cast<float>(1.0 - std::pow(static_cast<double>(call.beta1), t));
  const float correct2 = static_cast<float>(1.0 - std::pow(static_cast<double>(call.beta2), t));
  for (std::int64_t i = 0; i < call.n; ++i) {
    m1[i] = call.beta1 * m1[i] + (1.0f - call.beta1) * grad[i];
    m2[i] = call.beta2 * m2[i] + (1.0f - call.beta2) * grad[i] * grad[i];
    const float m_hat = m1[i] / correct1;
    const float v_hat = m2[i] / correct2;
    param[i] -= call.alpha * m_hat / (std::sqrt(v_hat) + call.epsilon);
  }
}

// Rows of c = softmax(alpha·a), with the row maximum subtracted first.
void Softmax(std::int64_t rows, std::int64_t cols, float alpha, const float* a, float* c) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* in = a + i * cols;
    float* out = c + i * cols;
    float top = -INFINITY;
    for (std::int64_t j = 0; j < cols; ++j) top = std::max(top, alpha * in[j]);
    float sum = 0.0f;
    for (std::int64_t j = 0; j < cols; ++j) {
      out[j] = std::exp(alpha * in[j] - top);
      sum += out[j];
    }
    for (std::int64_t j = 0; j < cols; ++j) out[j] /= sum;
  }
}

// Mean and 1/sqrt(var + epsilon) of one row.
std::pair<float, float> RowStats(const float* x, std::int64_t cols, float epsilon) {
  float mean = 0.0f, var = 0.0f;
  for (std::int64_t j = 0; j < cols; ++j) mean += x[j];
  mean /= static_cast<float>(cols);
  for (std::int64_t j = 0; j < cols; ++j) var += (x[j] - mean) * (x[j] - mean);
  return {mean, 1.0f / std::sqrt(var / static_cast<float>(cols) + epsilon)};
}

// dX = rstd·(dY − mean(dY) − x̂·mean(dY·x̂)) per row; c may alias a.
void LayerNormBackward(std::int64_t rows, std::int64_t cols, float epsilon, const float* dy,
                       const float* x, float* dx) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* xr = x + i * cols;
    const float* dyr = dy + i * cols;
    const auto [mean, rstd] = RowStats(xr, cols, epsilon);
    float mean_dy = 0.0f, mean_dy_xh = 0.0f;
    for (std::int64_t j = 0; j < cols; ++j) {
      mean_dy += dyr[j];
      mean_dy_xh += dyr[j] * (xr[j] - mean) * rstd;
    }
    mean_dy /= static_cast<float>(cols);
    mean_dy_xh /= static_cast<float>(cols);
    float* out = dx + i * cols;
    for (std::int64_t j = 0; j < cols; ++j)
      out[j] = rstd * (dyr[j] - mean_dy - (xr[j] - mean) * rstd * mean_dy_xh);
  }
}

}  // namespace

void RunHostKernel(const KernelCall& call, std::vector<std::vector<float>>& buffers) {
  const std::int64_t rows = call.m, cols = call.n, elements = rows * cols;
  float* c = Data(buffers, call.c);
  const float* a = call.a.valid() ? Data(buffers, call.a) : nullptr;
  const float* b = call.b.valid() ? Data(buffers, call.b) : nullptr;
  switch (call.kind) {
    case KernelKind::kMatMul: MatMul(call, a, b, c); break;
    case KernelKind::kAddBias:
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) c[i * cols + j] += a[j];
      break;
    case KernelKind::kRelu:
      for (std::int64_t i = 0; i < elements; ++i) c[i] = std::max(a[i], 0.0f);
      break;
    case KernelKind::kReluBackward:
      for (std::int64_t i = 0; i < elements; ++i) c[i] = b[i] > 0.0f ? a[i] : 0.0f;
      break;
    case KernelKind::kColumnSum:
      if (!call.accumulate) std::fill(c, c + cols, 0.0f);
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) c[j] += a[i * cols + j];
      break;
    case KernelKind::kMseGrad:
      for (std::int64_t i = 0; i < elements; ++i) c[i] = call.alpha * (a[i] - b[i]);
      break;
    case KernelKind::kMseLoss: {
      double sum = 0;
      for (std::int64_t i = 0; i < elements; ++i) {
        const double diff = static_cast<double>(a[i]) - b[i];
        sum += diff * diff;
      }
      c[0] += static_cast<float>(call.alpha * sum);
      break;
    }
    case KernelKind::kAxpy:
      for (std::int64_t i = 0; i < cols; ++i) c[i] += call.alpha * a[i];
      break;
    case KernelKind::kAdam:
      Adam(call, a, c, Data(buffers, call.b), Data(buffers, call.d));
      break;
    case KernelKind::kSoftmax: Softmax(rows, cols, call.alpha, a, c); break;
    case KernelKind::kSoftmaxBackward:
      for (std::int64_t i = 0; i < rows; ++i) {
        const float* dp = a + i * cols;
        const float* p = b + i * cols;
        float dot = 0.0f;
        for (std::int64_t j = 0; j < cols; ++j) dot += dp[j] * p[j];
        float* out = c + i * cols;
        for (std::int64_t j = 0; j < cols; ++j) out[j] = call.alpha * p[j] * (dp[j] - dot);
      }
      break;
    case KernelKind::kLayerNorm:
      for (std::int64_t i = 0; i < rows; ++i) {
        const auto [mean, rstd] = RowStats(a + i * cols, cols, call.epsilon);
        for (std::int64_t j = 0; j < cols; ++j) c[i * cols + j] = (a[i * cols + j] - mean) * rstd;
      }
      break;
    case KernelKind::kLayerNormBackward: LayerNormBackward(rows, cols, call.epsilon, a, b, c); break;
    case KernelKind::kCopy: std::copy(a, a + cols, c); break;
  }
}

}  // namespace shardlab
