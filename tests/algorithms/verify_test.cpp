// The verifier: finds every wrong element in each rank's output region and
// nothing outside it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "collective_test_util.h"
#include "engine/core/error.h"

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
