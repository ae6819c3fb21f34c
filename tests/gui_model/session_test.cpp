#include "app/gui/model/session.h"
#include "tests/gui_model/ring_settings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include "tests/gui_model/poll_session.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab::gui {
namespace {

/// Polls like the UI thread does until the run ends; false on timeout.
using test::PollUntilDone;

using test::RingAllReduce4x1K;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int Mod(int x, int n) { return ((x % n) + n) % n; }

TEST(Session, RunsARingAllReduceToACheckedEnd) {
  Session session;
  ASSERT_TRUE(session.Start(RingAllReduce4x1K())) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  ASSERT_NE(session.prepared(), nullptr);
  EXPECT_EQ(session.num_steps(), 6);
  EXPECT_EQ(session.steps_done(), 6);
  EXPECT_EQ(session.store().event_count(), session.plan()->ops.size());
  EXPECT_EQ(session.store().event_count(), 48u);  // 6 steps x 4 ranks x (send + recv)
  EXPECT_EQ(session.store().steps_seen(), 6);
  EXPECT_EQ(session.dropped_events(), 0u);
  const CollectiveOutcomeSummary& outcome = test::Outcome<CollectiveOutcomeSummary>(session);
  EXPECT_EQ(outcome.steps, 6);
  EXPECT_EQ(outcome.events, 48u);
  EXPECT_TRUE(outcome.checked);
  EXPECT_TRUE(outcome.verify.correct);
  EXPECT_EQ(outcome.verify.checked, 4 * 256);
  EXPECT_DOUBLE_EQ(outcome.metrics.time_ns, session.store().end_ns());
  EXPECT_GT(outcome.metrics.busbw_gbps, 0);
}

// The buffer view after each step against the schedule ring.cpp states,
// replayed here on sets of ranks (n ranks, identity ring order):
//   reduce-scatter step s (s = 0..n-2): position p sends ring chunk p-1-s,
//                                       p+1 adds it to its own;
//   all-gather step s (s = 0..n-2):     position p sends ring chunk p-s,
//                                       p+1 overwrites its own with it.
// Snapshot k is taken after plan step k-1, so in reduce-scatter snapshot k
// rank r has just received chunk (r-1-k) mod n, which then holds exactly the
// k+1 consecutive ranks r-k .. r (mod n).
TEST(Session, BufferViewFollowsTheRingSchedule) {
  Session session;
  ASSERT_TRUE(session.Start(RingAllReduce4x1K())) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  const int n = 4;
  const std::vector<BufferSnapshot>& snapshots = session.buffer_snapshots();
  ASSERT_EQ(snapshots.size(), static_cast<std::size_t>(2 * (n - 1) + 1));

  std::vector<std::vector<std::set<int>>> held(n, std::vector<std::set<int>>(n));
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) held[r][c] = {r};

  for (int k = 0; k <= 2 * (n - 1); ++k) {
    if (k >= 1) {
      const auto before = held;
      const bool reduce_scatter = k <= n - 1;
      const int s = reduce_scatter ? k - 1 : k - n;
      for (int p = 0; p < n; ++p) {
        const int to = (p + 1) % n;
        const int chunk = reduce_scatter ? Mod(p - 1 - s, n) : Mod(p - s, n);
        held[to][chunk] = before[p][chunk];
        if (reduce_scatter) {
          held[to][chunk].insert(before[to][chunk].begin(), before[to][chunk].end());
        }
      }
    }
    const BufferSnapshot& snap = snapshots[static_cast<std::size_t>(k)];
    ASSERT_EQ(snap.step, k);
    ASSERT_EQ(snap.ranks.size(), static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(snap.ranks[r].size(), static_cast<std::size_t>(n));
      for (int c = 0; c < n; ++c) {
        const std::vector<int> expected(held[r][c].begin(), held[r][c].end());
        EXPECT_EQ(snap.ranks[r][c].contributors, expected)
            << "after step " << k << ", rank " << r << ", chunk " << c;
        EXPECT_EQ(snap.ranks[r][c].complete, static_cast<int>(expected.size()) == n)
            << "after step " << k << ", rank " << r << ", chunk " << c;
      }
      if (k >= 1 && k <= n - 1) {
        std::vector<int> consecutive;
        for (int j = 0; j <= k; ++j) consecutive.push_back(Mod(r - j, n));
        std::sort(consecutive.begin(), consecutive.end());
        EXPECT_EQ(snap.ranks[r][Mod(r - 1 - k, n)].contributors, consecutive)
            << "reduce-scatter step " << k << ", rank " << r;
      }
    }
  }
  // The stated rule and the replay agree on the end: everything everywhere.
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      EXPECT_EQ(snapshots.back().ranks[r][c].contributors, (std::vector<int>{0, 1, 2, 3}));
      EXPECT_TRUE(snapshots.back().ranks[r][c].complete);
    }
  }
  EXPECT_EQ(snapshots.front().ranks[2][1].label, "B2");
  EXPECT_EQ(snapshots.back().ranks[0][0].label, "A0+A1+A2+A3");
}

TEST(Session, ReduceScatterCompletesOnlyEachRanksOwnChunk) {
  Session session;
  ScenarioSettings s = RingAllReduce4x1K();
  s.scenario = "reducescatter";
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  const BufferSnapshot& last = session.buffer_snapshots().back();
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(last.ranks[r][c].complete, c == r) << r << " " << c;
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
}

TEST(Session, BadSettingsAreRejectedAndTheSessionStaysUsable) {
  Session session;
  ScenarioSettings bad = RingAllReduce4x1K();
  bad.SetParam("ranks", "16");
  EXPECT_FALSE(session.Start(bad));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_TRUE(Contains(session.error(), "8 GPUs")) << session.error();
  EXPECT_EQ(session.prepared(), nullptr);
  session.Poll();  // harmless

  ASSERT_TRUE(session.Start(RingAllReduce4x1K())) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_TRUE(session.error().empty());
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
}

TEST(Session, CheckSaysWhatIsWrongInOneSentence) {
  Session session;
  ScenarioSettings s = RingAllReduce4x1K();
  EXPECT_EQ(session.Check(s), "");
  s.SetParam("ranks", "16");
  const std::string too_many = session.Check(s);
  EXPECT_TRUE(Contains(too_many, "8 GPUs")) << too_many;
  EXPECT_EQ(session.Check(s), too_many);  // cached, same answer
  s = RingAllReduce4x1K();
  s.SetParam("size", "12Q");
  EXPECT_EQ(session.Check(s).rfind("size: ", 0), 0u) << session.Check(s);
  s = RingAllReduce4x1K();
  s.scenario = "allreduse";
  EXPECT_EQ(session.Check(s).rfind("scenario: ", 0), 0u) << session.Check(s);
  s = RingAllReduce4x1K();
  s.SetParam("algo", "direct");
  EXPECT_EQ(session.Check(s).rfind("algo: ", 0), 0u) << session.Check(s);
  s = RingAllReduce4x1K();
  s.topology = "dgx-z900";
  EXPECT_EQ(session.Check(s).rfind("topology: ", 0), 0u) << session.Check(s);
  s = RingAllReduce4x1K();
  s.SetParam("ring_order", "0,1,1,3");
  EXPECT_EQ(session.Check(s).rfind("ring order: ", 0), 0u) << session.Check(s);
  EXPECT_EQ(session.state(), SessionState::kEmpty);  // Check never starts anything
}

TEST(Session, CheckIsCheapForAHugeRunBecauseItBuildsNoPlan) {
  Session session;
  ScenarioSettings s;
  s.SetParam("ranks", "1024");
  s.topology = "128x-dgx-a100-ib";
  s.SetParam("size", "1G");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(session.Check(s), "");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(Session, LargeRunsAreTimedOnlyAndSayWhy) {
  Session session;
  ScenarioSettings s = RingAllReduce4x1K();
  s.SetParam("ranks", "8");
  s.SetParam("size", "256M");  // 8 x 256 MiB of host data: above the 1 GiB limit
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_FALSE(test::Outcome<CollectiveOutcomeSummary>(session).checked);
  EXPECT_TRUE(Contains(session.summary().verdict.reason, "host memory"))
      << session.summary().verdict.reason;
  EXPECT_EQ(session.buffer_snapshots().size(), 15u);  // provenance needs no data
}

TEST(Session, CancelStopsARunAndAnotherStartWorks) {
  Session session;
  ScenarioSettings big = RingAllReduce4x1K();
  big.SetParam("ranks", "8");
  big.SetParam("size", "64M");
  ASSERT_TRUE(session.Start(big)) << session.error();
  session.Cancel();
  EXPECT_NE(session.state(), SessionState::kRunning);
  ASSERT_TRUE(session.Start(RingAllReduce4x1K())) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
  // A run still going when the session is destroyed is cancelled and joined.
  ASSERT_TRUE(session.Start(big)) << session.error();
}

// The run controls: a run started paused takes no step, Step lets exactly
// one go, Play runs it to the end, and the result is the same as a run
// that was never held (its snapshots, its check).
TEST(Session, APausedRunTakesOneStepPerStepAndPlayFinishesIt) {
  auto wait_for_steps = [](Session& session, int steps) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (session.steps_done() < steps && std::chrono::steady_clock::now() < deadline) {
      session.Poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Held runs stay held: a little longer changes nothing.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    session.Poll();
  };
  Session session;
  ASSERT_TRUE(session.Start(RingAllReduce4x1K(), /*paused=*/true)) << session.error();
  EXPECT_TRUE(session.paused());
  wait_for_steps(session, 0);
  EXPECT_EQ(session.steps_done(), 0);
  EXPECT_EQ(session.state(), SessionState::kRunning);
  session.Step();
  wait_for_steps(session, 1);
  EXPECT_EQ(session.steps_done(), 1);
  session.Step();
  session.Step();
  wait_for_steps(session, 3);
  EXPECT_EQ(session.steps_done(), 3);
  EXPECT_EQ(session.state(), SessionState::kRunning);
  session.Play();
  EXPECT_FALSE(session.paused());
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_EQ(session.steps_done(), session.num_steps());
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
  EXPECT_TRUE(session.summary().verdict.correct());
  EXPECT_EQ(session.buffer_snapshots().size(), static_cast<std::size_t>(session.num_steps()) + 1);
  // A held run is cancelled as any other.
  ASSERT_TRUE(session.Start(RingAllReduce4x1K(), /*paused=*/true)) << session.error();
  session.Cancel();
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_EQ(session.error(), "run cancelled");
}

ScenarioSettings Pipeline1F1B() {
  ScenarioSettings s;
  s.scenario = "pipeline";
  s.SetParam("schedule", "1f1b");
  s.SetParam("stages", "4");
  s.SetParam("microbatches", "8");
  s.SetParam("layers", "8");
  s.SetParam("width", "32");
  s.SetParam("batch", "16");
  s.topology = "dgx-a100";
  return s;
}

TEST(Session, RunsAPipelineAndChecksItAgainstOneDevice) {
  Session session;
  ASSERT_TRUE(session.Start(Pipeline1F1B())) << session.error();
  const std::uint64_t first_run = session.run_id();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_EQ(test::PreparedAs<PreparedCollective>(session, "collective"), nullptr);
  ASSERT_NE(test::PreparedAs<PreparedPipeline>(session, "pipeline"), nullptr);
  ASSERT_NE(session.plan(), nullptr);
  EXPECT_EQ(session.topology()->name, "dgx-a100");
  EXPECT_EQ(session.store().event_count(), session.plan()->ops.size());
  EXPECT_TRUE(Contains(session.Title(), "1F1B")) << session.Title();
  EXPECT_GT(session.expected_ns(), 0);
  const PipelineOutcomeSummary& out = test::Outcome<PipelineOutcomeSummary>(session);
  EXPECT_TRUE(out.check.checked);
  EXPECT_TRUE(out.check.correct) << out.check.worst_tensor;
  ASSERT_EQ(out.metrics.stages.size(), 4u);
  for (int st = 0; st < 4; ++st) EXPECT_EQ(out.metrics.stages[static_cast<std::size_t>(st)].peak_inflight, 4 - st);
  EXPECT_NEAR(out.metrics.formula_bubble_over_useful, 3.0 / 8.0, 1e-12);
  EXPECT_TRUE(session.buffer_snapshots().empty());

  // Back to a collective: the pipeline is gone, and the run id moved on.
  ASSERT_TRUE(session.Start(RingAllReduce4x1K())) << session.error();
  EXPECT_GT(session.run_id(), first_run);
  EXPECT_EQ(test::PreparedAs<PreparedPipeline>(session, "pipeline"), nullptr);
  ASSERT_TRUE(PollUntilDone(session));
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
}

TEST(Session, PipelineCheckNamesTheField) {
  Session session;
  ScenarioSettings s = Pipeline1F1B();
  EXPECT_EQ(session.Check(s), "");
  s.SetParam("stages", "16");
  EXPECT_TRUE(Contains(session.Check(s), "stages")) << session.Check(s);
  s = Pipeline1F1B();
  s.SetParam("microbatches", "3");  // does not divide 16 rows
  EXPECT_TRUE(Contains(session.Check(s), "microbatches")) << session.Check(s);
  s = Pipeline1F1B();
  s.SetParam("schedule", "interleaved");
  s.SetParam("chunks", "3");  // 8 layers over 4 x 3 chunks
  EXPECT_TRUE(Contains(session.Check(s), "chunks")) << session.Check(s);
  s = Pipeline1F1B();
  s.SetParam("schedule", "zigzag");
  EXPECT_TRUE(Contains(session.Check(s), "schedule")) << session.Check(s);
  EXPECT_FALSE(session.Start(s));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_EQ(session.plan(), nullptr);
}

TEST(Session, BigPipelinesAreTimedOnlyAndSayWhy) {
  Session session;
  ScenarioSettings s = Pipeline1F1B();
  s.SetParam("width", "4096");
  s.SetParam("batch", "256");
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_FALSE(test::Outcome<PipelineOutcomeSummary>(session).check.checked);
  EXPECT_TRUE(Contains(session.timing_only_reason(), "GFLOP")) << session.timing_only_reason();
  EXPECT_EQ(session.summary().verdict.reason, session.timing_only_reason());
}

ScenarioSettings TpMlp() {
  ScenarioSettings s;
  s.scenario = "tp";
  s.SetParam("layer", "mlp");
  s.SetParam("tp", "4");
  s.SetParam("batch", "2");
  s.SetParam("seq", "8");
  s.SetParam("hidden", "32");
  s.topology = "dgx-a100";
  return s;
}

TEST(Session, RunsATensorParallelMlpAndChecksItAgainstOneDevice) {
  Session session;
  ASSERT_EQ(session.Check(TpMlp()), "");
  ASSERT_TRUE(session.Start(TpMlp())) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  ASSERT_NE(test::PreparedAs<PreparedTp>(session, "tp"), nullptr);
  EXPECT_EQ(test::PreparedAs<PreparedCollective>(session, "collective"), nullptr);
  EXPECT_EQ(test::PreparedAs<PreparedPipeline>(session, "pipeline"), nullptr);
  ASSERT_NE(session.plan(), nullptr);
  EXPECT_EQ(session.plan(), &session.prepared()->plan);
  EXPECT_EQ(session.topology()->name, "dgx-a100");
  EXPECT_EQ(session.backend(), "sim");
  EXPECT_EQ(session.store().event_count(), session.plan()->ops.size());
  EXPECT_GT(session.expected_ns(), 0);
  EXPECT_TRUE(Contains(session.Title(), "dgx-a100")) << session.Title();
  const TpSummary& out = test::Outcome<TpSummary>(session);
  EXPECT_TRUE(out.check.checked) << out.check.not_checked_reason;
  EXPECT_TRUE(out.check.correct) << out.check.worst_tensor;
  EXPECT_EQ(out.metrics.tp, 4);
  EXPECT_EQ(out.metrics.forward_allreduces, 1);  // g after B
  EXPECT_EQ(out.metrics.backward_allreduces, 1); // f before A
  EXPECT_GT(out.metrics.comm_ns, 0);
  EXPECT_GT(out.metrics.compute_ns, 0);
  EXPECT_TRUE(session.timing_only_reason().empty());
  EXPECT_TRUE(session.buffer_snapshots().empty());
}

TEST(Session, RunsATransformerLayerWithSequenceParallelism) {
  Session session;
  ScenarioSettings s = TpMlp();
  s.SetParam("layer", "transformer");
  s.SetParam("heads", "4");
  s.SetParam("sequence_parallel", "true");
  ASSERT_EQ(session.Check(s), "");
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  const TpSummary& out = test::Outcome<TpSummary>(session);
  EXPECT_TRUE(out.check.correct) << out.check.worst_tensor;
  // Two all-reduces each way (the seed text's four per layer), each an RS + AG pair.
  EXPECT_EQ(out.metrics.forward_allreduces, 2);
  EXPECT_EQ(out.metrics.backward_allreduces, 2);
  EXPECT_TRUE(test::PreparedAs<PreparedTp>(session, "tp")->layer.config.sequence_parallel);
}

TEST(Session, TensorParallelCheckNamesTheField) {
  Session session;
  ScenarioSettings s = TpMlp();
  s.SetParam("tp", "16");  // dgx-a100 has 8 GPUs
  EXPECT_TRUE(Contains(session.Check(s), "tp")) << session.Check(s);
  s = TpMlp();
  s.SetParam("layer", "conv");
  EXPECT_TRUE(Contains(session.Check(s), "layer")) << session.Check(s);
  s = TpMlp();
  s.SetParam("ffn", "30");  // does not split over 4 GPUs
  EXPECT_TRUE(Contains(session.Check(s), "ffn")) << session.Check(s);
  s = TpMlp();
  s.SetParam("layer", "attention");
  s.SetParam("heads", "3");  // does not divide H = 32
  EXPECT_TRUE(Contains(session.Check(s), "heads")) << session.Check(s);
  s = TpMlp();
  s.SetParam("layer", "column");
  s.SetParam("sequence_parallel", "true");
  EXPECT_TRUE(Contains(session.Check(s), "sequence-parallel")) << session.Check(s);
  EXPECT_FALSE(session.Start(s));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_EQ(session.plan(), nullptr);
  EXPECT_EQ(test::PreparedAs<PreparedTp>(session, "tp"), nullptr);
  // The session stays usable.
  ASSERT_TRUE(session.Start(TpMlp())) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
}

TEST(Session, BigTensorParallelLayersAreTimedOnlyAndSayWhy) {
  // Too much arithmetic to check at once: 512 tokens x 512 x 2048, forward
  // and backward, is about 6 GFLOP (the app checks up to 2).
  Session session;
  ScenarioSettings s = TpMlp();
  s.SetParam("hidden", "512");
  s.SetParam("seq", "256");
  ASSERT_EQ(session.Check(s), "");
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_FALSE(test::Outcome<TpSummary>(session).check.checked);
  EXPECT_TRUE(Contains(session.timing_only_reason(), "GFLOP")) << session.timing_only_reason();
  EXPECT_EQ(session.summary().verdict.reason, session.timing_only_reason());

  // Too big for the engine's host buffers: not an error in the app, a
  // timing-only run in the engine's words.
  s.SetParam("hidden", "1024");
  s.SetParam("seq", "512");
  s.SetParam("batch", "4");
  EXPECT_EQ(session.Check(s), "");
  ASSERT_TRUE(session.Start(s)) << session.error();
  EXPECT_EQ(session.timing_only_reason().rfind("timing only: ", 0), 0u) << session.timing_only_reason();
  EXPECT_TRUE(Contains(session.timing_only_reason(), "host buffers")) << session.timing_only_reason();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_FALSE(test::Outcome<TpSummary>(session).check.checked);
  EXPECT_GT(test::Outcome<TpSummary>(session).metrics.step_ns, 0);

  // What timing-only cannot fix is still an error.
  s.SetParam("tp", "16");
  EXPECT_TRUE(Contains(session.Check(s), "tp")) << session.Check(s);
}

ScenarioSettings ZeroDefaults(int stage) {
  ScenarioSettings s;
  s.scenario = "zero";
  s.SetParam("zero_stage", std::to_string(stage));
  s.topology = "dgx-a100";
  s.SetParam("bucket", "16K");  // two buckets (the unified default, 25M, makes one)
  return s;
}

TEST(Session, RunsZeroStagesAndMeasuresMemoryPerRank) {
  Session session;
  std::vector<Bytes> optimizer_states;
  for (int stage = 0; stage <= 3; ++stage) {
    const ScenarioSettings s = ZeroDefaults(stage);
    ASSERT_EQ(session.Check(s), "") << stage;
    ASSERT_TRUE(session.Start(s)) << session.error();
    ASSERT_TRUE(PollUntilDone(session));
    ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
    ASSERT_NE(test::PreparedAs<PreparedZero>(session, "zero"), nullptr);
    EXPECT_EQ(test::PreparedAs<PreparedTp>(session, "tp"), nullptr);
    EXPECT_EQ(test::PreparedAs<PreparedCollective>(session, "collective"), nullptr);
    EXPECT_EQ(session.plan(), &session.prepared()->plan);
    EXPECT_EQ(session.store().event_count(), session.plan()->ops.size());
    EXPECT_GT(session.expected_ns(), 0);
    EXPECT_TRUE(Contains(session.Title(), stage == 0 ? "data parallel" : "ZeRO-" + std::to_string(stage)))
        << session.Title();
    EXPECT_EQ(session.run_params()->Int("k"), 12);
    const ZeroSummary& out = test::Outcome<ZeroSummary>(session);
    EXPECT_TRUE(out.check.checked) << out.check.not_checked_reason;
    EXPECT_TRUE(out.check.correct) << out.check.parameter_error;
    ASSERT_EQ(out.memory.size(), 4u);
    optimizer_states.push_back(out.memory[0].persistent[static_cast<int>(MemoryCategory::kOptimizerStates)]);
    EXPECT_NEAR(out.sent_elements_per_step / out.formula_elements_per_step, 1.0, 0.01);
    EXPECT_EQ(out.collectives_per_step, stage == 0 ? 2 : stage < 3 ? 4 : 12);  // two buckets; four layers
    EXPECT_TRUE(session.timing_only_reason().empty());
  }
  EXPECT_EQ(optimizer_states[0], 4 * optimizer_states[1]);
}

TEST(Session, ZeroCheckNamesTheField) {
  Session session;
  ScenarioSettings s = ZeroDefaults(2);
  s.SetParam("zero_stage", "4");
  EXPECT_TRUE(Contains(session.Check(s), "stage: ")) << session.Check(s);
  s = ZeroDefaults(2);
  s.SetParam("batch", "30");  // does not split over 4 ranks
  EXPECT_TRUE(Contains(session.Check(s), "batch: ")) << session.Check(s);
  s = ZeroDefaults(2);
  s.SetParam("ranks", "16");
  EXPECT_TRUE(Contains(session.Check(s), "ranks: ")) << session.Check(s);
  s = ZeroDefaults(2);
  s.SetParam("bucket", "lots");
  EXPECT_TRUE(Contains(session.Check(s), "bucket: ")) << session.Check(s);
  s = ZeroDefaults(2);
  s.SetParam("k", "10");
  EXPECT_TRUE(Contains(session.Check(s), "k: ")) << session.Check(s);
  EXPECT_FALSE(session.Start(s));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_EQ(test::PreparedAs<PreparedZero>(session, "zero"), nullptr);
  // The seed texts' K is a choice of the views, not a different run.
  s.SetParam("k", "8");
  ASSERT_TRUE(session.Start(s)) << session.error();
  EXPECT_EQ(session.run_params()->Int("k"), 8);
  ASSERT_TRUE(PollUntilDone(session));
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
}

TEST(Session, BigZeroModelsAreTimedOnlyAndSayWhy) {
  Session session;
  // Too big for the host: the engine's "params: ..." becomes the reason.
  ScenarioSettings s = ZeroDefaults(3);
  s.SetParam("ranks", "8");
  s.SetParam("width", "4096");
  s.SetParam("layers", "8");
  s.SetParam("batch", "64");
  s.SetParam("steps", "1");
  ASSERT_EQ(session.Check(s), "");
  ASSERT_TRUE(session.Start(s)) << session.error();
  EXPECT_EQ(session.timing_only_reason().rfind("timing only: a real run of", 0), 0u) << session.timing_only_reason();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  const ZeroSummary& out = test::Outcome<ZeroSummary>(session);
  EXPECT_FALSE(out.check.checked);
  EXPECT_EQ(session.summary().verdict.reason, session.timing_only_reason());
  EXPECT_GT(out.step_ns, 0);
  ASSERT_EQ(out.memory.size(), 8u);  // measured in timing-only runs too
  EXPECT_NEAR(out.memory[0].persistent[static_cast<int>(MemoryCategory::kParameters)] / out.formula.parameters, 1.0,
              1e-3);

  // Small enough to hold, too much arithmetic to check at once.
  s.SetParam("width", "1024");
  s.SetParam("layers", "4");
  s.SetParam("batch", "512");
  s.SetParam("steps", "2");
  ASSERT_EQ(session.Check(s), "");
  ASSERT_TRUE(session.Start(s)) << session.error();
  EXPECT_TRUE(Contains(session.timing_only_reason(), "GFLOP")) << session.timing_only_reason();
  ASSERT_TRUE(PollUntilDone(session));
  EXPECT_FALSE(test::Outcome<ZeroSummary>(session).check.checked);
}

}  // namespace
}  // namespace shardlab::gui
