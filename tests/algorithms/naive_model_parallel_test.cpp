// Naive model parallelism (seed 000 §2): the layers split over the GPUs and
// the whole batch as one micro-batch, so one GPU works at a time; beside it
// the pipeline (GPipe, 1F1B) that splits the batch and fills the idle time.
#include <gtest/gtest.h>

#include "engine/algorithms/pipeline_schedule.h"
#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"

namespace shardlab {
namespace {

LabParam Text(const std::string& name, const std::string& value) {
  return {name, LabParamType::kString, value, 0, false, 0};
}
LabParam Number(const std::string& name, double value) {
  return {name, LabParamType::kNumber, "", value, false, 0};
}

TEST(NaiveModelParallel, EachStageRunsOneForwardAndOneBackward) {
  const PipelineShape shape{4, 1, 1};
  const auto orders = PipelineOrder(PipelineSchedule::kNaive, shape);
  ASSERT_EQ(orders.size(), 4u);
  for (const auto& order : orders) {
    ASSERT_EQ(order.size(), 2u);
    EXPECT_EQ(order[0].pass, PipelinePass::kForward);
    EXPECT_EQ(order[1].pass, PipelinePass::kBackward);
  }
  EXPECT_DOUBLE_EQ(FormulaBubbleOfStep(PipelineSchedule::kNaive, shape), 3.0 / 4.0);  // (p-1)/p idle
  EXPECT_EQ(ParsePipelineSchedule("naive"), PipelineSchedule::kNaive);
  EXPECT_THROW(CheckPipelineShape(PipelineSchedule::kNaive, {4, 2, 1}), Error);
}

TEST(NaiveModelParallel, IdlesMostOfTheStepAndThePipelineFillsIt) {
  // A wide model so that compute, not the transfers, sets the time.
  const std::vector<LabParam> wide = {Number("stages", 4), Number("width", 2048), Number("batch", 256),
                                      Number("layers", 8), LabParam{"timing_only", LabParamType::kBool, "", 0, true, 0}};
  std::vector<LabParam> naive = wide, gpipe = wide;
  naive.push_back(Text("schedule", "naive"));
  gpipe.push_back(Text("schedule", "gpipe"));
  gpipe.push_back(Number("microbatches", 16));
  const LabRunResult n = RunLabScenario("pipeline", naive);
  const LabRunResult g = RunLabScenario("pipeline", gpipe);
  // Every GPU idle for the other p-1 stages' work: at least (p-1)/p of the step.
  EXPECT_GE(n.measured.at("bubble_share_of_step"), 0.75 - 0.01);
  EXPECT_EQ(n.measured.at("formula_bubble_share_of_step"), 0.75);
  EXPECT_EQ(n.measured.at("peak_inflight"), 1);
  // The pipeline's 16 micro-batches: bubble (p-1)/(m+p-1) = 3/19, a faster step.
  EXPECT_LT(g.measured.at("bubble_share_of_step"), 0.25);
  EXPECT_LT(g.measured.at("span_ms"), 0.5 * n.measured.at("span_ms"));
}

}  // namespace
}  // namespace shardlab
