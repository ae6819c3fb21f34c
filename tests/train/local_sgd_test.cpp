// Local SGD (H = 1 is synchronous SGD; communication falls by H) and
// stale-synchronous SGD (the staleness bound is never exceeded, and a
// fast rank does run ahead of a slow one up to it).
#include <gtest/gtest.h>

#include <random>

#include "engine/train/grad_accumulation.h"
#include "engine/train/local_sgd.h"
#include "tests/train/train_test_util.h"

namespace shardlab {
namespace {

using testing::SmallConfig;

TEST(LocalSgd, OneLocalStepIsSynchronousSgd) {
  // local_steps = 1 runs the synchronous path itself; here the local path
  // (own copies, then the average) is run for one step and averaged at its
  // end, which is H = 1: θ_r = fl(θ − lr·N·g_r), averaged by a ring sum and
  // ÷N (exact for N = 4). Sync: θ − lr·fl(Σ g_r). Both are θ − lr·Σg_r up to
  // (N + 2) roundings of numbers no larger than |θ| + lr·N·Σ|g_r|.
  DpTrainConfig c = SmallConfig(4, 32, 1);
  const DpTrainResult sync = RunDpTraining(c);
  c.local_steps = 2;
  const DpTrainResult local = RunDpTraining(c);
  ASSERT_EQ(local.communicated[0], 1);
  const MlpData data = MlpData::Of(c.model, c.seed);
  const MlpParams theta = MlpParams::Initial(c.model, c.seed);
  const AccumulationSplit split = SplitForAccumulation(c.model.batch, c.ranks, 1);
  std::vector<double> abs_sum(static_cast<std::size_t>(theta.size()), 0.0);
  for (int r = 0; r < c.ranks; ++r) {
    MlpParams g = MlpParams::ZerosLike(c.model);
    MlpForwardBackward(c.model, theta, data, r * split.rows_per_rank, split.rows_per_rank, {}, &g);
    const std::vector<float> flat = g.Flat();
    for (std::size_t i = 0; i < flat.size(); ++i) abs_sum[i] += std::fabs(flat[i]);
  }
  const std::vector<float> a = sync.params[0].Flat(), b = local.params[0].Flat(), t0 = theta.Flat();
  const double u = 0x1p-24, lr = c.model.learning_rate;
  int differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double bound = (c.ranks + 2) * u * (std::fabs(t0[i]) + lr * c.ranks * abs_sum[i]);
    ASSERT_LE(std::fabs(a[i] - b[i]), bound) << "element " << i;
    differ += a[i] != b[i] ? 1 : 0;
  }
  // Every rank holds the average.
  for (int r = 1; r < c.ranks; ++r) EXPECT_EQ(local.params[r].Flat(), local.params[0].Flat());
  EXPECT_LT(differ, static_cast<int>(a.size()));
}

TEST(LocalSgd, AveragingLessOftenDriftsFromSynchronousSgdButStaysNear) {
  DpTrainConfig c = SmallConfig(4, 32, 20);
  const DpTrainResult sync = RunDpTraining(c);
  for (const int h : {2, 4}) {
    c.local_steps = h;
    const DpTrainResult local = RunDpTraining(c);
    EXPECT_NE(local.final_loss, sync.final_loss) << "H=" << h;
    EXPECT_NEAR(local.final_loss, sync.final_loss, 0.1 * sync.final_loss) << "H=" << h;
    EXPECT_LT(local.final_loss, 0.5 * local.loss[0]) << "H=" << h;
  }
}

TEST(LocalSgd, CommunicationFallsByH) {
  const int steps = 24;
  for (const int h : {1, 2, 3, 4, 8}) {
    DpTrainConfig c = SmallConfig(4, 32, steps);
    c.local_steps = h;
    const DpTrainResult r = RunDpTraining(c);
    const double psi = static_cast<double>(MlpParameterCount(c.model));
    const double per_average = 2.0 * 3 / 4 * 4 * psi;
    int averages = 0;
    for (const char x : r.communicated) averages += x ? 1 : 0;
    EXPECT_EQ(averages, h == 1 ? steps : steps / h) << "H=" << h;
    EXPECT_DOUBLE_EQ(static_cast<double>(r.total_bytes()) / steps, per_average / h) << "H=" << h;
    // And the plan sends it: averaging steps only.
    if (h > 1) {
      const DpTrainPlan plan = BuildDpTrainPlan(c, r, 2 * h);
      EXPECT_DOUBLE_EQ(static_cast<double>(testing::PlanSentBytes(plan.plan, 0)), 2 * per_average) << "H=" << h;
    }
  }
}

// A stale-synchronous schedule, checked from its times alone: when rank r
// starts its step c, every rank has finished at least c − S steps.
void ExpectWithinStaleness(const std::vector<StaleStep>& steps, int ranks, int s) {
  for (const StaleStep& st : steps) {
    for (int q = 0; q < ranks; ++q) {
      int done = 0;
      for (const StaleStep& o : steps) done += o.rank == q && o.end <= st.start ? 1 : 0;
      ASSERT_GE(done, st.clock - s) << "rank " << st.rank << " step " << st.clock << " ran ahead of rank " << q;
    }
    ASSERT_LE(st.staleness(), s);
  }
}

TEST(StaleSync, TheStalenessBoundIsNeverExceeded) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> time(0.5, 4.0);
  for (int trial = 0; trial < 30; ++trial) {
    const int ranks = 2 + trial % 5, s = trial % 4;
    std::vector<double> t(static_cast<std::size_t>(ranks));
    for (double& x : t) x = time(gen);
    const std::vector<StaleStep> steps = StaleSyncSchedule(t, 12, s);
    ASSERT_EQ(static_cast<int>(steps.size()), ranks * 12);
    ExpectWithinStaleness(steps, ranks, s);
  }
}

TEST(StaleSync, AFastRankRunsAheadOfASlowOneByExactlyTheBound) {
  for (const int s : {0, 1, 2, 5}) {
    const std::vector<StaleStep> steps = StaleSyncSchedule({1.0, 3.0, 1.0, 1.0}, 20, s);
    int most = 0;
    for (const StaleStep& st : steps) most = std::max(most, st.staleness());
    EXPECT_EQ(most, s);
    // With S = 0 the run is lock-step: step c starts when all finished c.
    if (s == 0)
      for (const StaleStep& st : steps) EXPECT_DOUBLE_EQ(st.start, 3.0 * st.clock);
  }
}

TEST(StaleSync, TrainsAndStaysNearSynchronousSgd) {
  DpTrainConfig c = SmallConfig(4, 32, 20);
  const DpTrainResult sync = RunDpTraining(c);
  c.staleness = 2;
  c.step_time = {1.0, 3.0, 1.0, 1.0};
  const DpTrainResult ssp = RunDpTraining(c);
  EXPECT_EQ(ssp.max_staleness, 2);
  EXPECT_LT(ssp.final_loss, 0.5 * ssp.loss[0]);
  EXPECT_NEAR(ssp.final_loss, sync.final_loss, 0.1 * sync.final_loss);
  EXPECT_EQ(static_cast<int>(ssp.stale.size()), 4 * 20);
}

TEST(LocalSgd, RefusesBadValues) {
  DpTrainConfig c = SmallConfig();
  c.local_steps = 0;
  EXPECT_THROW(RunDpTraining(c), Error);
  c.local_steps = -1;
  EXPECT_THROW(RunDpTraining(c), Error);
  c.local_steps = 2;
  c.staleness = 1;
  EXPECT_THROW(RunDpTraining(c), Error);  // two modes at once
  c.staleness = -1;
  c.local_steps = 1;
  EXPECT_THROW(RunDpTraining(c), Error);
}

}  // namespace
}  // namespace shardlab
