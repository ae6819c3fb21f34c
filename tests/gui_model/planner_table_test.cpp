// The planner panel's table is the engine's ranking, cut to the top rows.
#include "app/gui/model/planner_table.h"

#include <gtest/gtest.h>

#include <tuple>

#include "engine/model/model_presets.h"
#include "engine/scenarios/collective_scenario.h"

namespace shardlab::gui {
namespace {

TEST(PlannerTable, RowsAreTheEnginesTopK) {
  PlannerSettings s;
  s.model = "gpt3-13b";
  s.gpus = 64;
  s.topology = "8x-dgx-a100-ib";
  s.top = 7;
  const PlannerTable table = RunPlanner(s);
  ASSERT_EQ(table.error, "");

  PlannerRequest request;
  request.model = FindModelPreset("gpt3-13b");
  request.gpus = 64;
  const PlannerResult engine = PlanParallelLayouts(request, LoadScenarioTopology("8x-dgx-a100-ib"));
  ASSERT_GE(engine.feasible.size(), 7u);
  EXPECT_EQ(table.feasible_count, static_cast<int>(engine.feasible.size()));
  ASSERT_EQ(table.rows.size(), 7u);
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const ParallelLayout& a = table.rows[i].layout;
    const ParallelLayout& b = engine.feasible[i].layout;
    EXPECT_EQ(table.rows[i].rank, static_cast<int>(i) + 1);
    EXPECT_EQ(std::tie(a.dp, a.pp, a.tp, a.zero_stage, a.micro_batch, a.interleave),
              std::tie(b.dp, b.pp, b.tp, b.zero_stage, b.micro_batch, b.interleave)) << i;
    EXPECT_EQ(a.recompute, b.recompute) << i;
    EXPECT_DOUBLE_EQ(table.rows[i].step_s, engine.feasible[i].time.step_ns / 1e9) << i;
    EXPECT_DOUBLE_EQ(table.rows[i].memory_bytes, engine.feasible[i].memory.total()) << i;
    if (i > 0) {
      EXPECT_LE(table.rows[i - 1].step_s, table.rows[i].step_s);
    }
  }
  int rejected = 0;
  for (const auto& [reason, count] : table.rejected) rejected += count;
  EXPECT_EQ(rejected, static_cast<int>(engine.rejected.size()));
}

TEST(PlannerTable, BadFieldsBecomeOneSentenceNamingTheField) {
  PlannerSettings s;
  s.model = "gpt5";
  EXPECT_EQ(RunPlanner(s).error.rfind("model: ", 0), 0u) << RunPlanner(s).error;
  s = PlannerSettings{};
  s.topology = "no-such-box";
  EXPECT_EQ(RunPlanner(s).error.rfind("topology: ", 0), 0u) << RunPlanner(s).error;
  s = PlannerSettings{};
  s.gpu_memory = "lots";
  EXPECT_EQ(RunPlanner(s).error.rfind("gpu-memory: ", 0), 0u) << RunPlanner(s).error;
  s = PlannerSettings{};
  s.gpus = 1000;  // more than 8 boxes hold
  EXPECT_FALSE(RunPlanner(s).error.empty());
}

}  // namespace
}  // namespace shardlab::gui
