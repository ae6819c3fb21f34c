// The dp-train metrics panel's rows: each technique's quantity with its
// formula or bound beside it, a broken bound marked, nothing before the run
// is done; the loss curves and skipped steps from the run.
#include "app/gui/model/dp_train_view.h"

#include <gtest/gtest.h>

#include "engine/scenarios/scenario_spec.h"
#include "engine/scenarios/dp_train_scenario.h"

namespace shardlab::gui {
namespace {

ScenarioParams Params(std::vector<std::pair<const char*, const char*>> values) {
  ScenarioParams p(*FindScenario("dp-train"));
  p.Set("steps", "6");
  for (const auto& [name, value] : values) p.Set(name, value);
  return p;
}

const DpTrainRow* Row(const DpTrainView& v, const std::string& name) {
  for (const DpTrainRow& r : v.rows)
    if (r.name == name) return &r;
  return nullptr;
}

TEST(DpTrainView, ShowsTheSkippedStepAndTheScaleOfALossScaleRun) {
  const ScenarioParams p = Params({{"precision", "fp16"}, {"loss_scale", "1024"}, {"overflow", "1@2"}});
  const auto prepared = PrepareDpTrain(DpTrainFromParams(p));
  DpTrainSummary summary = MeasureDpTrain(p);
  const DpTrainView before = PrepareDpTrainView(*prepared, summary, false);
  EXPECT_TRUE(before.rows.empty());
  EXPECT_EQ(before.loss.size(), 6u);
  EXPECT_EQ(before.skipped_steps, std::vector<int>{2});
  EXPECT_NE(before.title.find("fp16 + loss scale"), std::string::npos);
  const DpTrainView after = PrepareDpTrainView(*prepared, summary, true);
  const DpTrainRow* skipped = Row(after, "skipped");
  ASSERT_NE(skipped, nullptr);
  EXPECT_EQ(skipped->value, "1 steps");
  EXPECT_NE(skipped->note.find("loss scale now 512"), std::string::npos);
  EXPECT_FALSE(skipped->bad);
  // A broken invariant is marked: pretend an update wrote inf.
  summary.measured["nonfinite_updates"] = 1;
  EXPECT_TRUE(Row(PrepareDpTrainView(*prepared, summary, true), "skipped")->bad);
}

TEST(DpTrainView, CompressionShowsItsErrorAgainstTheBound) {
  const ScenarioParams p = Params({{"compress", "int8"}});
  const auto prepared = PrepareDpTrain(DpTrainFromParams(p));
  DpTrainSummary summary = MeasureDpTrain(p);
  const DpTrainRow* error = Row(PrepareDpTrainView(*prepared, summary, true), "error");
  ASSERT_NE(error, nullptr);
  EXPECT_FALSE(error->bad);
  summary.measured["compression_error_ratio"] = 1.5;
  EXPECT_TRUE(Row(PrepareDpTrainView(*prepared, summary, true), "error")->bad);
  EXPECT_EQ(Row(PrepareDpTrainView(*prepared, summary, true), "skipped"), nullptr);  // fp32
}

}  // namespace
}  // namespace shardlab::gui
