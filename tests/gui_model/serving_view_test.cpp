// The serving view's model: every served request is one row in each
// policy's lane, its segments in time order on one shared axis; with the
// same arrivals continuous batching serves at least as many tokens per
// second as static batching, and the verdict says by how much.
#include "app/gui/model/serving_view.h"

#include <gtest/gtest.h>

#include <set>

namespace shardlab::gui {
namespace {

InferenceRun SmallRun() {
  InferenceScenario s;
  s.timing_only = true;  // the view reads the served runs; the real run has its own tests
  s.all_policies = true;
  s.record_steps = true;
  s.arrivals.requests = 40;
  s.arrivals.rate_per_s = 400;  // more than one replica serves: requests queue
  return RunInference(s);
}

TEST(ServingView, EveryRequestIsOneRowOfOrderedSegmentsInEachPolicysLane) {
  const InferenceRun run = SmallRun();
  const ServingChart chart = BuildServingChart(run);
  ASSERT_EQ(chart.lanes.size(), 3u);
  for (const ServingLane& lane : chart.lanes) {
    SCOPED_TRACE(lane.policy);
    ASSERT_EQ(lane.rows.size(), 40u);
    std::set<int> ids;
    for (std::size_t i = 0; i < lane.rows.size(); ++i) {
      const ServingRow& r = lane.rows[i];
      ids.insert(r.request);
      EXPECT_LE(r.arrival_ns, r.admitted_ns);
      EXPECT_LE(r.admitted_ns, r.first_token_ns);
      EXPECT_LT(r.first_token_ns, r.finish_ns + 1);
      EXPECT_LE(r.finish_ns, chart.axis_end_ns);
      if (i > 0) EXPECT_LE(lane.rows[i - 1].arrival_ns, r.arrival_ns);
    }
    EXPECT_EQ(ids.size(), 40u);
    EXPECT_FALSE(lane.kv_blocks.empty());
  }
  const ServingLane& fixed = chart.lanes.front();
  const ServingLane& continuous = chart.lanes.back();
  EXPECT_EQ(fixed.policy, "static");
  EXPECT_EQ(continuous.policy, "continuous");
  EXPECT_GE(continuous.tokens_per_s, fixed.tokens_per_s);
  const std::string verdict = ServingVerdict(chart);
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2fx", continuous.tokens_per_s / fixed.tokens_per_s);
  EXPECT_NE(verdict.find(ratio), std::string::npos) << verdict;
}

TEST(ServingView, OnePolicyGivesNoVerdict) {
  InferenceRun run = SmallRun();
  run.results.resize(1);
  EXPECT_EQ(BuildServingChart(run).lanes.size(), 1u);
  EXPECT_EQ(ServingVerdict(BuildServingChart(run)), "");
}

}  // namespace
}  // namespace shardlab::gui
