// The MoE scenario: a real run checked against the single-device layer with
// every rank's all-to-all bytes equal to the hand count; the step split
// adds up; a hot skew names rank 0 the straggler; timing-only runs a large
// layer without data; and the scenario's own errors.
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/scenarios/moe_scenario.h"
#include "engine/run/vector_sink.h"

namespace shardlab {
namespace {

struct Ran {
  std::unique_ptr<PreparedMoe> prepared;
  std::unique_ptr<Executor> executor;
  VectorSink sink;
  MoeSummary summary;
};

std::unique_ptr<Ran> RunScenario(const MoeScenario& s) {
  auto ran = std::make_unique<Ran>();
  ran->prepared = PrepareMoe(s);
  RunOptions options;
  options.timing_only = s.timing_only;
  options.seed = s.seed;
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), ran->prepared->layer.plan,
                                             ran->prepared->topology, options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_EQ(ran->executor->state(), ExecutorState::kDone) << ran->executor->error();
  ran->summary = SummarizeMoe(*ran->prepared, ran->sink.events, ran->executor->backend());
  return ran;
}

TEST(MoeScenario, DefaultRunIsCorrectAndItsBytesMatchTheHandCount) {
  const auto ran = RunScenario(MoeScenario{});
  const MoeSummary& s = ran->summary;
  EXPECT_TRUE(s.check.checked);
  EXPECT_TRUE(s.check.correct) << s.check.output_error << " " << s.check.gate_error;
  EXPECT_TRUE(s.bytes_match);
  const MoeMetrics& m = s.metrics;
  EXPECT_EQ(m.router_ns + m.dispatch_ns + m.experts_ns + m.combine_ns, m.step_ns);
  EXPECT_GT(m.dispatch_ns, 0);
  EXPECT_GT(m.experts_ns, 0);
  Bytes sent = 0;
  for (const MoeRankMetrics& r : m.ranks) sent += r.dispatch_sent;
  EXPECT_GT(sent, 0);
  // Every kept choice is a row some expert computes.
  std::int64_t rows = 0;
  for (const MoeRankMetrics& r : m.ranks) rows += r.rows;
  const MoeRouting& routing = ran->prepared->layer.routing;
  EXPECT_EQ(rows + routing.dropped, std::int64_t{1024} * 2);
}

TEST(MoeScenario, HotSkewMakesRankZeroTheStragglerAndTheCapacityBoundsIt) {
  MoeScenario s;
  s.layer.skew = MoeSkew::kHot;
  s.layer.capacity_factor = 4;  // E/k: no drops
  const auto free = RunScenario(s);
  EXPECT_EQ(free->summary.metrics.straggler, 0);
  EXPECT_EQ(free->prepared->layer.routing.dropped, 0);
  EXPECT_TRUE(free->summary.check.correct);
  s.layer.capacity_factor = 1.0;  // the even share: expert 0 drops its excess
  const auto capped = RunScenario(s);
  EXPECT_GT(capped->prepared->layer.routing.dropped, 0);
  EXPECT_TRUE(capped->summary.check.correct);
  EXPECT_LT(capped->summary.metrics.straggler_load, free->summary.metrics.straggler_load);
  EXPECT_LT(capped->summary.metrics.step_ns, free->summary.metrics.step_ns);
}

TEST(MoeScenario, TimingOnlyRunsALargeLayerWithoutData) {
  MoeScenario s;
  s.layer.ranks = 8;
  s.layer.experts = 64;
  s.layer.tokens = 8192;
  s.layer.hidden = 4096;
  s.layer.ffn = 14336;
  s.layer.skew = MoeSkew::kZipf;
  s.timing_only = true;
  const auto ran = RunScenario(s);
  EXPECT_FALSE(ran->summary.check.checked);
  EXPECT_TRUE(ran->summary.bytes_match);
  EXPECT_GT(ran->summary.metrics.step_ns, 0);
}

std::string Rejection(const MoeScenario& s) {
  try {
    PrepareMoe(s);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(MoeScenario, ItsErrorsNameTheField) {
  MoeScenario s;
  s.layer.ranks = 16;
  s.layer.experts = 16;
  EXPECT_EQ(Rejection(s).rfind("ranks: 16 ranks but topology", 0), 0u) << Rejection(s);
  s = MoeScenario{};
  s.backend = "nope";
  EXPECT_EQ(Rejection(s).rfind("backend:", 0), 0u) << Rejection(s);
  s = MoeScenario{};
  s.layer.tokens = 1 << 20;
  s.layer.hidden = 4096;
  EXPECT_EQ(Rejection(s).rfind("tokens: a real run of this layer", 0), 0u) << Rejection(s);
  s.timing_only = true;  // data-free, but the router's top-k is still host work
  s.layer.experts = 4096;
  s.layer.ranks = 8;
  EXPECT_EQ(Rejection(s).rfind("tokens: the router's top-k is computed on the host", 0), 0u)
      << Rejection(s);
}

}  // namespace
}  // namespace shardlab
