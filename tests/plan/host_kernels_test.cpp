// Host kernels the tensor-parallel layers added: strided matrix products
// (one attention head's columns of a wider matrix) equal the packed product
// of the extracted block, for every transpose; softmax and LayerNorm and
// their backward passes agree with central differences of the forward.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/plan/host_kernels.h"

namespace shardlab {
namespace {

float Value(int i) { return static_cast<float>((i * 37) % 23 - 11) / 8.0f; }

std::vector<float> Filled(std::size_t n, int salt) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = Value(static_cast<int>(i) + salt);
  return v;
}

BufferSlice Slice(BufferId id, std::int64_t offset, std::int64_t count) { return {id, offset, count}; }

// rows × cols block at (r0, c0) of a matrix with `stride` columns.
std::vector<float> Extract(const std::vector<float>& a, int stride, int r0, int rows, int c0, int cols) {
  std::vector<float> out;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) out.push_back(a[(r0 + i) * stride + c0 + j]);
  return out;
}

TEST(HostKernels, StridedMatMulEqualsThePackedProductOfTheBlocks) {
  const int m = 3, n = 4, k = 5, wide = 9, c0 = 2;  // operands are column blocks of width-9 matrices
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      const int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
      std::vector<std::vector<float>> bufs = {Filled(a_rows * wide, 1), Filled(b_rows * wide, 2),
                                              std::vector<float>(m * wide, 7.0f),
                                              Extract(Filled(a_rows * wide, 1), wide, 0, a_rows, c0, a_cols),
                                              Extract(Filled(b_rows * wide, 2), wide, 0, b_rows, c0, b_cols),
                                              std::vector<float>(m * n, 0.0f)};
      KernelCall strided = MatMulCall(Slice(0, c0, (a_rows - 1) * wide + a_cols),
                                      Slice(1, c0, (b_rows - 1) * wide + b_cols),
                                      Slice(2, c0, (m - 1) * wide + n), m, n, k);
      strided.transpose_a = ta;
      strided.transpose_b = tb;
      strided.lda = strided.ldb = strided.ldc = wide;
      KernelCall packed = MatMulCall(Slice(3, 0, a_rows * a_cols), Slice(4, 0, b_rows * b_cols),
                                     Slice(5, 0, m * n), m, n, k);
      packed.transpose_a = ta;
      packed.transpose_b = tb;
      EXPECT_EQ(strided.a_count(), (a_rows - 1) * wide + a_cols);
      RunHostKernel(strided, bufs);
      RunHostKernel(packed, bufs);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < wide; ++j) {
          const bool inside = j >= c0 && j < c0 + n;
          const float want = inside ? bufs[5][i * n + j - c0] : 7.0f;  // outside the block: untouched
          EXPECT_FLOAT_EQ(bufs[2][i * wide + j], want) << ta << tb << " " << i << "," << j;
        }
    }
}

TEST(HostKernels, Fp16OperandsCountHalfTheBytes) {
  const KernelCall call = MatMulCall(Slice(0, 0, 6), Slice(1, 0, 6), Slice(2, 0, 4), 2, 2, 3);
  EXPECT_EQ(KernelBytes(call, 2) * 2, KernelBytes(call, 4));
}

// L = Σ c·g for a fixed g; the backward kernel given dC = g must equal
// the numerical gradient of L with respect to the forward's input.
void ExpectBackwardMatchesDifferences(KernelKind forward, KernelKind backward, float alpha) {
  const int rows = 2, cols = 5;
  const std::vector<float> x = Filled(rows * cols, 3), g = Filled(rows * cols, 8);
  auto run_forward = [&](const std::vector<float>& in) {
    std::vector<std::vector<float>> bufs = {in, std::vector<float>(in.size())};
    KernelCall call = ElementwiseCall(forward, Slice(0, 0, rows * cols), {}, Slice(1, 0, rows * cols), rows, cols, alpha);
    call.epsilon = 1e-5f;
    RunHostKernel(call, bufs);
    return bufs[1];
  };
  auto loss = [&](const std::vector<float>& in) {
    const std::vector<float> c = run_forward(in);
    double l = 0;
    for (std::size_t i = 0; i < c.size(); ++i) l += static_cast<double>(c[i]) * g[i];
    return l;
  };
  // Softmax's backward takes its output P; LayerNorm's takes its input X.
  const std::vector<float> saved = forward == KernelKind::kSoftmax ? run_forward(x) : x;
  std::vector<std::vector<float>> bufs = {g, saved, std::vector<float>(x.size())};
  KernelCall call = ElementwiseCall(backward, Slice(0, 0, rows * cols), Slice(1, 0, rows * cols),
                                    Slice(2, 0, rows * cols), rows, cols, alpha);
  call.epsilon = 1e-5f;
  RunHostKernel(call, bufs);
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::vector<float> plus = x, minus = x;
    const float eps = 1e-2f;
    plus[i] += eps;
    minus[i] -= eps;
    const double numeric = (loss(plus) - loss(minus)) / (2.0 * eps);
    EXPECT_NEAR(bufs[2][i], numeric, 2e-3 * std::max(1.0, std::abs(numeric)))
        << KernelKindName(backward) << " element " << i;
  }
}

TEST(HostKernels, SoftmaxBackwardIsTheGradientOfSoftmax) {
  ExpectBackwardMatchesDifferences(KernelKind::kSoftmax, KernelKind::kSoftmaxBackward, 0.5f);
}

TEST(HostKernels, LayerNormBackwardIsTheGradientOfLayerNorm) {
  ExpectBackwardMatchesDifferences(KernelKind::kLayerNorm, KernelKind::kLayerNormBackward, 1.0f);
}

TEST(HostKernels, SoftmaxRowsSumToOneAndLayerNormRowsAreStandardized) {
  std::vector<std::vector<float>> bufs = {Filled(12, 5), std::vector<float>(12), std::vector<float>(12)};
  RunHostKernel(ElementwiseCall(KernelKind::kSoftmax, Slice(0, 0, 12), {}, Slice(1, 0, 12), 3, 4, 2.0f), bufs);
  KernelCall ln = ElementwiseCall(KernelKind::kLayerNorm, Slice(0, 0, 12), {}, Slice(2, 0, 12), 3, 4);
  ln.epsilon = 1e-5f;
  RunHostKernel(ln, bufs);
  for (int r = 0; r < 3; ++r) {
    double sum = 0, mean = 0, var = 0;
    for (int j = 0; j < 4; ++j) {
      sum += bufs[1][r * 4 + j];
      mean += bufs[2][r * 4 + j] / 4.0;
    }
    for (int j = 0; j < 4; ++j) var += (bufs[2][r * 4 + j] - mean) * (bufs[2][r * 4 + j] - mean) / 4.0;
    EXPECT_NEAR(sum, 1.0, 1e-6);
    EXPECT_NEAR(mean, 0.0, 1e-6);
    EXPECT_NEAR(var, 1.0, 1e-3);
  }
}

}  // namespace
}  // namespace shardlab
