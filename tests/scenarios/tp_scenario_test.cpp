// The tensor-parallel scenario: the seed text's worked example at paper
// scale (B=32, S=2048, H=12288, fp16) in timing-only mode, the scaling
// table's collapse across InfiniBand, a real small run checked against the
// reference, and the scenario's own errors.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/error.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/run/executor.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/run/vector_sink.h"

namespace shardlab {
namespace {

TpScenario SeedExample(int tp, const std::string& topology) {
  TpScenario s;
  s.layer.kind = TpLayerKind::kMlp;
  s.layer.batch = 32;
  s.layer.seq = 2048;
  s.layer.hidden = 12288;
  s.layer.tp = tp;
  s.layer.dtype = DType::kF16;
  s.topology = topology;
  s.timing_only = true;
  return s;
}

struct Ran {
  std::unique_ptr<PreparedTp> prepared;
  std::unique_ptr<Executor> executor;
  VectorSink sink;
  TpSummary summary;
};

std::unique_ptr<Ran> RunScenario(const TpScenario& s) {
  auto ran = std::make_unique<Ran>();
  ran->prepared = PrepareTp(s);
  RunOptions options;
  options.timing_only = s.timing_only;
  options.seed = s.seed;
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), ran->prepared->layer.plan,
                                             ran->prepared->topology, options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_EQ(ran->executor->state(), ExecutorState::kDone) << ran->executor->error();
  ran->summary = SummarizeTp(*ran->prepared, ran->sink.events, ran->executor->backend());
  return ran;
}

// 1.6 GB per all-reduce; its simulated time on a DGX A100 follows the ring
// formula at the GPU's 300 GB/s egress, about twice the seed's 4.67 ms
// (which uses NVLink 3's 600 GB/s bidirectional total).
TEST(TpScenario, TheSeedsWorkedExampleAtPaperScale) {
  const auto ran = RunScenario(SeedExample(8, "dgx-a100"));
  const TpMetrics& m = ran->summary.metrics;
  ASSERT_EQ(m.collectives.size(), 2u);
  EXPECT_EQ(m.forward_allreduces, 1);
  EXPECT_EQ(m.backward_allreduces, 1);
  const Bytes tensor = Bytes{32} * 2048 * 12288 * 2;
  EXPECT_EQ(tensor, 1'610'612'736);
  for (const TpCollectiveTiming& t : m.collectives) {
    EXPECT_EQ(t.tensor_bytes, tensor);
    EXPECT_EQ(t.sent_per_rank, 2 * 7 * (tensor / 8));
  }
  const TpAllReduceFormula f = TpAllReduceEstimate(ran->prepared->scenario, ran->prepared->topology);
  EXPECT_NEAR(f.bandwidth_gbps, 300, 1);
  for (const TpCollectiveTiming& t : m.collectives)
    EXPECT_NEAR(t.span_ns / f.ns, 1.0, 0.05) << t.span_ns << " vs " << f.ns;
  const TimeNs seed = RingAllReduceNs(1.6e9, 8, 600, 0);
  EXPECT_NEAR(seed / 1e6, 4.67, 0.01);
  EXPECT_NEAR(f.ns / seed, 2.0, 0.1);
  // Communication is a real but minor share inside the node; compute is
  // the busiest rank's.
  EXPECT_GT(m.comm_share, 0.02);
  EXPECT_LT(m.comm_share, 0.3);
  EXPECT_NEAR(static_cast<double>(m.compute_ns + m.comm_ns) / m.step_ns, 1.0, 0.05);
  EXPECT_FALSE(ran->summary.check.checked);
}

// fp16 runs on tensor cores: the same layer's compute is faster by about
// the ratio of the GPU's fp16 and fp32 rates.
TEST(TpScenario, Fp16ComputeUsesTensorCoreRate) {
  TpScenario half = SeedExample(8, "dgx-a100");
  half.layer.batch = 4;
  TpScenario full = half;
  full.layer.dtype = DType::kF32;
  const auto a = RunScenario(half), b = RunScenario(full);
  const double ratio = static_cast<double>(b->summary.metrics.compute_ns) / a->summary.metrics.compute_ns;
  const DeviceSpec& dev = a->prepared->topology.nodes[a->prepared->topology.gpus[0]].device;
  EXPECT_NEAR(ratio, dev.fp16_tflops / dev.fp32_tflops, 0.1 * dev.fp16_tflops / dev.fp32_tflops);
}

// Inside one DGX A100 the efficiency stays high; at 16 the TP group
// crosses InfiniBand and it collapses, as the seed text argues.
TEST(TpScenario, ScalingCollapsesAcrossInfiniBand) {
  const auto rows = RunTpScaling(SeedExample(1, "2x-dgx-a100-ib"), {2, 4, 8, 16});
  ASSERT_EQ(rows.size(), 4u);
  for (const TpScalingRow& row : rows) {
    EXPECT_EQ(row.crosses_nodes, row.tp == 16) << row.tp;
    EXPECT_EQ(row.hosts, row.tp == 16 ? 2 : 1) << row.tp;
    EXPECT_NEAR(row.ring_gbps, row.tp == 16 ? 25 : 300, 1) << row.tp;
    EXPECT_GT(row.speedup, 0);
    EXPECT_LE(row.efficiency, 1.0 + 1e-9) << row.tp;
  }
  EXPECT_GT(rows[2].efficiency, 0.8);  // tp 8 inside the node
  EXPECT_LT(rows[3].efficiency, rows[2].efficiency / 2);
  EXPECT_GT(rows[3].metrics.comm_share, 0.5);
  EXPECT_LT(rows[3].speedup, rows[2].speedup);
  // A size that does not fit is found before anything runs.
  EXPECT_THROW(RunTpScaling(SeedExample(1, "dgx-a100"), {2, 16}), Error);
}

// With sequence parallelism a fast rank starts the next collective while a
// slow one finishes the last: overlapping spans count once, so the share
// stays a share.
TEST(TpScenario, CommunicationShareNeverExceedsTheStep) {
  TpScenario s = SeedExample(16, "2x-dgx-a100-ib");
  s.layer.kind = TpLayerKind::kAttention;
  s.layer.sequence_parallel = true;
  const auto ran = RunScenario(s);
  const TpMetrics& m = ran->summary.metrics;
  TimeNs sum = 0;
  for (const TpCollectiveTiming& t : m.collectives) sum += t.span_ns;
  EXPECT_LE(m.comm_ns, sum);
  EXPECT_LE(m.comm_share, 1.0);
  EXPECT_GT(m.comm_share, 0.5);  // across InfiniBand
}

TEST(TpScenario, ARealSmallRunIsChecked) {
  for (const TpLayerKind kind : {TpLayerKind::kMlp, TpLayerKind::kTransformer}) {
    TpScenario s;
    s.layer.kind = kind;
    s.layer.batch = 2;
    s.layer.seq = 8;
    s.layer.hidden = 32;
    s.layer.heads = 4;
    s.layer.tp = 4;
    s.layer.sequence_parallel = kind == TpLayerKind::kTransformer;
    const auto ran = RunScenario(s);
    const TpCheck& check = ran->summary.check;
    EXPECT_TRUE(check.checked);
    EXPECT_TRUE(check.correct) << check.worst_tensor << " " << check.gradient_error;
    EXPECT_GT(check.blocks_checked, 8);
    EXPECT_LT(check.output_error, 1e-4);
  }
}

TEST(TpScenario, BadInputNamesTheField) {
  auto message = [](const TpScenario& s) -> std::string {
    try {
      PrepareTp(s);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  TpScenario s;
  s.layer.tp = 16;
  EXPECT_EQ(message(s).rfind("tp: 16 ranks but topology 'dgx-a100' has only 8 GPUs", 0), 0u) << message(s);
  s.layer.tp = 2;
  s.layer.dtype = DType::kF16;
  EXPECT_EQ(message(s).rfind("dtype: ", 0), 0u) << message(s);
  s = SeedExample(8, "dgx-a100");
  s.timing_only = false;
  s.layer.dtype = DType::kF32;
  EXPECT_EQ(message(s).rfind("batch: a real run of this layer (", 0), 0u) << message(s);
  s = TpScenario{};
  s.topology = "no-such-machine";
  EXPECT_EQ(message(s).rfind("topology: ", 0), 0u) << message(s);
  s = TpScenario{};
  s.backend = "nope";
  EXPECT_EQ(message(s).rfind("backend: ", 0), 0u) << message(s);
}

}  // namespace
}  // namespace shardlab
