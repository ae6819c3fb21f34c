// The product bound on its own: matrix products computed in fp32, fp16 and
// bf16 (16-bit rounding emulated on the host, in several summation orders)
// stay within γ_k·|A|·|B| of the double product for random and cancelling
// inputs, and a product moved past its bound is caught.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/verify/bounds.h"
#include "engine/verify/verdict.h"

namespace shardlab {
namespace {

TEST(UnitRoundoff, OfEachDtype) {
  EXPECT_EQ(UnitRoundoff(DType::kF32), std::ldexp(1.0, -24));
  EXPECT_EQ(UnitRoundoff(DType::kF16), std::ldexp(1.0, -11));
  EXPECT_EQ(UnitRoundoff(DType::kBF16), std::ldexp(1.0, -8));
  EXPECT_NEAR(Gamma(100, 1e-3), 0.1 / 0.9, 1e-15);
  EXPECT_TRUE(std::isinf(Gamma(2048, std::ldexp(1.0, -11))));  // k·u ≥ 1: no bound
}

TEST(RoundTo, SixteenBitRoundingAsTheHardware) {
  // fp16: 11 significant bits; ties to even; 65504 the largest finite.
  EXPECT_EQ(RoundTo(DType::kF16, 1 + std::ldexp(1.0, -11)), 1.0);          // tie, to even
  EXPECT_EQ(RoundTo(DType::kF16, 1 + 3 * std::ldexp(1.0, -11)), 1 + std::ldexp(1.0, -9));  // tie, to even
  EXPECT_EQ(RoundTo(DType::kF16, 1 + std::ldexp(1.0, -10)), 1 + std::ldexp(1.0, -10));
  EXPECT_EQ(RoundTo(DType::kF16, 65504), 65504);
  EXPECT_TRUE(std::isinf(RoundTo(DType::kF16, 65520)));
  EXPECT_EQ(RoundTo(DType::kF16, std::ldexp(1.0, -24)), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(RoundTo(DType::kF16, std::ldexp(1.0, -26)), 0.0);
  // bf16: 8 significant bits, float's range.
  EXPECT_EQ(RoundTo(DType::kBF16, 1 + std::ldexp(1.0, -8)), 1.0);
  EXPECT_EQ(RoundTo(DType::kBF16, 3.0e38), RoundTo(DType::kBF16, 3.0e38));
  EXPECT_EQ(RoundTo(DType::kBF16, 257), 256);
  EXPECT_EQ(RoundTo(DType::kF32, 0.1), static_cast<double>(0.1f));
  // Every rounding is within u relative.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> dist(-100, 100);
  for (const DType d : {DType::kF16, DType::kBF16, DType::kF32})
    for (int i = 0; i < 1000; ++i) {
      const double v = dist(rng);
      EXPECT_LE(std::fabs(RoundTo(d, v) - v), UnitRoundoff(d) * std::fabs(v)) << v;
    }
}

enum class Order { kSequential, kPairwise, kBlocked };

// One dot product of `k` terms as a device would: products and partial sums
// rounded to `accumulate`, the terms' inputs already in their dtype.
double Dot(const std::vector<double>& a, const std::vector<double>& b, DType accumulate, Order order) {
  const std::size_t k = a.size();
  std::vector<double> terms(k);
  for (std::size_t p = 0; p < k; ++p) terms[p] = RoundTo(accumulate, a[p] * b[p]);
  if (order == Order::kSequential) {
    double sum = 0;
    for (const double t : terms) sum = RoundTo(accumulate, sum + t);
    return sum;
  }
  if (order == Order::kBlocked) {  // 32-wide blocks, as a GPU's warps, then the blocks in turn
    double total = 0;
    for (std::size_t b0 = 0; b0 < k; b0 += 32) {
      double block = 0;
      for (std::size_t p = b0; p < std::min(k, b0 + 32); ++p) block = RoundTo(accumulate, block + terms[p]);
      total = RoundTo(accumulate, total + block);
    }
    return total;
  }
  while (terms.size() > 1) {  // pairwise tree
    std::vector<double> next;
    for (std::size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back(RoundTo(accumulate, terms[i] + terms[i + 1]));
    if (terms.size() % 2) next.push_back(terms.back());
    terms = std::move(next);
  }
  return terms.empty() ? 0 : terms[0];
}

struct ProductCase {
  DType inputs, accumulate;
  std::int64_t m, k, n;
  bool cancelling;
};

// Random inputs in [-1, 1] rounded to the input dtype, or cancelling ones:
// each row of A holds pairs (x, x) against B's (y, −y) plus a small tail, so
// the exact product is tiny beside |A|·|B|.
void MakeInputs(const ProductCase& c, std::uint64_t seed, std::vector<double>& a, std::vector<double>& b) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  a.resize(static_cast<std::size_t>(c.m * c.k));
  b.resize(static_cast<std::size_t>(c.k * c.n));
  for (double& v : a) v = RoundTo(c.inputs, dist(rng));
  for (double& v : b) v = RoundTo(c.inputs, dist(rng));
  if (!c.cancelling) return;
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t p = 0; p + 1 < c.k - 8; p += 2) a[i * c.k + p + 1] = a[i * c.k + p];
  for (std::int64_t p = 0; p + 1 < c.k - 8; p += 2)
    for (std::int64_t j = 0; j < c.n; ++j) b[(p + 1) * c.n + j] = -b[p * c.n + j];
}

TEST(ProductBound, HoldsForEveryDtypeOrderAndInput) {
  const std::vector<ProductCase> cases = {
      {DType::kF32, DType::kF32, 8, 64, 8, false},     {DType::kF32, DType::kF32, 8, 64, 8, true},
      {DType::kF32, DType::kF32, 4, 4096, 4, false},   {DType::kF32, DType::kF32, 4, 4096, 4, true},
      {DType::kF16, DType::kF16, 8, 512, 8, false},    {DType::kF16, DType::kF16, 8, 512, 8, true},
      {DType::kBF16, DType::kBF16, 8, 64, 8, false},   {DType::kBF16, DType::kBF16, 8, 64, 8, true},
      // Tensor cores: 16-bit inputs, fp32 accumulation, k up to 4096.
      {DType::kF16, DType::kF32, 4, 4096, 4, false},   {DType::kF16, DType::kF32, 4, 4096, 4, true},
      {DType::kBF16, DType::kF32, 4, 4096, 4, false},  {DType::kBF16, DType::kF32, 4, 4096, 4, true},
  };
  for (const ProductCase& c : cases)
    for (const Order order : {Order::kSequential, Order::kPairwise, Order::kBlocked}) {
      std::vector<double> a, b;
      MakeInputs(c, 11 + c.k, a, b);
      const std::vector<double> bound = ProductBound(a, b, c.m, c.k, c.n, UnitRoundoff(c.accumulate));
      std::vector<float> got(static_cast<std::size_t>(c.m * c.n));
      std::vector<double> want(got.size());
      double worst = 0;
      for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
          std::vector<double> row(a.begin() + i * c.k, a.begin() + (i + 1) * c.k), col(static_cast<std::size_t>(c.k));
          double exact = 0;
          for (std::int64_t p = 0; p < c.k; ++p) {
            col[p] = b[p * c.n + j];
            exact += row[p] * col[p];  // products of ≤ 24-bit inputs are exact in double
          }
          const double device = Dot(row, col, c.accumulate, order);
          const std::size_t at = static_cast<std::size_t>(i * c.n + j);
          want[at] = exact;
          got[at] = static_cast<float>(device);  // 16-bit and fp32 values are exact in float
          worst = std::max(worst, std::fabs(device - exact) / bound[at]);
        }
      const std::string what = std::string(DTypeName(c.inputs)) + "/" + DTypeName(c.accumulate) + " k=" +
                               std::to_string(c.k) + (c.cancelling ? " cancelling" : " random") + " order " +
                               std::to_string(static_cast<int>(order));
      VerdictJudge judge;
      judge.Compare("C", got, want, bound);
      EXPECT_TRUE(judge.Finish().correct()) << what << ": " << judge.Finish().Text();
      EXPECT_GT(worst, 0) << what;  // the computation did round
      // Moved one step past its bound in every element: caught.
      std::vector<float> moved(got.size());
      for (std::size_t e = 0; e < got.size(); ++e) {
        const double past = want[e] + bound[e] * (1 + 1e-6) + std::fabs(want[e]) * 1e-7 + 1e-30;
        moved[e] = std::nextafter(static_cast<float>(past), INFINITY);
      }
      VerdictJudge caught;
      caught.Compare("C", moved, want, bound);
      EXPECT_EQ(caught.Finish().kind, VerdictKind::kWrong) << what;
    }
}

TEST(ProductBound, SixteenBitAccumulationPastOneOverUHasNoBound) {
  EXPECT_TRUE(std::isinf(Gamma(4096, UnitRoundoff(DType::kF16))));
  EXPECT_TRUE(std::isinf(Gamma(256, UnitRoundoff(DType::kBF16))));
  EXPECT_FALSE(std::isinf(Gamma(4096, UnitRoundoff(DType::kF32))));
}

TEST(ComputeDType, TheHostHoldsFloats) {
  EXPECT_EQ(ComputeDType("sim", DType::kF16), DType::kF32);
  EXPECT_EQ(ComputeDType("mpi", DType::kBF16), DType::kF32);
  EXPECT_EQ(ComputeDType("cuda", DType::kF16), DType::kF16);
  EXPECT_EQ(ComputeDType("cuda", DType::kF32), DType::kF32);
}

}  // namespace
}  // namespace shardlab
