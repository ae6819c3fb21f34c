// Activation checkpointing: the same gradients bit for bit, the peak of
// activation memory (the simulator's MemoryTracker) and the extra FLOPs
// exactly as recompute.h's formulas say.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/train/recompute.h"
#include "tests/train/train_test_util.h"

namespace shardlab {
namespace {

using testing::SmallConfig;

Bytes PeakActivations(const Plan& plan) {
  const auto run = testing::RunOnSim(plan);
  const MemoryUsage* usage = run->executor->backend().memory();
  EXPECT_NE(usage, nullptr);
  Bytes peak = 0;
  for (const RankMemory& rm : usage->ranks)
    peak = std::max(peak, rm.peak[static_cast<int>(MemoryCategory::kActivations)]);
  return peak;
}

double PlanFlops(const Plan& plan, int rank) {
  double flops = 0;
  for (const Op& op : plan.ops)
    if (op.rank == rank && op.kind == OpKind::kCompute) flops += op.flops;
  return flops;
}

TEST(Recompute, GradientsAreBitForBitThoseWithoutIt) {
  for (const bool half : {false, true}) {
    DpTrainConfig c = SmallConfig(2, 16, 1);
    c.precision = half ? DType::kF16 : DType::kF32;
    c.loss_scale.initial_scale = 256;
    const DpTrainResult plain = RunDpTraining(c);
    for (const char* mode : {"full", "selective"}) {
      c.recompute = RecomputedLayers(ParseRecomputeMode(mode), "1", c.model.layers);
      const DpTrainResult re = RunDpTraining(c);
      const std::vector<float> a = plain.first_gradient.Flat(), b = re.first_gradient.Flat();
      ASSERT_EQ(a.size(), b.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << mode << (half ? " fp16" : "");
      EXPECT_GT(re.recompute_flops, 0);
    }
  }
}

TEST(Recompute, PeakMemoryAndFlopsFollowTheFormulas) {
  const int steps = 2;
  for (const bool half : {false, true}) {
    for (const int k : {1, 2}) {
      DpTrainConfig c = SmallConfig(2, 2 * k * 8, steps);
      c.accumulate = k;
      c.precision = half ? DType::kF16 : DType::kF32;
      c.loss_scale.initial_scale = 256;
      const int e = half ? 2 : 4;
      const std::vector<bool> none(static_cast<std::size_t>(c.model.layers), false);
      const DpTrainPlan base = BuildDpTrainPlan(c, RunDpTraining(c), steps);
      const Bytes base_peak = PeakActivations(base.plan);
      EXPECT_EQ(base_peak, RecomputePeakActivationBytes(c.model, 8, e, none));
      EXPECT_EQ(base_peak, 2 * c.model.layers * 8 * c.model.width * e);
      for (const std::string list : {"0", "0,2", "0,1,2"}) {
        c.recompute = RecomputedLayers(RecomputeMode::kSelective, list, c.model.layers);
        const DpTrainResult r = RunDpTraining(c);
        const DpTrainPlan plan = BuildDpTrainPlan(c, r, steps);
        const Bytes peak = PeakActivations(plan.plan);
        EXPECT_EQ(peak, RecomputePeakActivationBytes(c.model, 8, e, c.recompute)) << list;
        // Each recomputed layer frees one b×H tile of its peak.
        EXPECT_EQ(base_peak - peak, RecomputedCount(c.recompute) * 8 * c.model.width * e) << list;
        // The executed recomputation and the plan's extra FLOPs, both the formula's.
        const double formula = RecomputeFlops(c.model, 8, c.recompute) * k;
        EXPECT_DOUBLE_EQ(static_cast<double>(r.recompute_flops) / steps, formula) << list;
        EXPECT_DOUBLE_EQ((PlanFlops(plan.plan, 0) - PlanFlops(base.plan, 0)) / steps, formula) << list;
      }
    }
  }
}

TEST(Recompute, FullRecomputesEveryHiddenLayer) {
  const std::vector<bool> full = RecomputedLayers(RecomputeMode::kFull, "", 5);
  EXPECT_EQ(full, (std::vector<bool>{true, true, true, true, false}));
  EXPECT_EQ(RecomputedLayers(RecomputeMode::kNone, "0", 5), std::vector<bool>(5, false));
}

TEST(Recompute, RefusesBadLayerLists) {
  EXPECT_THROW(RecomputedLayers(RecomputeMode::kSelective, "", 4), Error);
  EXPECT_THROW(RecomputedLayers(RecomputeMode::kSelective, "3", 4), Error);  // the last layer
  EXPECT_THROW(RecomputedLayers(RecomputeMode::kSelective, "0,x", 4), Error);
  EXPECT_THROW(RecomputedLayers(RecomputeMode::kSelective, "-1", 4), Error);
  EXPECT_THROW(ParseRecomputeMode("some"), Error);
}

}  // namespace
}  // namespace shardlab
