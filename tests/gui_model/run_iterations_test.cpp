// The app's warm-up and timed runs (app/gui/model/run_iterations.h): the
// settings' defaults per backend and their errors, warm-up runs that happen
// and are left out, the average over exactly the timed runs, the line the
// metrics panel shows, and a whole session run with them.
#include "app/gui/model/run_iterations.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "app/gui/model/session.h"
#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/topology/presets.h"
#include "tests/common/slower_each_run_backend.h"
#include "tests/gui_model/ring_settings.h"
#include "tests/gui_model/poll_session.h"

namespace shardlab::gui {
namespace {

Executor MakeExecutor(int* runs) { return test_util::MakeSlowerEachRunExecutor(runs); }

std::string ErrorOf(const ScenarioSettings& s) {
  try {
    RunIterationsOf(s);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "";
}

TEST(RunIterations, OneWarmUpOnRealHardwareNoneOnTheSimulatorAndBadValuesSayWhy) {
  ScenarioSettings s = test::RingAllReduce4x1K();
  EXPECT_EQ(s.warmup, -1);
  EXPECT_EQ(s.iters, 1);
  s.backend = "sim";
  EXPECT_EQ(RunIterationsOf(s).warmup, 0);
  s.backend = "cuda";
  EXPECT_EQ(RunIterationsOf(s).warmup, 1);
  EXPECT_EQ(RunIterationsOf(s).iters, 1);
  s.warmup = 3;
  s.iters = 7;
  EXPECT_EQ(RunIterationsOf(s).warmup, 3);
  EXPECT_EQ(RunIterationsOf(s).iters, 7);
  s.warmup = -2;
  EXPECT_EQ(ErrorOf(s), "warmup: must be 0 or more (got -2)");
  s.warmup = 0;
  s.iters = 0;
  EXPECT_EQ(ErrorOf(s), "iters: must be at least 1 (got 0)");
  // The worker process runs them too (`worker -w -n`: the run-done record
  // carries every timed span), with the same checks.
  s.in_worker = true;
  s.iters = 1;
  s.warmup = 2;
  EXPECT_EQ(ErrorOf(s), "");
  s.iters = 3;
  EXPECT_EQ(ErrorOf(s), "");
  EXPECT_EQ(RunIterationsOf(s).iters, 3);
  s.iters = 0;
  EXPECT_EQ(ErrorOf(s), "iters: must be at least 1 (got 0)");
  // Session::Check says the same in place.
  Session session;
  EXPECT_EQ(session.Check(s), "iters: must be at least 1 (got 0)");
  s.iters = 3;
  EXPECT_EQ(session.Check(s), "");
}

TEST(RunIterations, WarmUpRunsHappenAndAreLeftOutAndEveryTimedRunButTheLastIsRun) {
  for (const auto& [warmup, iters] : std::vector<std::pair<int, int>>{{0, 1}, {1, 1}, {2, 3}, {0, 4}}) {
    int runs = 0;
    Executor executor = MakeExecutor(&runs);
    const std::atomic<bool> cancel{false};
    const std::vector<TimeNs> spans = RunBeforeTheShownRun(executor, {warmup, iters}, cancel);
    EXPECT_EQ(runs, warmup + iters - 1) << warmup << "/" << iters;
    ASSERT_EQ(spans.size(), static_cast<std::size_t>(iters - 1));
    // Run k lasts k+1 us: the first timed one is run `warmup`.
    for (std::size_t i = 0; i < spans.size(); ++i)
      EXPECT_DOUBLE_EQ(spans[i], (warmup + static_cast<int>(i) + 1) * 1000.0);
  }
  int runs = 0;
  Executor executor = MakeExecutor(&runs);
  const std::atomic<bool> cancel{true};
  EXPECT_TRUE(RunBeforeTheShownRun(executor, {2, 3}, cancel).empty());
  EXPECT_EQ(runs, 0);
}

TEST(RunIterations, TheLineSaysAverageBestLastShownAndWarmUpExcluded) {
  EXPECT_EQ(DescribeRunIterations(SummarizeIterations({0, 1}, {5000})), "");
  const IterationTimes t = SummarizeIterations({2, 3}, {3000, 4000, 8000});
  EXPECT_EQ(DescribeRunIterations(t),
            "average of 3 runs: " + FormatTime(5000) + ", best " + FormatTime(3000) +
                "; last iteration shown; 2 warm-up runs excluded");
  EXPECT_EQ(DescribeRunIterations(SummarizeIterations({1, 1}, {7000})),
            "one timed run: " + FormatTime(7000) + "; 1 warm-up run excluded");
}

using test::PollUntilDone;

TEST(RunIterations, ASessionRunTimesExactlyItersRunsAfterItsWarmUp) {
  ScenarioSettings s = test::RingAllReduce4x1K();
  s.warmup = 2;
  s.iters = 4;
  Session session;
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  const IterationTimes& t = session.iterations();
  EXPECT_EQ(t.settings.warmup, 2);
  EXPECT_EQ(t.settings.iters, 4);
  ASSERT_EQ(t.spans_ns.size(), 4u);
  // The simulator's runs are the same: the shown run's end is each span.
  for (TimeNs span : t.spans_ns) EXPECT_DOUBLE_EQ(span, session.store().end_ns());
  EXPECT_DOUBLE_EQ(test::Outcome<CollectiveOutcomeSummary>(session).metrics.time_ns, t.average_ns);
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
  EXPECT_EQ(session.store().event_count(), 48u) << "the timeline holds the last run only";
  EXPECT_NE(session.iterations_line().find("average of 4 runs"), std::string::npos);
  // A training scenario too.
  ScenarioSettings tp;
  tp.scenario = "tp";
  tp.topology = "dgx-a100";
  tp.iters = 3;
  ASSERT_TRUE(session.Start(tp)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_EQ(session.iterations().spans_ns.size(), 3u);
  EXPECT_EQ(session.iterations().settings.warmup, 0);
  // A bad count fails the start with the one line.
  s.iters = 0;
  EXPECT_FALSE(session.Start(s));
  EXPECT_EQ(session.error(), "iters: must be at least 1 (got 0)");
}

}  // namespace
}  // namespace shardlab::gui
