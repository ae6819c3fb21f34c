#include "engine/scenarios/collective_scenario.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

CollectiveScenario Scenario(CollectiveKind kind, int ranks, Bytes size_bytes) {
  CollectiveScenario s;
  s.kind = kind;
  s.algo = DefaultAlgo(kind);
  s.ranks = ranks;
  s.size_bytes = size_bytes;
  return s;
}

/// The Error message PrepareCollective throws for `scenario`, or "" if none.
std::string PrepareError(const CollectiveScenario& scenario) {
  try {
    PrepareCollective(scenario);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
    return e.what();
  }
  return "";
}

/// Runs the prepared plan on the simulator; returns the run's span.
TimeNs SimulatedNs(const PreparedCollective& prepared) {
  RunOptions options;
  options.timing_only = true;
  Executor executor(CreateBackend("sim"), prepared.plan, prepared.topology, options);
  VectorSink sink;
  executor.RunToEnd(sink);
  return RunSpanNs(sink.events);
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CollectiveScenario, AGoodScenarioPreparesAPlanRingAndFormula) {
  const auto p = PrepareCollective(Scenario(CollectiveKind::kAllReduce, 8, 64 << 20));
  EXPECT_EQ(p->plan.num_steps, 14);
  EXPECT_EQ(p->params.count, (64 << 20) / 4);
  EXPECT_EQ(p->topology.num_gpus(), 8);
  EXPECT_EQ(p->ring_order.size(), 8u);
  EXPECT_EQ(p->ring_order_mode, "auto");
  EXPECT_GT(p->ring_bottleneck_gbps, 0);
  EXPECT_DOUBLE_EQ(p->bandwidth_gbps, p->ring_bottleneck_gbps);
  EXPECT_GT(p->alpha_ns, 0);
  EXPECT_GT(p->predicted_ns, 0);
  EXPECT_TRUE(StartsWith(p->formula, "2(n-1)·(α + M/(n·B)) = 2·7·(")) << p->formula;
  EXPECT_TRUE(Contains(p->formula, "8.39 MB / 300 GB/s")) << p->formula;
}

TEST(CollectiveScenario, CheckDecidesEverythingButBuildsNoPlan) {
  CollectiveScenario s = Scenario(CollectiveKind::kAllReduce, 8, 64 << 20);
  const auto checked = CheckCollectiveScenario(s, MakeTopologyPreset("dgx-a100"));
  EXPECT_TRUE(checked->plan.ops.empty());
  EXPECT_EQ(checked->ring_order.size(), 8u);
  EXPECT_GT(checked->predicted_ns, 0);
  const auto sized = PrepareCollectiveAtSize(*checked, 1 << 20);
  EXPECT_EQ(sized->params.count, (1 << 20) / 4);
  EXPECT_EQ(sized->plan.num_steps, 14);
  EXPECT_EQ(sized->ring_order, checked->ring_order);
  EXPECT_LT(sized->predicted_ns, checked->predicted_ns);
}

TEST(CollectiveScenario, BadRanksNameTheField) {
  CollectiveScenario s = Scenario(CollectiveKind::kAllReduce, 0, 1024);
  EXPECT_EQ(PrepareError(s), "ranks: must be at least 1 (got 0)");
  s.ranks = -3;
  EXPECT_EQ(PrepareError(s), "ranks: must be at least 1 (got -3)");
  s.ranks = 16;
  const std::string too_many = PrepareError(s);
  EXPECT_TRUE(StartsWith(too_many, "ranks: ")) << too_many;
  EXPECT_TRUE(Contains(too_many, "has only 8 GPUs")) << too_many;
}

TEST(CollectiveScenario, UnknownTopologyNamesTheField) {
  CollectiveScenario s = Scenario(CollectiveKind::kAllReduce, 4, 1024);
  s.topology = "dgx-z900";
  const std::string error = PrepareError(s);
  EXPECT_TRUE(StartsWith(error, "topology: ")) << error;
  EXPECT_TRUE(Contains(error, "dgx-z900")) << error;
  s.topology = "";
  EXPECT_TRUE(StartsWith(PrepareError(s), "topology: "));
}

TEST(CollectiveScenario, BadSizesNameTheField) {
  CollectiveScenario s = Scenario(CollectiveKind::kAllReduce, 4, 0);
  EXPECT_TRUE(StartsWith(PrepareError(s), "size: ")) << PrepareError(s);
  s.size_bytes = -8;
  EXPECT_TRUE(StartsWith(PrepareError(s), "size: ")) << PrepareError(s);
  s.size_bytes = 10;  // not a whole number of f32 elements
  EXPECT_TRUE(StartsWith(PrepareError(s), "size: ")) << PrepareError(s);
  s.dtype = DType::kF16;
  EXPECT_EQ(PrepareError(s), "");
}

TEST(CollectiveScenario, BadRingOrdersNameTheField) {
  CollectiveScenario s = Scenario(CollectiveKind::kAllReduce, 4, 1024);
  s.ring_order = "0,1,1,3";
  const std::string twice = PrepareError(s);
  EXPECT_TRUE(StartsWith(twice, "ring order: ")) << twice;
  EXPECT_TRUE(Contains(twice, "appears twice")) << twice;
  s.ring_order = "0,1,2";
  const std::string missing = PrepareError(s);
  EXPECT_TRUE(StartsWith(missing, "ring order: ")) << missing;
  EXPECT_TRUE(Contains(missing, "all 4 ranks")) << missing;
  s.ring_order = "0,1,2,9";
  EXPECT_EQ(PrepareError(s), "ring order: must be at most 3 (got 9)");
  s.ring_order = "0,x,2,1";
  EXPECT_TRUE(StartsWith(PrepareError(s), "ring order: must be an integer"));
  s.ring_order = "0 3 2 1";
  const auto p = PrepareCollective(s);
  EXPECT_EQ(p->ring_order, (std::vector<int>{0, 3, 2, 1}));
  EXPECT_EQ(p->ring_order_mode, "custom");
}

TEST(CollectiveScenario, RootOutOfRangeNamesTheField) {
  CollectiveScenario s = Scenario(CollectiveKind::kBroadcast, 8, 1024);
  s.root = 8;
  EXPECT_EQ(PrepareError(s), "root: must be at most 7 (got 8)");
  s.root = -1;
  EXPECT_EQ(PrepareError(s), "root: must be at least 0 (got -1)");
  s.kind = CollectiveKind::kAllReduce;  // no root: ignored, as nccl-tests
  EXPECT_EQ(PrepareError(s), "");
}

TEST(CollectiveScenario, AlgorithmAndBackendTheKindLacksNameTheField) {
  CollectiveScenario s = Scenario(CollectiveKind::kAllGather, 4, 1024);
  s.algo = CollectiveAlgo::kTree;
  EXPECT_TRUE(StartsWith(PrepareError(s), "algo: ")) << PrepareError(s);
  s.algo = CollectiveAlgo::kRing;
  s.backend = "quantum";
  EXPECT_TRUE(StartsWith(PrepareError(s), "backend: ")) << PrepareError(s);
}

// On a ring of identical links nothing is shared and every step is the
// same, so the simulator must reproduce the alpha-beta formula exactly.
TEST(CollectiveScenario, PredictionMatchesTheSimulatorOnAUniformRing) {
  const Topology ring = MakeUniformRing(8, 100, 1000);
  for (const CollectiveKind kind :
       {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
        CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
    CollectiveScenario s = Scenario(kind, 8, 8 << 20);
    s.topology = ring.name;
    s.root = 3;
    s.timing_only = true;
    const auto p = PrepareCollective(s, ring);
    EXPECT_DOUBLE_EQ(p->alpha_ns, 1000);
    EXPECT_DOUBLE_EQ(p->bandwidth_gbps, 100);
    const TimeNs simulated = SimulatedNs(*p);
    EXPECT_NEAR(simulated, p->predicted_ns, 0.01 * p->predicted_ns)
        << CollectiveKindName(kind) << ": " << p->formula;
  }
}

TEST(CollectiveScenario, RingAllReduceOnDgxA100IsPredictedWithinAFewPercent) {
  CollectiveScenario s = Scenario(CollectiveKind::kAllReduce, 8, 64 << 20);
  s.timing_only = true;
  const auto p = PrepareCollective(s);
  const TimeNs simulated = SimulatedNs(*p);
  EXPECT_NEAR(simulated, p->predicted_ns, 0.03 * p->predicted_ns) << p->formula;
}

TEST(CollectiveScenario, AllToAllAndTreeHaveReadablePredictions) {
  CollectiveScenario a2a = Scenario(CollectiveKind::kAllToAll, 8, 64 << 20);
  a2a.timing_only = true;
  const auto direct = PrepareCollective(a2a);
  EXPECT_TRUE(Contains(direct->formula, "lower bound")) << direct->formula;
  EXPECT_NEAR(SimulatedNs(*direct), direct->predicted_ns, 0.03 * direct->predicted_ns)
      << direct->formula;

  CollectiveScenario t = Scenario(CollectiveKind::kAllReduce, 8, 64 << 20);
  t.algo = CollectiveAlgo::kTree;
  t.timing_only = true;
  const auto tree = PrepareCollective(t);
  EXPECT_TRUE(StartsWith(tree->formula, "estimate")) << tree->formula;
  const TimeNs simulated = SimulatedNs(*tree);
  EXPECT_NEAR(simulated, tree->predicted_ns, 0.2 * tree->predicted_ns) << tree->formula;
}

TEST(CollectiveScenario, OneRankMovesNothing) {
  const auto p = PrepareCollective(Scenario(CollectiveKind::kAllReduce, 1, 1024));
  EXPECT_EQ(p->predicted_ns, 0);
  EXPECT_EQ(p->formula, "n = 1: nothing moves");
}

TEST(CollectiveScenario, SummaryChecksARealRun) {
  CollectiveScenario s = Scenario(CollectiveKind::kAllReduce, 4, 4096);
  s.seed = 7;
  const auto p = PrepareCollective(s);
  RunOptions options;
  options.seed = s.seed;
  Executor executor(CreateBackend("sim"), p->plan, p->topology, options);
  VectorSink sink;
  executor.RunToEnd(sink);
  const CollectiveOutcomeSummary summary =
      SummarizeCollective(*p, RunSpanNs(sink.events), sink.events.size(), executor.backend());
  EXPECT_TRUE(summary.checked);
  EXPECT_TRUE(summary.verify.correct);
  EXPECT_EQ(summary.verify.wrong, 0);
  EXPECT_EQ(summary.verify.checked, 4 * 1024);  // every rank's 1,024 floats
  EXPECT_EQ(summary.steps, 6);
  EXPECT_EQ(summary.events, p->plan.ops.size());
  EXPECT_EQ(summary.metrics.size_bytes, 4096);
  EXPECT_GT(summary.metrics.busbw_gbps, 0);
}

TEST(CollectiveScenario, SummaryOfATimingOnlyRunSaysWhyItIsNotChecked) {
  CollectiveScenario s = Scenario(CollectiveKind::kAllGather, 4, 4096);
  s.timing_only = true;
  const auto p = PrepareCollective(s);
  RunOptions options;
  options.timing_only = true;
  Executor executor(CreateBackend("sim"), p->plan, p->topology, options);
  VectorSink sink;
  executor.RunToEnd(sink);
  const CollectiveOutcomeSummary summary =
      SummarizeCollective(*p, RunSpanNs(sink.events), sink.events.size(), executor.backend());
  EXPECT_FALSE(summary.checked);
  EXPECT_FALSE(summary.not_checked_reason.empty());
}

}  // namespace
}  // namespace shardlab
