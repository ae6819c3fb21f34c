// Mixed precision with a dynamic loss scale synchronised across ranks: an
// overflow on one rank skips the step on every rank, the scale backs off
// and grows, and the master weights never take an inf or a NaN.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "engine/train/loss_scale.h"
#include "engine/verify/bounds.h"
#include "tests/train/train_test_util.h"

namespace shardlab {
namespace {

using testing::SmallConfig;

DpTrainConfig HalfConfig(int steps) {
  DpTrainConfig c = SmallConfig(4, 32, steps);
  c.precision = DType::kF16;
  c.loss_scale.initial_scale = 1024;  // no overflow of its own at this size
  c.loss_scale.growth_interval = 4;
  return c;
}

TEST(RoundToHalf, RoundsAsFp16Does) {
  EXPECT_EQ(RoundToHalf(1.0f), 1.0f);
  EXPECT_EQ(RoundToHalf(1.0f + 0x1p-11f), 1.0f);               // a tie goes to even
  EXPECT_EQ(RoundToHalf(1.0f + 0x1p-10f), 1.0f + 0x1p-10f);    // fp16's ulp at 1
  EXPECT_EQ(RoundToHalf(1.0f + 0x1.8p-11f), 1.0f + 0x1p-10f);
  EXPECT_EQ(RoundToHalf(65504.0f), 65504.0f);
  EXPECT_EQ(RoundToHalf(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(RoundToHalf(65520.0f)));
  EXPECT_TRUE(std::isinf(RoundToHalf(-1e6f)));
  EXPECT_EQ(RoundToHalf(0x1p-24f), 0x1p-24f);                  // the smallest subnormal
  EXPECT_EQ(RoundToHalf(0x1p-26f), 0.0f);
}

TEST(DynamicLossScale, BacksOffOnOverflowAndGrowsAfterTheInterval) {
  LossScaleConfig config;
  config.initial_scale = 1024;
  config.growth_interval = 3;
  DynamicLossScale s(config);
  EXPECT_TRUE(s.Update(true));
  EXPECT_EQ(s.scale(), 512);
  EXPECT_FALSE(s.Update(false));
  EXPECT_FALSE(s.Update(false));
  EXPECT_EQ(s.scale(), 512);
  EXPECT_FALSE(s.Update(false));
  EXPECT_EQ(s.scale(), 1024);
  EXPECT_TRUE(s.Update(true));  // an overflow restarts the count
  EXPECT_FALSE(s.Update(false));
  EXPECT_FALSE(s.Update(false));
  EXPECT_EQ(s.scale(), 512);
  EXPECT_EQ(s.skipped(), 2);
}

TEST(LossScale, AnOverflowOnOneRankSkipsTheStepOnEveryRank) {
  for (const int bad_rank : {0, 2, 3}) {
    DpTrainConfig c = HalfConfig(8);
    c.overflow_rank = bad_rank;
    c.overflow_step = 3;
    const DpTrainResult r = RunDpTraining(c);
    for (int k = 0; k < c.steps; ++k) {
      // Only the bad rank's own flag is set; the all-reduced decision is everyone's.
      for (int rank = 0; rank < c.ranks; ++rank)
        EXPECT_EQ(r.overflow_rank[static_cast<std::size_t>(k * c.ranks + rank)] != 0, k == 3 && rank == bad_rank);
      EXPECT_EQ(r.skipped[static_cast<std::size_t>(k)] != 0, k == 3) << "step " << k;
    }
    EXPECT_EQ(r.skipped_steps(), 1);
    EXPECT_EQ(r.nonfinite_updates, 0);
    // Step 3 changed nothing: the loss before step 4 is the loss before step 3.
    EXPECT_EQ(r.loss[4], r.loss[3]);
    // The scale: 1024 for steps 0-2 (3 good steps < 4), halved by the skip,
    // doubled after 4 good steps (4-7).
    EXPECT_EQ(r.scale[3], 1024);
    EXPECT_EQ(r.scale[4], 512);
    EXPECT_EQ(r.scale[7], 512);
    // Every rank ends with the same weights, all finite.
    for (int rank = 1; rank < c.ranks; ++rank) {
      const std::vector<float> a = r.params[0].Flat(), b = r.params[rank].Flat();
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    }
    EXPECT_FALSE(HasNonFinite(r.params[0].Flat()));
  }
}

TEST(LossScale, ASkippedStepLeavesTheMasterWeightsAsTheyWere) {
  DpTrainConfig c = HalfConfig(3);
  const DpTrainResult before = RunDpTraining(c);   // steps 0-2
  c.steps = 4;
  c.overflow_rank = 1;
  c.overflow_step = 3;
  const DpTrainResult skipped = RunDpTraining(c);  // step 3 skipped
  const std::vector<float> a = before.params[0].Flat(), b = skipped.params[0].Flat();
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(LossScale, ATooLargeScaleBacksOffUntilTheGradientsFitAndNeverWritesInf) {
  DpTrainConfig c = HalfConfig(30);
  c.loss_scale.initial_scale = 1e8;
  c.loss_scale.growth_interval = 1000;
  const DpTrainResult r = RunDpTraining(c);
  ASSERT_GE(r.skipped_steps(), 1);
  // The skips come first, each halving S, then training runs.
  const int skips = r.skipped_steps();
  ASSERT_LT(skips, c.steps - 5);
  for (int k = 0; k < c.steps; ++k) EXPECT_EQ(r.skipped[static_cast<std::size_t>(k)] != 0, k < skips);
  EXPECT_EQ(r.scale[static_cast<std::size_t>(skips)], 1e8 / std::ldexp(1.0, skips));
  EXPECT_EQ(r.nonfinite_updates, 0);
  EXPECT_FALSE(HasNonFinite(r.params[0].Flat()));
  EXPECT_LT(r.final_loss, r.loss[0]);
}

TEST(LossScale, Fp16TrainingFollowsFp32WithinTheRoundingOfHalf) {
  // No skip: every step's loss within a few fp16 ulps (relative 2^-11) per
  // step of the fp32 run's, and the run still learns.
  DpTrainConfig c = HalfConfig(10);
  c.loss_scale.growth_interval = 1000;
  const DpTrainResult half = RunDpTraining(c);
  DpTrainConfig f = SmallConfig(4, 32, 10);
  const DpTrainResult full = RunDpTraining(f);
  ASSERT_EQ(half.skipped_steps(), 0);
  for (int k = 0; k < c.steps; ++k)
    EXPECT_NEAR(half.loss[k], full.loss[k], full.loss[k] * (k + 1) * 4 * 0x1p-11) << "step " << k;
  EXPECT_LT(half.final_loss, 0.8 * half.loss[0]);
}

TEST(LossScale, TheTimelineShowsTheFlagAndTheSkip) {
  DpTrainConfig c = HalfConfig(4);
  c.overflow_rank = 2;
  c.overflow_step = 1;
  const DpTrainResult r = RunDpTraining(c);
  const DpTrainPlan plan = BuildDpTrainPlan(c, r, 4);
  int flags = 0, skips = 0, gradient_reduces = 0;
  for (const CollectiveNote& note : plan.plan.collectives) {
    if (note.tag.rfind("flag", 0) == 0) ++flags;
    if (note.tag == "flag s1 SKIP") ++skips;
    if (note.tag.rfind("AR s", 0) == 0) ++gradient_reduces;
  }
  EXPECT_EQ(flags, 4);
  EXPECT_EQ(skips, 1);
  EXPECT_EQ(gradient_reduces, 3);  // none for the skipped step
  // The flag's all-reduce moves one element: its ring sends 2 x 4 bytes on one rank.
  const auto run = testing::RunOnSim(plan.plan);
  EXPECT_GT(run->sink.events.size(), 0u);
}

TEST(LossScale, RefusesAnInjectedOverflowItCannotPlace) {
  DpTrainConfig c = HalfConfig(4);
  c.overflow_rank = 4;
  c.overflow_step = 1;
  EXPECT_THROW(RunDpTraining(c), Error);
  c.overflow_rank = 1;
  c.overflow_step = 4;
  EXPECT_THROW(RunDpTraining(c), Error);
  c.overflow_step = 1;
  c.precision = DType::kF32;
  EXPECT_THROW(RunDpTraining(c), Error);
  c.precision = DType::kBF16;  // no loss scale to back off
  EXPECT_THROW(RunDpTraining(c), Error);
}

TEST(RoundToWorking, RoundsAsBf16Does) {
  // bf16: fp32's exponent, 8 significant bits.
  EXPECT_EQ(RoundToWorking(DType::kBF16, 1.0f + 0x1p-8f), 1.0f);             // a tie goes to even
  EXPECT_EQ(RoundToWorking(DType::kBF16, 1.0f + 0x1p-7f), 1.0f + 0x1p-7f);   // bf16's ulp at 1
  EXPECT_EQ(RoundToWorking(DType::kBF16, 1.0f + 0x1.8p-8f), 1.0f + 0x1p-7f);
  EXPECT_EQ(RoundToWorking(DType::kBF16, 1e30f), RoundTo(DType::kBF16, 1e30));  // fp16 would be inf
  EXPECT_TRUE(std::isfinite(RoundToWorking(DType::kBF16, 1e30f)));
  EXPECT_GT(RoundToWorking(DType::kBF16, 1e-30f), 0.0f);                      // fp16 would be 0
  EXPECT_EQ(RoundToWorking(DType::kF16, 70000.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(RoundToWorking(DType::kF32, 1.0f + 0x1p-20f), 1.0f + 0x1p-20f);  // fp32 leaves it
}

TEST(Bf16, TrainsWithoutALossScaleFlagOrSkip) {
  // bf16 has fp32's range: no loss scale, no overflow flag, no skipped step,
  // so a step sends only the gradients' all-reduce, at 2 bytes an element.
  DpTrainConfig c = SmallConfig(4, 32, 10);
  c.precision = DType::kBF16;
  c.loss_scale.initial_scale = 1e8;  // would overflow fp16 (see the test above); bf16 ignores it
  const DpTrainResult r = RunDpTraining(c);
  EXPECT_EQ(r.skipped_steps(), 0);
  EXPECT_EQ(r.nonfinite_updates, 0);
  for (const double s : r.scale) EXPECT_EQ(s, 1.0);
  const std::int64_t psi = MlpParameterCount(c.model);
  CompressionConfig wire;
  wire.kind = Compression::kBf16;
  for (const Bytes b : r.bytes) EXPECT_EQ(b, CompressedAllReduceBytes(wire, psi, c.ranks));
  // The fp16 run sends the same gradient bytes plus its flag's all-reduce.
  DpTrainConfig h = SmallConfig(4, 32, 10);
  h.precision = DType::kF16;
  h.loss_scale.initial_scale = 1024;
  h.loss_scale.growth_interval = 1000;
  const DpTrainResult hr = RunDpTraining(h);
  ASSERT_EQ(hr.skipped_steps(), 0);
  CompressionConfig plain;
  EXPECT_EQ(hr.bytes[0], r.bytes[0] + CompressedAllReduceBytes(plain, 1, c.ranks));
  // The plan has no flag collective and no overflow-flag buffer.
  const DpTrainPlan plan = BuildDpTrainPlan(c, r, 4);
  for (const CollectiveNote& note : plan.plan.collectives) EXPECT_NE(note.tag.rfind("flag", 0), 0u) << note.tag;
  EXPECT_LT(r.final_loss, 0.8 * r.loss[0]);
}

TEST(Bf16, FollowsFp32WithinTheRoundingOfBf16AndIsCoarserThanFp16) {
  // Every step's loss within a few bf16 ulps (relative 2^-8) per step of
  // the fp32 run's; and the gap to fp32 over the run is larger than fp16's
  // (8 significant bits against 11), so the rounding really is bf16's.
  DpTrainConfig f = SmallConfig(4, 32, 10);
  const DpTrainResult full = RunDpTraining(f);
  DpTrainConfig b = f;
  b.precision = DType::kBF16;
  const DpTrainResult bf = RunDpTraining(b);
  DpTrainConfig h = HalfConfig(10);
  h.loss_scale.growth_interval = 1000;
  const DpTrainResult half = RunDpTraining(h);
  double gap_bf16 = 0, gap_fp16 = 0;
  for (int k = 0; k < f.steps; ++k) {
    EXPECT_NEAR(bf.loss[k], full.loss[k], full.loss[k] * (k + 1) * 4 * 0x1p-8) << "step " << k;
    gap_bf16 += std::fabs(bf.loss[k] - full.loss[k]);
    gap_fp16 += std::fabs(half.loss[k] - full.loss[k]);
  }
  EXPECT_GT(gap_bf16, 0.0);
  EXPECT_GT(gap_bf16, gap_fp16);
}

}  // namespace
}  // namespace shardlab
