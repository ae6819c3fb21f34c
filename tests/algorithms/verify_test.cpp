// The verifier: finds every wrong element in each rank's output region and
// nothing outside it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "collective_test_util.h"
#include "engine/core/error.h"
#include "engine/verify/bounds.h"

namespace shardlab {
namespace {

using testing::HostRun;
using testing::MakeParams;
using testing::RunOnHost;

VerifyResult Reverify(const CollectiveParams& params, const HostRun& run, std::uint64_t seed) {
  return VerifyCollective(params, run.plan, seed,
                          [&run](BufferId id) { return run.buffers.view(id); });
}

TEST(VerifyCollective, ChecksEveryElementOfEveryRankForAllReduce) {
  const auto params = MakeParams(CollectiveKind::kAllReduce, CollectiveAlgo::kRing, 4, 103);
  const auto run = RunOnHost(params, 1);
  EXPECT_TRUE(run.verify.correct);
  EXPECT_EQ(run.verify.wrong, 0);
  EXPECT_EQ(run.verify.checked, 4 * 103);
  EXPECT_EQ(run.verify.max_abs_err, 0.0);
}

TEST(VerifyCollective, CatchesOneFlippedElement) {
  const auto params = MakeParams(CollectiveKind::kAllReduce, CollectiveAlgo::kRing, 4, 103);
  auto run = RunOnHost(params, 1);
  run.buffers.data[2][57] += 0.5f;
  const VerifyResult result = Reverify(params, run, 1);
  EXPECT_FALSE(result.correct);
  EXPECT_EQ(result.wrong, 1);
  EXPECT_EQ(result.max_abs_err, 0.5);
  EXPECT_EQ(result.checked, 4 * 103);
}

TEST(VerifyCollective, ReportsAnErrorInsideTheToleranceWithoutFailing) {
  const auto params = MakeParams(CollectiveKind::kAllReduce, CollectiveAlgo::kTree, 5, 64);
  auto run = RunOnHost(params, 4);
  float& x = run.buffers.data[3][10];
  x = std::nextafter(x, 100.0f);  // one ulp
  const VerifyResult result = Reverify(params, run, 4);
  EXPECT_GT(result.max_abs_err, 0.0);
  // One ulp of a value below 8 is < 1e-6: inside the tolerance, reported in max_abs_err.
  EXPECT_TRUE(result.correct);
}

// What a GPU that holds the data in a 16-bit dtype computes for an
// all-reduce: inputs rounded into the dtype, every partial sum rounded
// (rank order; a ring's order differs, the bound does not depend on it).
void RoundLikeASixteenBitBackend(const CollectiveParams& params, HostRun& run, std::uint64_t seed,
                                 DType dtype) {
  for (std::int64_t i = 0; i < params.count; ++i) {
    double acc = RoundTo(dtype, InputValue(seed, 0, i));
    for (int r = 1; r < params.ranks; ++r) acc = RoundTo(dtype, acc + RoundTo(dtype, InputValue(seed, r, i)));
    for (int r = 0; r < params.ranks; ++r) run.buffers.data[r][i] = static_cast<float>(acc);
  }
}

TEST(VerifyCollective, SixteenBitResultsPassWithTheDtypesBoundAndNotWithFp32s) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    auto params = MakeParams(CollectiveKind::kAllReduce, CollectiveAlgo::kRing, 8, 257);
    params.dtype = dtype;
    auto run = RunOnHost(params, 3);
    RoundLikeASixteenBitBackend(params, run, 3, dtype);
    const auto verify = [&](DType computed) {
      return VerifyCollective(params, run.plan, 3, [&run](BufferId id) { return run.buffers.view(id); },
                              computed);
    };
    // Sums of eight k/1024 values need more bits than a 16-bit dtype has:
    // some elements were rounded, which fp32's exact check calls wrong.
    const VerifyResult exact = verify(DType::kF32);
    ASSERT_GT(exact.wrong, 0) << DTypeName(dtype);
    const VerifyResult bounded = verify(dtype);
    EXPECT_TRUE(bounded.correct) << DTypeName(dtype) << ": " << bounded.wrong << " wrong";
    EXPECT_EQ(bounded.checked, 8 * 257);
    EXPECT_GT(bounded.max_abs_err, 0.0);
    // One element off by twice its bound is caught.
    double magnitude = 0;
    for (int r = 0; r < 8; ++r) magnitude += std::fabs(InputValue(3, r, 100));
    const double bound = (UnitRoundoff(dtype) + Gamma(8, UnitRoundoff(dtype))) * magnitude;
    run.buffers.data[5][100] += static_cast<float>(2 * bound + 1e-3);
    const VerifyResult broken = verify(dtype);
    EXPECT_FALSE(broken.correct) << DTypeName(dtype);
    EXPECT_EQ(broken.wrong, 1) << DTypeName(dtype);
  }
}

TEST(VerifyCollective, SixteenBitMovesAllowOnlyTheInputsRounding) {
  auto params = MakeParams(CollectiveKind::kBroadcast, CollectiveAlgo::kRing, 4, 64);
  params.dtype = DType::kBF16;
  auto run = RunOnHost(params, 2);
  for (int r = 0; r < 4; ++r)
    for (std::int64_t i = 0; i < 64; ++i)
      run.buffers.data[r][i] = static_cast<float>(RoundTo(DType::kBF16, run.buffers.data[r][i]));
  const auto verify = [&] {
    return VerifyCollective(params, run.plan, 2, [&run](BufferId id) { return run.buffers.view(id); },
                            DType::kBF16);
  };
  EXPECT_TRUE(verify().correct);
  // 1/64 is four bf16 ulps of a value just below 1 (|x| < 1 for every input):
  // more than any input's rounding.
  run.buffers.data[1][7] += 1.0f / 64;
  EXPECT_FALSE(verify().correct);
}

TEST(VerifyCollective, TreatsNanAsWrong) {
  const auto params = MakeParams(CollectiveKind::kBroadcast, CollectiveAlgo::kRing, 3, 20);
  auto run = RunOnHost(params, 6);
  run.buffers.data[1][0] = std::numeric_limits<float>::quiet_NaN();
  const VerifyResult result = Reverify(params, run, 6);
  EXPECT_FALSE(result.correct);
  EXPECT_EQ(result.wrong, 1);
  EXPECT_TRUE(std::isinf(result.max_abs_err));
}

TEST(VerifyCollective, WrongSeedMeansWrongResult) {
  const auto params = MakeParams(CollectiveKind::kAllGather, CollectiveAlgo::kRing, 4, 400);
  const auto run = RunOnHost(params, 1);
  const VerifyResult result = Reverify(params, run, 2);
  EXPECT_FALSE(result.correct);
  EXPECT_GT(result.wrong, 400);
}

TEST(VerifyCollective, ReduceScatterChecksOnlyEachRanksOwnChunk) {
  const auto params = MakeParams(CollectiveKind::kReduceScatter, CollectiveAlgo::kRing, 4, 100);
  auto run = RunOnHost(params, 3);
  EXPECT_EQ(run.verify.checked, 100);
  // Rank 1 owns [25, 50): a change at 10 is outside its output, at 30 inside.
  run.buffers.data[1][10] = 99.0f;
  EXPECT_TRUE(Reverify(params, run, 3).correct);
  run.buffers.data[1][30] = 99.0f;
  const VerifyResult result = Reverify(params, run, 3);
  EXPECT_FALSE(result.correct);
  EXPECT_EQ(result.wrong, 1);
}

TEST(VerifyCollective, ReduceChecksOnlyTheRoot) {
  auto params = MakeParams(CollectiveKind::kReduce, CollectiveAlgo::kRing, 4, 40);
  params.root = 2;
  auto run = RunOnHost(params, 3);
  run.buffers.data[0][5] = 42.0f;
  EXPECT_TRUE(Reverify(params, run, 3).correct);
  run.buffers.data[2][5] = 42.0f;
  EXPECT_EQ(Reverify(params, run, 3).wrong, 1);
}

TEST(VerifyCollective, AllToAllChecksTheRecvBuffersIncludingTheUnusedTail) {
  const auto params = MakeParams(CollectiveKind::kAllToAll, CollectiveAlgo::kDirect, 3, 10);
  auto run = RunOnHost(params, 3);  // blocks of 3, element 9 unused
  EXPECT_TRUE(run.verify.correct);
  EXPECT_EQ(run.verify.checked, 30);
  run.buffers.data[0][4] = 1.0f;  // a send buffer: not an output
  EXPECT_TRUE(Reverify(params, run, 3).correct);
  run.buffers.data[3 + 1][9] = 1.0f;  // rank 1's recv tail must stay zero
  EXPECT_EQ(Reverify(params, run, 3).wrong, 1);
}

TEST(VerifyCollective, RejectsAPlanThatDoesNotMatchTheParameters) {
  const auto params = MakeParams(CollectiveKind::kAllReduce, CollectiveAlgo::kRing, 4, 100);
  const auto run = RunOnHost(params, 1);
  auto other = params;
  other.ranks = 5;
  EXPECT_THROW(Reverify(other, run, 1), Error);
  other = params;
  other.count = 99;
  EXPECT_THROW(Reverify(other, run, 1), Error);
}

TEST(VerifyCollective, SaysWhenABackendHasNoData) {
  const auto params = MakeParams(CollectiveKind::kAllReduce, CollectiveAlgo::kRing, 2, 8);
  const Plan plan = BuildCollective(params);
  try {
    VerifyCollective(params, plan, 1, [](BufferId) { return std::span<const float>(); });
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timing-only"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace shardlab
