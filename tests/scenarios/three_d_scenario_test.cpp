// 3D parallelism on the simulator: the composed DP × PP × TP step trains the
// MLP to the single-device weights (SGD and Adam, ZeRO 0 and 1), a step
// without the DP gradient all-reduce does not, traffic stays in the groups
// the grid names, and the paper-scale timing follows its formulas.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/scenarios/three_d_scenario.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

ThreeDScenario Small(int dp, int pp, int tp, OptimizerKind optimizer = OptimizerKind::kSgd) {
  ThreeDScenario s;
  s.grid = {dp, pp, tp};
  s.mlp.layers = 8;
  s.mlp.width = 8;
  s.mlp.batch = 16;
  s.mlp.optimizer = optimizer;
  s.microbatches = 4;
  s.seed = 5;
  return s;
}

struct Ran {
  std::unique_ptr<PreparedThreeD> prepared;
  std::unique_ptr<Executor> executor;
  VectorSink sink;
  ThreeDSummary summary;
};

std::unique_ptr<Ran> RunThreeD(const ThreeDScenario& scenario, const Topology& topology) {
  auto ran = std::make_unique<Ran>();
  ran->prepared = PrepareThreeD(scenario, topology);
  RunOptions options;
  options.seed = scenario.seed;
  options.timing_only = scenario.timing_only();
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), ran->prepared->three_d.plan,
                                             topology, options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_EQ(ran->executor->state(), ExecutorState::kDone) << ran->executor->error();
  ran->summary = SummarizeThreeD(*ran->prepared, ran->sink.events, ran->executor->backend(),
                                 &ran->executor->plan());
  return ran;
}

std::unique_ptr<Ran> RunThreeD(const ThreeDScenario& scenario) {
  return RunThreeD(scenario, MakeSharedBus(scenario.grid.ranks(), 100, 500));
}

// Links and memory that cost nothing: only FLOPs take time.
Topology FreeLinks(int gpus) {
  Topology t = MakeSharedBus(gpus, 1e12, 0);
  for (Node& node : t.nodes) node.device.memory_gbps = 0;
  return t;
}

std::string Describe(const ThreeDScenario& s) {
  return s.grid.Text() + " " + OptimizerName(s.mlp.optimizer) + " zero " +
         std::to_string(s.zero_stage) + " " + PipelineScheduleName(s.schedule);
}

void ExpectMatchesOneDevice(const ThreeDScenario& scenario) {
  const auto ran = RunThreeD(scenario);
  const ThreeDCheck& check = ran->summary.check;
  ASSERT_TRUE(check.checked) << Describe(scenario);
  EXPECT_TRUE(check.correct) << Describe(scenario) << ": weight error " << check.weight_error
                             << ", gradient error " << check.gradient_error << ", worst "
                             << check.worst_tensor << ", loss " << check.loss << " vs "
                             << check.reference_loss;
  EXPECT_LT(check.weight_error, 1e-5) << Describe(scenario);
  EXPECT_NEAR(check.loss, check.reference_loss, 1e-5 * check.reference_loss) << Describe(scenario);
}

TEST(ThreeD, ComposedStepEqualsTheSingleDeviceStep) {
  for (const OptimizerKind optimizer : {OptimizerKind::kSgd, OptimizerKind::kAdam}) {
    ExpectMatchesOneDevice(Small(2, 2, 2, optimizer));
    ExpectMatchesOneDevice(Small(1, 4, 2, optimizer));
  }
}

TEST(ThreeD, EveryAxisAloneAndGPipeAndZeroOneMatchToo) {
  ExpectMatchesOneDevice(Small(4, 1, 1));
  ExpectMatchesOneDevice(Small(1, 3, 1));  // 8 layers over 3 stages: 3, 3, 2
  ExpectMatchesOneDevice(Small(1, 1, 4));
  ExpectMatchesOneDevice(Small(2, 2, 1, OptimizerKind::kAdam));
  ThreeDScenario gpipe = Small(2, 2, 2, OptimizerKind::kAdam);
  gpipe.schedule = PipelineSchedule::kGPipe;
  ExpectMatchesOneDevice(gpipe);
  for (const OptimizerKind optimizer : {OptimizerKind::kSgd, OptimizerKind::kAdam}) {
    ThreeDScenario zero = Small(2, 2, 2, optimizer);
    zero.zero_stage = 1;
    ExpectMatchesOneDevice(zero);
  }
}

TEST(ThreeD, SkippingTheDpAllReduceFailsTheCheck) {
  for (const OptimizerKind optimizer : {OptimizerKind::kSgd, OptimizerKind::kAdam})
    for (const int zero : {0, 1}) {
      ThreeDScenario broken = Small(2, 2, 2, optimizer);
      broken.zero_stage = zero;
      broken.skip_dp_reduce = true;
      const auto ran = RunThreeD(broken);
      ASSERT_TRUE(ran->summary.check.checked);
      EXPECT_FALSE(ran->summary.check.correct) << Describe(broken);
      EXPECT_GT(ran->summary.check.weight_error, 1e-3) << Describe(broken);
      EXPECT_GT(ran->summary.check.gradient_error, 1e-3) << Describe(broken);
    }
}

TEST(ThreeD, AdamAtAWiderWidthStaysWithinItsBound) {
  // Width 128: gradients near Adam's epsilon, where float order matters.
  for (const int zero : {0, 1}) {
    ThreeDScenario s = Small(2, 2, 2, OptimizerKind::kAdam);
    s.mlp.width = 128;
    s.zero_stage = zero;
    ExpectMatchesOneDevice(s);
  }
}

TEST(ThreeD, EveryTransferStaysInsideTheGroupItServes) {
  ThreeDScenario s = Small(2, 2, 2);
  const auto prepared = PrepareThreeD(s, MakeSharedBus(8, 100, 500));
  const ThreeDPlan& p = prepared->three_d;
  const ParallelGrid& grid = p.params.grid;
  std::map<GroupKind, int> sends;
  for (const Op& op : p.plan.ops) {
    if (op.kind != OpKind::kSend) continue;
    ASSERT_GE(op.collective_seq, 0);
    const ThreeDCollectiveInfo info = p.collectives.at(op.collective_seq);
    const GridCoord a = grid.CoordOf(op.rank), b = grid.CoordOf(op.peer);
    const RankGroups g = grid.GroupsOf(op.rank);
    ++sends[info.kind];
    switch (info.kind) {
      case GroupKind::kTensor:
        EXPECT_TRUE(a.dp == b.dp && a.pp == b.pp && a.tp != b.tp);
        EXPECT_EQ(info.group, g.tp_group);
        break;
      case GroupKind::kPipeline:
        EXPECT_TRUE(a.dp == b.dp && a.tp == b.tp && std::abs(a.pp - b.pp) == 1);
        EXPECT_EQ(info.group, g.pp_group);
        break;
      case GroupKind::kData:
        EXPECT_TRUE(a.pp == b.pp && a.tp == b.tp && a.dp != b.dp);
        EXPECT_EQ(info.group, g.dp_group);
        break;
    }
  }
  EXPECT_GT(sends[GroupKind::kTensor], 0);
  EXPECT_GT(sends[GroupKind::kPipeline], 0);
  EXPECT_GT(sends[GroupKind::kData], 0);
}

TEST(ThreeD, EachDpRankSendsTwoThirdsOfItsGradientAtThreeReplicas) {
  // Ring all-reduce: 2(d-1)/d of the gradient bytes per rank.
  ThreeDScenario s = Small(3, 2, 1);
  s.mlp.batch = 24;
  s.mlp.width = 6;  // every tensor (36 and 6 elements) splits evenly in 3
  const auto ran = RunThreeD(s);
  const double grad_bytes = 4.0 * ran->prepared->three_d.gradient_elements_per_rank;
  EXPECT_EQ(ran->summary.traffic[int(GroupKind::kData)].max_sent_bytes_per_rank,
            static_cast<Bytes>(2.0 * (3 - 1) / 3 * grad_bytes));
  EXPECT_EQ(ran->summary.traffic[int(GroupKind::kTensor)].total_sent_bytes, 0);
}

TEST(ThreeD, BadGridsAndShapesAreNamed) {
  auto message = [](ThreeDScenario s, const Topology& t) -> std::string {
    try {
      PrepareThreeD(s, t);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(Small(2, 2, 2), MakeSharedBus(4, 100, 0)).find("grid:"), std::string::npos);
  EXPECT_EQ(message(Small(2, 2, 2), MakeSharedBus(16, 100, 0)), "");  // GPUs 8-15 idle
  EXPECT_EQ(PrepareThreeD(Small(2, 2, 2), MakeSharedBus(16, 100, 0))->warnings.size(), 1u);
  ThreeDScenario odd = Small(1, 2, 2);
  odd.mlp.layers = 6;  // 3 pairs over 2 stages is fine; 5 layers is not
  EXPECT_EQ(message(odd, MakeSharedBus(4, 100, 0)), "");
  odd.mlp.layers = 5;
  EXPECT_NE(message(odd, MakeSharedBus(4, 100, 0)).find("layers:"), std::string::npos);
  ThreeDScenario narrow = Small(1, 1, 4);
  narrow.mlp.width = 6;
  EXPECT_NE(message(narrow, MakeSharedBus(4, 100, 0)).find("width:"), std::string::npos);
  ThreeDScenario rows = Small(2, 1, 1);
  rows.microbatches = 3;
  EXPECT_NE(message(rows, MakeSharedBus(2, 100, 0)).find("microbatches:"), std::string::npos);
}

// --- Paper scale, timing only -------------------------------------------

ThreeDScenario Paper(int dp, int pp, int tp, const std::string& model = "gpt3-1.3b") {
  ThreeDScenario s;
  s.grid = {dp, pp, tp};
  s.model = model;
  return s;
}

TEST(ThreeDTiming, ComputeTimeIsTheFlopsOverThePeakWhenLinksAreFree) {
  const auto ran = RunThreeD(Paper(2, 1, 2), FreeLinks(4));
  const TransformerShape& m = ran->prepared->shape;
  const int microbatches = m.global_batch / (2 * m.micro_batch);
  const double flops = 3.0 * m.micro_batch *
                       (m.layers * m.LayerForwardFlopsPerSequence() + m.LogitsForwardFlopsPerSequence()) /
                       2 * microbatches;
  const double peak = ran->prepared->peak_flops_per_gpu;
  EXPECT_EQ(ran->summary.microbatches, microbatches);
  EXPECT_NEAR(ran->summary.compute_ns, flops / peak * 1e9, 1e-6 * flops / peak * 1e9 + microbatches * 4);
  EXPECT_NEAR(ran->summary.step_ns, ran->summary.compute_ns, 1e-3 * ran->summary.step_ns);
  // MFU counts the same FLOPs: with nothing but compute it is 1.
  EXPECT_NEAR(ran->summary.mfu, 1.0, 1e-3);
}

TEST(ThreeDTiming, PipelineBubbleFollowsTheFormula) {
  ThreeDScenario s = Paper(1, 4, 1);
  for (const PipelineSchedule schedule : {PipelineSchedule::k1F1B, PipelineSchedule::kGPipe}) {
    s.schedule = schedule;
    const auto ran = RunThreeD(s, FreeLinks(4));
    const ThreeDSummary& sum = ran->summary;
    ASSERT_GT(sum.exposed_ns, 0);
    // Stages differ (embeddings on the first, logits on the last), so the
    // bubble is (p-1)/m of the slowest stage's work only approximately.
    EXPECT_NEAR(double(sum.exposed_ns) / sum.compute_ns, sum.bubble_formula, 0.25 * sum.bubble_formula)
        << PipelineScheduleName(schedule);
  }
  const auto flat = RunThreeD(Paper(1, 1, 1), FreeLinks(1));
  EXPECT_NEAR(flat->summary.exposed_ns, 0, 1e-6 * flat->summary.step_ns);
}

TEST(ThreeDTiming, DpBytesPerRankAreTwiceDMinusOneOverDOfTheGradient) {
  for (const int dp : {2, 4}) {
    const auto ran = RunThreeD(Paper(dp, 1, 2), MakeSharedBus(2 * dp, 100, 500));
    const double grad_bytes = 2.0 * ran->prepared->three_d.gradient_elements_per_rank;
    const double want = 2.0 * (dp - 1) / dp * grad_bytes;
    EXPECT_NEAR(double(ran->summary.traffic[int(GroupKind::kData)].max_sent_bytes_per_rank), want,
                1e-6 * want) << "dp " << dp;
  }
}

TEST(ThreeDTiming, StepTimeGrowsWhenLinksSlowDownAndShrinksWithMoreTp) {
  const auto fast = RunThreeD(Paper(2, 2, 2), MakeSharedBus(8, 200, 500));
  const auto slow = RunThreeD(Paper(2, 2, 2), MakeSharedBus(8, 20, 500));
  EXPECT_GT(slow->summary.step_ns, fast->summary.step_ns);
  EXPECT_GT(slow->summary.traffic[int(GroupKind::kTensor)].max_busy_ns_per_rank,
            fast->summary.traffic[int(GroupKind::kTensor)].max_busy_ns_per_rank);
  const auto tp1 = RunThreeD(Paper(1, 1, 1), FreeLinks(1));
  const auto tp2 = RunThreeD(Paper(1, 1, 2), FreeLinks(2));
  EXPECT_NEAR(double(tp2->summary.compute_ns) / tp1->summary.compute_ns, 0.5, 1e-3);
  // ZeRO-1 keeps 1/dp of the optimizer state: less memory, the same DP bytes.
  ThreeDScenario zero = Paper(4, 1, 1);
  zero.zero_stage = 1;
  const auto z1 = RunThreeD(zero, MakeSharedBus(4, 100, 500));
  const auto z0 = RunThreeD(Paper(4, 1, 1), MakeSharedBus(4, 100, 500));
  EXPECT_LT(z1->summary.memory.model_states_bytes, z0->summary.memory.model_states_bytes);
  EXPECT_NEAR(double(z1->summary.traffic[int(GroupKind::kData)].max_sent_bytes_per_rank),
              double(z0->summary.traffic[int(GroupKind::kData)].max_sent_bytes_per_rank), 1e-6 *
              double(z0->summary.traffic[int(GroupKind::kData)].max_sent_bytes_per_rank));
}

TEST(ThreeDTiming, OneFOneBHoldsPStagesOfActivationsAndGPipeAllMicroBatches) {
  ThreeDScenario s = Paper(1, 4, 1);
  s.global_batch = 32;  // 32 micro-batches of one sequence
  const auto one_f_one_b = RunThreeD(s, FreeLinks(4));
  s.schedule = PipelineSchedule::kGPipe;
  const auto gpipe = RunThreeD(s, FreeLinks(4));
  const TransformerShape& m = one_f_one_b->prepared->shape;
  const double per_layer = double(m.seq_len) * m.hidden *
                           (34.0 + 5.0 * m.heads * m.seq_len / m.hidden);  // t = 1, b = 1
  const double layers = m.layers / 4;
  EXPECT_NEAR(one_f_one_b->summary.memory.activations_bytes, per_layer * layers * 4, 1e-6 * per_layer);
  EXPECT_NEAR(gpipe->summary.memory.activations_bytes, per_layer * layers * 32, 1e-6 * per_layer);
}

}  // namespace
}  // namespace shardlab
