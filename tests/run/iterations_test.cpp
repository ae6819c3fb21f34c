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

namespace shardlab {
namespace {

// Every op of run k ends at (k + 1) us; counts runs and resets.
class SlowerEachRunBackend final : public Backend {
 public:
  explicit SlowerEachRunBackend(int* runs) : runs_(runs) {}
  std::string name() const override { return "slower-each-run"; }
  void Load(const Plan& plan, const Topology&, const RunOptions&) override { plan_ = &plan; }
  void RunThroughStep(int last_step, EventSink& sink, const std::atomic<bool>&) override {
    const TimeNs end = (*runs_ + 1) * 1000.0;
    for (std::size_t i = 0; i < plan_->ops.size(); ++i) {
      const Op& op = plan_->ops[i];
      if (op.step > last_step || done_[i]) continue;
      done_[i] = 1;
      Event e;
      e.op = static_cast<OpId>(i);
      e.rank = op.rank;
      e.step = op.step;
      e.kind = op.kind;
      e.start_ns = 0;
      e.end_ns = end;
      sink.OnEvent(e);
    }
    if (last_step >= plan_->num_steps - 1) ++*runs_;
  }
  void Reset() override { done_.assign(plan_->ops.size(), 0); }
  std::span<const float> BufferData(BufferId) const override { return {}; }
  std::size_t completed_ops() const override { return 0; }

 private:
  const Plan* plan_ = nullptr;
  int* runs_;
  std::vector<char> done_ = std::vector<char>(4096, 0);
};

Executor MakeExecutor(int* runs) {
  CollectiveParams p;
  p.ranks = 2;
  p.count = 8;
  return Executor(std::make_unique<SlowerEachRunBackend>(runs), BuildCollective(p),
                  MakeTopologyPreset("dgx-a100"));
}

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
