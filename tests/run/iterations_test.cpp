// Warm-up and timed iterations (engine/run/iterations.h): a backend whose
// k-th run lasts (k + 1) us shows which runs were timed, that warm-up runs
// happen and are left out, that the average is over exactly --iters runs,
// and that the last run's events are the ones kept.
#include <gtest/gtest.h>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/run/iterations.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"
#include "tests/common/slower_each_run_backend.h"

namespace shardlab {
namespace {

Executor MakeExecutor(int* runs) { return test_util::MakeSlowerEachRunExecutor(runs); }

TEST(Iterations, WarmUpRunsHappenAndAreLeftOut) {
  int runs = 0;
  Executor executor = MakeExecutor(&runs);
  VectorSink last;
  const IterationTimes t = RunIterations(executor, last, {/*warmup=*/2, /*iters=*/3});
  EXPECT_EQ(runs, 5);
  // Runs 0 and 1 (1 and 2 us) were the warm-up.
  ASSERT_EQ(t.spans_ns.size(), 3u);
  EXPECT_DOUBLE_EQ(t.spans_ns[0], 3000.0);
  EXPECT_DOUBLE_EQ(t.spans_ns[2], 5000.0);
  EXPECT_DOUBLE_EQ(t.best_ns, 3000.0);
  // The kept events are the last run's, one per op.
  EXPECT_EQ(last.events.size(), executor.plan().ops.size());
  for (const Event& e : last.events) EXPECT_DOUBLE_EQ(e.end_ns, 5000.0);
}

TEST(Iterations, TheAverageIsOverExactlyItersRuns) {
  for (int iters : {1, 2, 7}) {
    int runs = 0;
    Executor executor = MakeExecutor(&runs);
    VectorSink last;
    const IterationTimes t = RunIterations(executor, last, {1, iters});
    EXPECT_EQ(runs, 1 + iters);
    ASSERT_EQ(t.spans_ns.size(), static_cast<std::size_t>(iters));
    // Timed runs last 2 .. iters+1 us: their mean is (iters + 3) / 2 us.
    EXPECT_DOUBLE_EQ(t.average_ns, (iters + 3) * 500.0) << iters;
  }
}

TEST(Iterations, BadCountsAreRejectedBeforeAnyRun) {
  int runs = 0;
  Executor executor = MakeExecutor(&runs);
  VectorSink last;
  EXPECT_THROW(RunIterations(executor, last, {-1, 1}), Error);
  EXPECT_THROW(RunIterations(executor, last, {0, 0}), Error);
  EXPECT_EQ(runs, 0);
  try {
    CheckIterationSettings({-1, 1});
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("warmup: ", 0), 0u) << e.what();
  }
}

// The app's worker process runs the warm-up and the timed runs but the last
// this way, then streams the last: 1 warm-up and 3 timed runs are 4 runs in
// all, and the summary equals RunIterations' for the same settings.
TEST(Iterations, RunBeforeTheLastLeavesTheLastTimedRunToTheCaller) {
  int runs = 0;
  Executor executor = MakeExecutor(&runs);
  std::vector<TimeNs> spans = RunBeforeTheLast(executor, {/*warmup=*/1, /*iters=*/3});
  EXPECT_EQ(runs, 3);
  // Run 0 (1 us) was the warm-up; runs 1 and 2 (2 and 3 us) were timed.
  EXPECT_EQ(spans, (std::vector<TimeNs>{2000.0, 3000.0}));
  CountingSink last;
  executor.RunToEnd(last);
  EXPECT_EQ(runs, 4);
  spans.push_back(last.end_ns);
  const IterationTimes streamed = SummarizeIterations({1, 3}, spans);

  int in_one_go_runs = 0;
  Executor in_one_go = MakeExecutor(&in_one_go_runs);
  VectorSink events;
  const IterationTimes reference = RunIterations(in_one_go, events, {1, 3});
  EXPECT_EQ(in_one_go_runs, 4);
  EXPECT_EQ(streamed.spans_ns, reference.spans_ns);
  EXPECT_DOUBLE_EQ(streamed.average_ns, 3000.0);
  EXPECT_EQ(streamed.average_ns, reference.average_ns);
  EXPECT_EQ(streamed.best_ns, reference.best_ns);

  // One timed run: nothing runs before it but the warm-up.
  runs = 0;
  Executor single = MakeExecutor(&runs);
  EXPECT_TRUE(RunBeforeTheLast(single, {2, 1}).empty());
  EXPECT_EQ(runs, 2);
  EXPECT_THROW(RunBeforeTheLast(single, {0, 0}), Error);
  EXPECT_THROW(RunBeforeTheLast(single, {-1, 1}), Error);
  EXPECT_EQ(runs, 2);
}

TEST(Iterations, APlainRunAddsNoLineAndOthersSayWhatWasTimed) {
  EXPECT_EQ(DescribeIterations(SummarizeIterations({0, 1}, {1000.0})), "");
  const std::string line = DescribeIterations(SummarizeIterations({1, 2}, {3000.0, 1000.0}));
  EXPECT_NE(line.find("1 warm-up (not timed), 2 timed: average 2 us, best 1 us"), std::string::npos)
      << line;
  EXPECT_EQ(DefaultWarmup("cuda"), 1);
  EXPECT_EQ(DefaultWarmup("sim"), 0);
}

}  // namespace
}  // namespace shardlab
