// The app's session passes every scenario's fault switches to its run, as
// the CLI and the lab runner do: a slowed pipeline stage's forward time is
// FACTOR times its own (the simulator scales each of its ops), a failed rank
// in ZeRO ends the run with the report of the collective it never joined,
// and a rank out of range is refused before anything runs.
#include "app/gui/model/session.h"
#include "app/gui/model/scenario_fields.h"

#include <gtest/gtest.h>
#include "engine/scenarios/pipeline_scenario.h"
#include "tests/gui_model/poll_session.h"

#include <chrono>
#include <string>
#include <thread>

namespace shardlab::gui {
namespace {

// Sets a parameter the way the scenario panel does.
void Set(ScenarioSettings* s, const char* name, const std::string& text) {
  const ScenarioSpec& spec = *FindScenario(s->scenario);
  SetParamText(s, spec, *spec.FindParam(name), text);
}

bool RunToEnd(Session& session) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (session.state() == SessionState::kRunning) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    session.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

ScenarioSettings SmallPipeline() {
  ScenarioSettings s;
  s.scenario = "pipeline";
  s.SetParam("schedule", "gpipe");
  s.SetParam("stages", "4");
  s.SetParam("microbatches", "4");
  s.SetParam("layers", "8");
  s.SetParam("width", "32");
  s.SetParam("batch", "16");
  s.topology = "dgx-a100";
  return s;
}

TEST(SessionFaults, ASlowStageOfAPipelineRunsItsOpsFactorTimesLonger) {
  Session plain;
  ASSERT_TRUE(plain.Start(SmallPipeline())) << plain.error();
  ASSERT_TRUE(RunToEnd(plain));
  ASSERT_EQ(plain.state(), SessionState::kDone) << plain.error();
  ScenarioSettings slowed = SmallPipeline();
  Set(&slowed, "slow_rank", "1:3");
  Session slow;
  ASSERT_TRUE(slow.Start(slowed)) << slow.error();
  ASSERT_TRUE(RunToEnd(slow));
  ASSERT_EQ(slow.state(), SessionState::kDone) << slow.error();
  const PipelineStageMetrics& a = test::Outcome<PipelineOutcomeSummary>(plain).metrics.stages[1];
  const PipelineStageMetrics& b = test::Outcome<PipelineOutcomeSummary>(slow).metrics.stages[1];
  EXPECT_NEAR(b.forward_ns, 3 * a.forward_ns, 1e-6 * a.forward_ns);
  EXPECT_NEAR(b.backward_ns, 3 * a.backward_ns, 1e-6 * a.backward_ns);
  const PipelineStageMetrics& other_a = test::Outcome<PipelineOutcomeSummary>(plain).metrics.stages[2];
  const PipelineStageMetrics& other_b = test::Outcome<PipelineOutcomeSummary>(slow).metrics.stages[2];
  EXPECT_NEAR(other_b.forward_ns, other_a.forward_ns, 1e-6 * other_a.forward_ns);  // only rank 1
  EXPECT_GT(test::Outcome<PipelineOutcomeSummary>(slow).metrics.step_ns, test::Outcome<PipelineOutcomeSummary>(plain).metrics.step_ns);
  EXPECT_TRUE(test::Outcome<PipelineOutcomeSummary>(slow).check.correct);
}

TEST(SessionFaults, AFailedRankInZeroEndsTheRunWithItsReport) {
  ScenarioSettings s;
  s.scenario = "zero";
  s.SetParam("zero_stage", "2");
  s.topology = "dgx-a100";
  Set(&s, "fail_rank", "1@3");
  Session session;
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(RunToEnd(session));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_NE(session.error().find("rank 1 failed at step 3 (fail_rank 1@3) and never joined collective #"),
            std::string::npos)
      << session.error();
}

// A warm-up run that fails ends the run with the same report, and the
// session lets go of the failed run's executor: the next Start (which
// cancels whatever runs) reaches no executor that no longer exists.
TEST(SessionFaults, AFailedWarmUpRunEndsTheRunAndTheNextRunStarts) {
  ScenarioSettings s;
  s.scenario = "zero";
  s.SetParam("zero_stage", "2");
  s.topology = "dgx-a100";
  s.warmup = 1;
  Set(&s, "fail_rank", "1@3");
  Session session;
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(RunToEnd(session));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_NE(session.error().find("rank 1 failed at step 3"), std::string::npos) << session.error();

  Set(&s, "fail_rank", "none");
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(RunToEnd(session));
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
}

TEST(SessionFaults, ARankOutOfRangeIsRefusedBeforeTheRun) {
  ScenarioSettings s = SmallPipeline();
  Set(&s, "slow_rank", "9:2");
  Session session;
  EXPECT_FALSE(session.Start(s));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_EQ(session.error().rfind("slow_rank: rank 9 is out of range", 0), 0u) << session.error();
}

}  // namespace
}  // namespace shardlab::gui
