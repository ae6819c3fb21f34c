// Gradient accumulation: K micro-batches per all-reduce are the step of a
// K-times-larger batch, and the communication per sample falls by K.
#include <gtest/gtest.h>

#include "engine/train/grad_accumulation.h"
#include "engine/verify/bounds.h"
#include "engine/verify/mlp_bounds.h"
#include "tests/train/train_test_util.h"

namespace shardlab {
namespace {

using testing::SmallConfig;

// The weights after `steps` steps against the single-device batch of B rows
// in double, each element within its bound (dW = xᵀ·dz summed over B rows
// in any order: micro-batches, ranks, the ring).
void ExpectMatchesBatchReference(const DpTrainConfig& c) {
  const DpTrainResult r = RunDpTraining(c);
  MlpBoundedReference reference(c.model, c.seed, UnitRoundoff(DType::kF32));
  for (int k = 0; k < c.steps; ++k) reference.TrainStep();
  for (int l = 0; l < c.model.layers; ++l) {
    const std::vector<double> wb = reference.weight(l).Bound();
    for (std::size_t i = 0; i < wb.size(); ++i)
      ASSERT_LE(std::fabs(r.params[0].w[l][i] - reference.weight(l).value[i]), wb[i])
          << "K=" << c.accumulate << " w" << l << "[" << i << "]";
    const std::vector<double> bb = reference.bias(l).Bound();
    for (std::size_t i = 0; i < bb.size(); ++i)
      ASSERT_LE(std::fabs(r.params[0].b[l][i] - reference.bias(l).value[i]), bb[i]) << "b" << l;
  }
  EXPECT_NEAR(r.loss.back(), reference.loss(), reference.loss_bound());
}

TEST(GradAccumulation, EqualsTheKTimesLargerBatch) {
  for (const int k : {1, 2, 4, 8}) {
    DpTrainConfig c = SmallConfig(4, 4 * k * 4, 3);  // micro-batches of 4 rows
    c.accumulate = k;
    ExpectMatchesBatchReference(c);
  }
}

TEST(GradAccumulation, TheGradientIsTheBatchGradientNotItsKFold) {
  // One step's all-reduced gradient against the reference's: a missing
  // 1/B (or a gradient summed K times over) is far outside the bound.
  DpTrainConfig c = SmallConfig(2, 32, 1);
  c.accumulate = 4;
  const DpTrainResult r = RunDpTraining(c);
  MlpBoundedReference reference(c.model, c.seed, UnitRoundoff(DType::kF32));
  reference.TrainStep();
  for (int l = 0; l < c.model.layers; ++l) {
    const std::vector<double> bound = reference.weight_grad(l).Bound();
    for (std::size_t i = 0; i < bound.size(); ++i)
      ASSERT_LE(std::fabs(r.first_gradient.w[l][i] - reference.weight_grad(l).value[i]), bound[i]);
  }
}

TEST(GradAccumulation, CommunicationPerSampleFallsByK) {
  // Micro-batches of b rows; K of them per step: the plan's sends per step
  // stay 2(N−1)/N·4Ψ while the samples per step grow K-fold.
  const int n = 4, b = 4, steps = 2;
  double per_sample_k1 = 0;
  for (const int k : {1, 2, 4, 8}) {
    DpTrainConfig c = SmallConfig(n, n * k * b, steps);
    c.accumulate = k;
    const DpTrainResult r = RunDpTraining(c);
    const DpTrainPlan plan = BuildDpTrainPlan(c, r, steps);
    const double sent = static_cast<double>(testing::PlanSentBytes(plan.plan, 0)) / steps;
    const double psi = static_cast<double>(MlpParameterCount(c.model));
    EXPECT_DOUBLE_EQ(sent, 2.0 * (n - 1) / n * 4 * psi) << "K=" << k;
    const double per_sample = sent / c.model.batch;
    if (k == 1) per_sample_k1 = per_sample;
    EXPECT_DOUBLE_EQ(per_sample * k, per_sample_k1) << "K=" << k;
  }
}

TEST(GradAccumulation, RefusesABatchThatDoesNotSplit) {
  EXPECT_THROW(SplitForAccumulation(32, 4, 0), Error);
  EXPECT_THROW(SplitForAccumulation(32, 4, 3), Error);  // 8 rows per rank into 3
  EXPECT_THROW(SplitForAccumulation(30, 4, 1), Error);
  const AccumulationSplit s = SplitForAccumulation(64, 4, 4);
  EXPECT_EQ(s.rows_per_rank, 16);
  EXPECT_EQ(s.microbatch_rows, 4);
  EXPECT_EQ(MicrobatchFirstRow(s, 2, 3), 2 * 16 + 3 * 4);
}

}  // namespace
}  // namespace shardlab
