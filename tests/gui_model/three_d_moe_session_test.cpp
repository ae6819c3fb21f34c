// The app's 3D and MoE scenarios: the session runs them to a checked end,
// and the grid-group models the topology view and Gantt use agree with
// ParallelGrid; the MoE session's straggler is the engine's own.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <tuple>
#include <set>
#include <string>
#include <thread>

#include "app/gui/model/grid_groups.h"
#include "app/gui/model/session.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "tests/gui_model/poll_session.h"
#include "engine/scenarios/three_d_scenario.h"
#include "engine/scenarios/moe_scenario.h"

namespace shardlab::gui {
namespace {

using test::PollUntilDone;

ScenarioSettings ThreeD222() {
  ScenarioSettings s;
  s.scenario = "3d";
  s.SetParam("dp", "2");
  s.SetParam("pp", "2");
  s.SetParam("tp", "2");
  s.SetParam("microbatches", "4");
  s.SetParam("layers", "4");
  s.SetParam("width", "64");
  s.SetParam("batch", "32");
  return s;
}

TEST(ThreeDSession, RunsA2x2x2GridAndMatchesOneDevice) {
  Session session;
  const ScenarioSettings s = ThreeD222();
  ASSERT_EQ(session.Check(s), "");
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  ASSERT_NE(test::PreparedAs<PreparedThreeD>(session, "3d"), nullptr);
  EXPECT_EQ(session.plan(), &session.prepared()->plan);
  EXPECT_EQ(session.plan()->num_ranks, 8);
  EXPECT_EQ(session.store().event_count(), session.plan()->ops.size());
  const ThreeDSummary& out = test::Outcome<ThreeDSummary>(session);
  EXPECT_TRUE(out.check.checked) << out.check.not_checked_reason;
  EXPECT_TRUE(out.check.correct) << out.check.worst_tensor;
  EXPECT_GT(out.step_ns, 0);
  EXPECT_GT(out.compute_ns, 0);
  for (int k = 0; k < kGroupKindCount; ++k) EXPECT_GT(out.traffic[static_cast<std::size_t>(k)].total_sent_bytes, 0) << k;
  EXPECT_GT(out.mfu, 0);
  EXPECT_NE(session.Title().find("on dgx-a100"), std::string::npos) << session.Title();
}

TEST(ThreeDSession, CheckNamesTheFieldAndLargeModelsAreRefused) {
  Session session;
  ScenarioSettings s = ThreeD222();
  s.SetParam("dp", "4");  // 4 x 2 x 2 = 16 GPUs on an 8-GPU box
  EXPECT_FALSE(session.Check(s).empty());
  s = ThreeD222();
  s.SetParam("width", "33");  // not a multiple of tp 2
  EXPECT_NE(session.Check(s).find("width"), std::string::npos) << session.Check(s);
  s = ThreeD222();
  s.SetParam("width", "8192");
  s.SetParam("batch", "4096");
  EXPECT_EQ(session.Check(s).rfind("width: ", 0), 0u) << session.Check(s);
  EXPECT_FALSE(session.Start(s));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  // A paper-scale preset (the spec's `model`) is the CLI's, not the app's.
  s = ThreeD222();
  s.params["3d.model"] = "gpt3-175b";
  EXPECT_EQ(session.Check(s).rfind("model: ", 0), 0u) << session.Check(s);
}

TEST(GridGroups, ColourByCoordinateGivesEachRankItsGroup) {
  const ParallelGrid grid{2, 2, 2};
  const GridColouring tp = ColourByCoordinate(grid, GridColourMode::kTpGroup);
  ASSERT_EQ(tp.legend.size(), 4u);
  const GridColouring pp = ColourByCoordinate(grid, GridColourMode::kPpStage);
  ASSERT_EQ(pp.legend.size(), 2u);
  const GridColouring dp = ColourByCoordinate(grid, GridColourMode::kDpReplica);
  ASSERT_EQ(dp.legend.size(), 2u);
  for (int r = 0; r < 8; ++r) {
    const RankGroups g = grid.GroupsOf(r);
    const GridCoord c = grid.CoordOf(r);
    EXPECT_EQ(tp.colour_of_rank[static_cast<std::size_t>(r)], g.tp_group) << r;
    EXPECT_EQ(pp.colour_of_rank[static_cast<std::size_t>(r)], c.pp) << r;
    EXPECT_EQ(dp.colour_of_rank[static_cast<std::size_t>(r)], c.dp) << r;
  }
  // Megatron order: TP neighbours are consecutive ranks.
  EXPECT_EQ(tp.legend[3].label, "TP group 3 = ranks 6,7");
  EXPECT_EQ(pp.legend[1].label, "PP stage 1 = ranks 4,5,6,7");
  EXPECT_EQ(dp.legend[0].label, "DP replica 0 = ranks 0,1,4,5");
  // Every rank appears in exactly one legend entry.
  std::multiset<int> seen;
  for (const GridLegendEntry& e : tp.legend) seen.insert(e.ranks.begin(), e.ranks.end());
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(std::set<int>(seen.begin(), seen.end()).size(), 8u);
}

TEST(GridGroups, GanttGroupsSortByStageThenReplicaThenTp) {
  const ParallelGrid grid{2, 2, 2};
  const std::vector<GridRowGroup> groups = GanttGroupsByCoordinate(grid);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[1].header, "stage 0 \xC2\xB7 replica 1");
  std::vector<int> order;
  for (const GridRowGroup& g : groups) order.insert(order.end(), g.ranks.begin(), g.ranks.end());
  for (std::size_t i = 1; i < order.size(); ++i) {
    const GridCoord a = grid.CoordOf(order[i - 1]), b = grid.CoordOf(order[i]);
    EXPECT_TRUE(std::tie(a.pp, a.dp, a.tp) < std::tie(b.pp, b.dp, b.tp)) << i;
  }
  // Megatron order puts rank r at that position: the Gantt's rank-ordered
  // rows are already grouped by coordinate, and the view draws the headers.
  for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], static_cast<int>(i));
}

TEST(GridGroups, CollectiveGroupTextNamesTheKindAndRanks) {
  ThreeDParams params;
  params.grid = {2, 2, 2};
  params.microbatches = 2;
  params.model.layers = 4;
  params.model.width = 16;
  params.model.batch = 8;
  const ThreeDPlan plan = BuildThreeD(params);
  ASSERT_FALSE(plan.collectives.empty());
  std::set<std::string> kinds;
  for (int seq = 0; seq < static_cast<int>(plan.collectives.size()); ++seq) {
    const std::string text = CollectiveGroupText(plan, seq);
    kinds.insert(text.substr(0, 2));
    EXPECT_NE(text.find("(ranks "), std::string::npos) << text;
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"TP", "PP", "DP"}));
  EXPECT_EQ(CollectiveGroupText(plan, -1), "");
}

ScenarioSettings MoeHot() {
  ScenarioSettings s;
  s.scenario = "moe";
  s.SetParam("ranks", "4");
  s.SetParam("experts", "8");
  s.SetParam("top_k", "2");
  s.SetParam("tokens", "256");
  s.SetParam("hidden", "32");
  s.SetParam("ffn", "64");
  s.SetParam("capacity_factor", "4");
  s.SetParam("skew", "hot");
  return s;
}

TEST(MoeSession, HotExpertsGpuIsTheEnginesStraggler) {
  Session session;
  const ScenarioSettings s = MoeHot();
  ASSERT_EQ(session.Check(s), "");
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  ASSERT_NE(test::PreparedAs<PreparedMoe>(session, "moe"), nullptr);
  const MoeSummary& out = test::Outcome<MoeSummary>(session);
  EXPECT_TRUE(out.check.checked) << out.check.not_checked_reason;
  EXPECT_TRUE(out.check.correct);
  EXPECT_TRUE(out.bytes_match);

  // The same layer run by the engine alone.
  MoeScenario scenario;
  scenario.layer = test::PreparedAs<PreparedMoe>(session, "moe")->layer.config;
  std::unique_ptr<PreparedMoe> prepared = PrepareMoe(scenario);
  Executor executor(CreateBackend("sim"), prepared->layer.plan, prepared->topology, RunOptions{});
  VectorSink events;
  executor.RunToEnd(events);
  const MoeSummary engine = SummarizeMoe(*prepared, events.events, executor.backend(), &executor.plan());
  EXPECT_EQ(out.metrics.straggler, engine.metrics.straggler);
  EXPECT_EQ(out.metrics.straggler, 0);  // expert 0 lives on GPU 0
  EXPECT_GT(out.metrics.straggler_load, 1.2);
}

TEST(MoeSession, CheckNamesTheField) {
  Session session;
  ScenarioSettings s = MoeHot();
  s.SetParam("experts", "6");  // not divisible by 4 ranks
  EXPECT_EQ(session.Check(s).rfind("experts: ", 0), 0u) << session.Check(s);
  s = MoeHot();
  s.SetParam("skew", "spiky");
  EXPECT_EQ(session.Check(s).rfind("skew: ", 0), 0u) << session.Check(s);
}

}  // namespace
}  // namespace shardlab::gui

namespace shardlab::gui {
namespace {

TEST(GridGroups, EveryKindsTrafficUsesLinksAndTpStaysInItsPairs) {
  ThreeDParams params;
  params.grid = {2, 2, 2};
  params.microbatches = 2;
  params.model.layers = 4;
  params.model.width = 16;
  params.model.batch = 8;
  const ThreeDPlan plan = BuildThreeD(params);
  const Topology topology = LoadScenarioTopology("dgx-a100");
  const auto used = LinksByGroupKind(plan, plan.plan, topology);
  for (int k = 0; k < kGroupKindCount; ++k) {
    ASSERT_EQ(used[static_cast<std::size_t>(k)].size(), topology.links.size());
    int count = 0;
    for (bool u : used[static_cast<std::size_t>(k)]) count += u ? 1 : 0;
    EXPECT_GT(count, 0) << GroupKindName(GroupKind(k));
  }
  // On the NVSwitch box TP pairs (0,1), (2,3), ... use the links of their
  // own GPUs only: GPU 0's link is TP traffic, so is GPU 1's.
  const int gpu0 = topology.gpus[0];
  bool gpu0_tp = false;
  for (std::size_t l = 0; l < topology.links.size(); ++l) {
    const Link& link = topology.links[l];
    if ((link.a == gpu0 || link.b == gpu0) && used[0][l]) gpu0_tp = true;
  }
  EXPECT_TRUE(gpu0_tp);
}

}  // namespace
}  // namespace shardlab::gui
