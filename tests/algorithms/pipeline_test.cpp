// Pipeline-parallel training on the simulator: every schedule trains the MLP
// to the same weights as one device, runs its slots in the schedule's order,
// and shows the textbook bubble when compute is uniform and links are free.
#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

PipelineScenario MakeScenario(PipelineSchedule schedule, int p, int m, int v = 1) {
  PipelineScenario s;
  s.params.schedule = schedule;
  s.params.shape = {p, m, v};
  s.params.model.layers = 16;
  s.params.model.width = 8;
  s.params.model.batch = 16;
  s.seed = 7;
  return s;
}

std::string Describe(const PipelineScenario& s) {
  return std::string(PipelineScheduleName(s.params.schedule)) + " p=" +
         std::to_string(s.params.shape.stages) + " m=" + std::to_string(s.params.shape.microbatches) +
         " v=" + std::to_string(s.params.shape.chunks) + " " +
         OptimizerName(s.params.model.optimizer);
}

struct Ran {
  std::unique_ptr<PreparedPipeline> prepared;
  std::unique_ptr<Executor> executor;
  VectorSink sink;
  PipelineOutcomeSummary summary;
};

std::unique_ptr<Ran> RunOn(const PipelineScenario& scenario, const Topology& topology) {
  auto ran = std::make_unique<Ran>();
  ran->prepared = PreparePipeline(scenario, topology);
  RunOptions options;
  options.seed = scenario.seed;
  options.timing_only = scenario.timing_only;
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), ran->prepared->pipeline.plan,
                                             topology, options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_EQ(ran->executor->state(), ExecutorState::kDone) << ran->executor->error();
  ran->summary = SummarizePipeline(*ran->prepared, ran->sink.events, ran->executor->backend(),
                                   &ran->executor->plan());
  return ran;
}

// A topology whose links and memory cost nothing: only FLOPs take time.
Topology FreeLinks(int gpus) {
  Topology t = MakeUniformRing(gpus, 1e12, 0);
  for (Node& node : t.nodes) node.device.memory_gbps = 0;
  return t;
}

constexpr PipelineSchedule kSchedules[] = {PipelineSchedule::kGPipe, PipelineSchedule::k1F1B,
                                           PipelineSchedule::kInterleaved1F1B,
                                           PipelineSchedule::kZeroBubbleH1};

TEST(Pipeline, EveryScheduleTrainsLikeOneDevice) {
  for (const PipelineSchedule schedule : kSchedules) {
    for (const int p : {2, 4, 8}) {
      for (const int m : {1, p, 2 * p}) {
        const int v = schedule == PipelineSchedule::kInterleaved1F1B ? 2 : 1;
        const PipelineScenario scenario = MakeScenario(schedule, p, m, v);
        const auto ran = RunOn(scenario, MakeUniformRing(p, 100, 500));
        const PipelineCheck& check = ran->summary.check;
        ASSERT_TRUE(check.checked) << Describe(scenario);
        EXPECT_TRUE(check.correct) << Describe(scenario) << ": gradient error "
                                   << check.gradient_error << ", weight error "
                                   << check.weight_error << " worst " << check.worst_tensor;
        EXPECT_LT(check.gradient_error, 1e-5) << Describe(scenario);
        EXPECT_NEAR(check.loss, check.reference_loss, 1e-5 * check.reference_loss)
            << Describe(scenario);
        // Every slot ran once, and the optimizer once per stage.
        std::size_t compute = 0;
        for (const Event& e : ran->sink.events) compute += e.kind == OpKind::kCompute;
        const int passes = SplitsBackward(schedule) ? 3 : 2;
        EXPECT_EQ(compute, static_cast<std::size_t>(passes * m * v * p + p)) << Describe(scenario);
      }
    }
  }
}

TEST(Pipeline, AdamStepMatchesTheReferenceToo) {
  PipelineScenario scenario = MakeScenario(PipelineSchedule::k1F1B, 4, 8);
  scenario.params.model.optimizer = OptimizerKind::kAdam;
  scenario.params.model.learning_rate = 1e-3f;
  const auto ran = RunOn(scenario, MakeUniformRing(4, 100, 500));
  EXPECT_TRUE(ran->summary.check.correct) << ran->summary.check.weight_error;
}

TEST(Pipeline, AWrongGradientIsCaught) {
  // The check must be able to fail: drop one micro-batch's weight-gradient
  // accumulation and the comparison with the reference says so.
  PipelineScenario scenario = MakeScenario(PipelineSchedule::k1F1B, 2, 4);
  auto prepared = PreparePipeline(scenario, MakeUniformRing(2, 100, 500));
  Plan& plan = prepared->pipeline.plan;
  for (auto call = plan.kernels.rbegin(); call != plan.kernels.rend(); ++call)
    if (call->kind == KernelKind::kMatMul && call->transpose_a) {
      call->accumulate = false;  // the last micro-batch overwrites the sum
      break;
    }
  RunOptions options;
  options.seed = scenario.seed;
  Executor ex(CreateBackend("sim"), plan, prepared->topology, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  const PipelineOutcomeSummary s = SummarizePipeline(*prepared, sink.events, ex.backend(), &ex.plan());
  EXPECT_FALSE(s.check.correct);
  EXPECT_GT(s.check.gradient_error, 1e-3);
}

// The compute ops of one stage in the order they ran, as "F0 F1 B0 ...".
std::string RanOrder(const Ran& ran, int stage) {
  std::vector<const Event*> events;
  for (const Event& e : ran.sink.events)
    if (e.rank == stage && e.kind == OpKind::kCompute) events.push_back(&e);
  std::sort(events.begin(), events.end(),
            [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
  std::string out;
  for (const Event* e : events) {
    const OpTags& tags = ran.executor->plan().ops[e->op].tags;
    if (tags.phase == Phase::kOptimizer) continue;
    if (!out.empty()) out += ' ';
    out += (tags.phase == Phase::kForward ? "F" : "B") + std::to_string(tags.microbatch);
  }
  return out;
}

TEST(Pipeline, StagesRunTheirSlotsInTheSchedulesOrder) {
  const auto one_f_one_b = RunOn(MakeScenario(PipelineSchedule::k1F1B, 4, 8), MakeUniformRing(4, 100, 500));
  EXPECT_EQ(RanOrder(*one_f_one_b, 0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(RanOrder(*one_f_one_b, 3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  const auto gpipe = RunOn(MakeScenario(PipelineSchedule::kGPipe, 2, 4), MakeUniformRing(2, 100, 500));
  EXPECT_EQ(RanOrder(*gpipe, 1), "F0 F1 F2 F3 B0 B1 B2 B3");
  // Interleaved, p = 2, v = 2, m = 4 on stage 0: chunk 0 for micro-batches
  // 0 and 1, chunk 1 for them, ... (Megatron's grouping by p).
  const auto inter = RunOn(MakeScenario(PipelineSchedule::kInterleaved1F1B, 2, 4, 2),
                           MakeUniformRing(2, 100, 500));
  const std::vector<PipelineSlot>& order = inter->prepared->pipeline.order[0];
  const Plan& plan = inter->executor->plan();
  for (std::size_t i = 0; i < order.size(); ++i) {
    const OpTags& tags = plan.ops[inter->prepared->pipeline.slot_ops[0][i]].tags;
    EXPECT_EQ(tags.microbatch, order[i].microbatch) << i;
    EXPECT_EQ(tags.chunk, GlobalChunk(inter->prepared->pipeline.params.shape, 0, order[i].chunk)) << i;
  }
}

// Sets every F op to `forward_flops` and every B op to `backward_flops`.
void UniformCosts(Plan& plan, double forward_flops, double backward_flops, double weight_flops) {
  for (Op& op : plan.ops) {
    if (op.kind != OpKind::kCompute) continue;
    if (op.tags.phase == Phase::kForward) op.flops = forward_flops;
    if (op.tags.phase == Phase::kBackward) op.flops = backward_flops;
    if (op.tags.phase == Phase::kWeightGrad) op.flops = weight_flops;
    if (op.tags.phase == Phase::kOptimizer) op.flops = 0;
  }
}

PipelineMetrics MeasureWithCosts(const PipelineScenario& scenario, const Topology& topology,
                                 double forward_flops, double backward_flops,
                                 double weight_flops = -1) {
  auto prepared = PreparePipeline(scenario, topology);
  // W as long as F unless told otherwise.
  UniformCosts(prepared->pipeline.plan, forward_flops, backward_flops,
               weight_flops < 0 ? forward_flops : weight_flops);
  RunOptions options;
  options.timing_only = true;
  Executor ex(CreateBackend("sim"), prepared->pipeline.plan, topology, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  EXPECT_EQ(ex.state(), ExecutorState::kDone) << ex.error();
  return MeasurePipeline(prepared->pipeline, ex.plan(), sink.events);
}

TEST(Pipeline, WithUniformComputeAndFreeLinksTheBubbleIsTheFormula) {
  for (const PipelineSchedule schedule : kSchedules) {
    for (const int p : {2, 4, 8}) {
      for (const int m : {p, 2 * p, 4 * p}) {
        const int v = schedule == PipelineSchedule::kInterleaved1F1B ? 2 : 1;
        PipelineScenario scenario = MakeScenario(schedule, p, m, v);
        scenario.params.model.batch = 4 * p;
        // F and B equal; for GPipe and 1F1B also B = 2F (the formula holds for both).
        for (const double backward : {1e6, 2e6}) {
          // The interleaved and ZB-H1 formulas assume equal passes.
          if ((v > 1 || SplitsBackward(schedule)) && backward != 1e6) continue;
          const PipelineMetrics metrics = MeasureWithCosts(scenario, FreeLinks(p), 1e6, backward);
          EXPECT_NEAR(metrics.bubble_over_useful, metrics.formula_bubble_over_useful, 1e-6)
              << Describe(scenario) << " B/F " << backward / 1e6;
          EXPECT_NEAR(metrics.bubble_of_step, metrics.formula_bubble_of_step, 1e-6)
              << Describe(scenario);
        }
      }
    }
  }
}

TEST(Pipeline, PeakInFlightIsMForGPipeAndAtMostPMinusStageFor1F1B) {
  const int p = 4, m = 8;
  const auto gpipe = RunOn(MakeScenario(PipelineSchedule::kGPipe, p, m), MakeUniformRing(p, 100, 500));
  const auto ofob = RunOn(MakeScenario(PipelineSchedule::k1F1B, p, m), MakeUniformRing(p, 100, 500));
  for (int s = 0; s < p; ++s) {
    EXPECT_EQ(gpipe->summary.metrics.stages[s].peak_inflight, m);
    EXPECT_EQ(ofob->summary.metrics.stages[s].peak_inflight, p - s);
    EXPECT_EQ(ofob->summary.metrics.stages[s].formula_peak_inflight, p - s);
  }
}

// Free links, then every hop taking c. GPipe pays c only on the fill and the
// drain: its step grows by exactly 2(p-1)c. 1F1B pays more: in its steady
// state a stage runs B(j) right after F(j+w), and B(j) waits for a round
// trip through the later stages, so part of every iteration's communication
// is exposed (the price of holding only p activations without overlapping
// communication). Its growth is linear in c, at least GPipe's, and printed.
TEST(Pipeline, SlowLinksGrowTheBubbleByWhatTheScheduleExposes) {
  for (const auto& [p, m] : {std::pair{4, 8}, {2, 8}, {8, 8}, {4, 16}}) {
    double one_f_one_b_growth[3] = {};
    const TimeNs hops[3] = {0.0, 100.0, 400.0};
    for (int i = 0; i < 3; ++i) {
      const TimeNs c = hops[i];
      Topology t = MakeUniformRing(p, 1e12, c);
      for (Node& node : t.nodes) {
        node.device.memory_gbps = 0;
        node.device.fp32_tflops = 1;  // F = 1 us, B = 2 us
      }
      const PipelineMetrics g = MeasureWithCosts(MakeScenario(PipelineSchedule::kGPipe, p, m), t, 1e6, 2e6);
      const PipelineMetrics o = MeasureWithCosts(MakeScenario(PipelineSchedule::k1F1B, p, m), t, 1e6, 2e6);
      const double ideal_ns = (m + p - 1) * 3e3;
      const std::string shape = "p=" + std::to_string(p) + " m=" + std::to_string(m) +
                                " c=" + std::to_string(c);
      EXPECT_NEAR(g.span_ns, ideal_ns + 2 * (p - 1) * c, 1.0) << shape;
      EXPECT_GE(o.span_ns, g.span_ns - 1.0) << shape;
      one_f_one_b_growth[i] = o.span_ns - ideal_ns;
      // The bubble relative to useful time follows from the span.
      EXPECT_NEAR(o.bubble_over_useful, (o.span_ns - m * 3e3) / (m * 3e3), 1e-9) << shape;
      if (c == 0) {
        EXPECT_NEAR(o.bubble_over_useful, (p - 1.0) / m, 1e-9) << shape;
      } else {
        EXPECT_GT(o.bubble_over_useful, (p - 1.0) / m) << shape;
      }
    }
    EXPECT_NEAR(one_f_one_b_growth[0], 0.0, 1.0);
    EXPECT_NEAR(one_f_one_b_growth[2], 4 * one_f_one_b_growth[1], 1.0) << "p=" << p << " m=" << m;
    std::printf("p=%d m=%d: per unit of hop time c, GPipe's step grows %d c, 1F1B's %.0f c\n", p,
                m, 2 * (p - 1), one_f_one_b_growth[1] / hops[1]);
  }
}

TEST(Pipeline, ExcessOverTheFormulaIsBlamedOnWhatCausedIt) {
  const int p = 4, m = 8;
  // Free links and F = B: the formula holds, nothing to explain.
  const PipelineMetrics exact =
      MeasureWithCosts(MakeScenario(PipelineSchedule::k1F1B, p, m), FreeLinks(p), 1e6, 1e6);
  EXPECT_FALSE(ExplainPipelineBubble(exact, {p, m, 1}).above_formula);
  EXPECT_EQ(exact.transfers, 2 * (p - 1) * m);
  // Hops as long as a forward slot: communication.
  Topology slow = MakeUniformRing(p, 1e12, 1e3);
  for (Node& node : slow.nodes) {
    node.device.memory_gbps = 0;
    node.device.fp32_tflops = 1;  // F = 1 us
  }
  const PipelineMetrics comm =
      MeasureWithCosts(MakeScenario(PipelineSchedule::k1F1B, p, m), slow, 1e6, 1e6);
  const PipelineBubbleExcess c = ExplainPipelineBubble(comm, {p, m, 1});
  EXPECT_TRUE(c.above_formula);
  EXPECT_TRUE(c.communication);
  EXPECT_NEAR(c.transfer_ns, 1e3, 1.0);
  EXPECT_NEAR(c.forward_ns, 1e3, 1.0);
  // Free links, ZB-H1 with W a quarter of F: the slots are unequal.
  const PipelineMetrics uneven = MeasureWithCosts(MakeScenario(PipelineSchedule::kZeroBubbleH1, p, m),
                                                  FreeLinks(p), 1e6, 1e6, 0.25e6);
  const PipelineBubbleExcess u = ExplainPipelineBubble(uneven, {p, m, 1});
  EXPECT_TRUE(u.above_formula);
  EXPECT_FALSE(u.communication);
  EXPECT_NEAR(u.weight_ns, 0.25 * u.forward_ns, 1.0);
}

// The zero-bubble paper's account of ZB-H1: each of the p-1 warm-up slots
// leaves F + B - W idle, so with W no longer than F or B the bubble is
// (p-1)(F+B-W) over m(F+B+W) of useful time; (p-1)/(3m) is its F = B = W
// case. (A longer W can no longer hide the round trip: the stage then waits
// (p-1)max(F, B).)
TEST(Pipeline, ZeroBubbleH1BubbleFollowsFPlusBMinusW) {
  const int p = 4, m = 8;
  for (const double f : {1.0, 2.0}) {
    for (const double b : {0.5, 1.0, 2.0}) {
      for (const double w : {0.25, 0.5, 1.0}) {
        if (w > f || w > b) continue;
        const PipelineMetrics x = MeasureWithCosts(MakeScenario(PipelineSchedule::kZeroBubbleH1, p, m),
                                                   FreeLinks(p), f * 1e6, b * 1e6, w * 1e6);
        EXPECT_NEAR(x.bubble_over_useful, (p - 1) * (f + b - w) / (m * (f + b + w)), 1e-6)
            << "F " << f << " B " << b << " W " << w;
      }
    }
  }
}

TEST(Pipeline, StageLayersNameEachStagesLayers) {
  PipelineScenario s = MakeScenario(PipelineSchedule::kInterleaved1F1B, 2, 4, 2);
  s.params.model.layers = 8;
  const auto prepared = PreparePipeline(s, FreeLinks(2));
  EXPECT_EQ(PipelineStageLayers(prepared->pipeline, 0), "0-1,4-5");
  EXPECT_EQ(PipelineStageLayers(prepared->pipeline, 1), "2-3,6-7");
  s = MakeScenario(PipelineSchedule::k1F1B, 3, 4);
  s.params.model.layers = 4;  // uneven: 2, 1, 1
  const auto uneven = PreparePipeline(s, FreeLinks(3));
  std::string all;
  for (int st = 0; st < 3; ++st) all += PipelineStageLayers(uneven->pipeline, st) + " ";
  EXPECT_EQ(all, "0-1 2 3 ");
}

TEST(Pipeline, BadShapesAreRejectedWithTheField) {
  auto message = [](PipelineScenario s) -> std::string {
    try {
      CheckPipelineScenario(s, MakeUniformRing(8, 100, 500));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      return e.what();
    }
    return "";
  };
  PipelineScenario s = MakeScenario(PipelineSchedule::k1F1B, 4, 0);
  EXPECT_EQ(message(s).rfind("microbatches: ", 0), 0u) << message(s);
  s = MakeScenario(PipelineSchedule::k1F1B, 8, 8);
  s.params.model.layers = 4;
  EXPECT_EQ(message(s).rfind("stages: 8 stages but the model has only 4 layers", 0), 0u) << message(s);
  s = MakeScenario(PipelineSchedule::kInterleaved1F1B, 4, 8, 3);  // 12 chunks, 16 layers
  EXPECT_EQ(message(s).rfind("chunks: ", 0), 0u) << message(s);
  s = MakeScenario(PipelineSchedule::k1F1B, 4, 5);  // 16 rows into 5
  EXPECT_EQ(message(s).rfind("microbatches: a batch of 16 rows", 0), 0u) << message(s);
  s = MakeScenario(PipelineSchedule::k1F1B, 16, 16);
  EXPECT_EQ(message(s).rfind("stages: 16 stages but topology", 0), 0u) << message(s);
  s = MakeScenario(PipelineSchedule::kInterleaved1F1B, 1, 4, 2);
  EXPECT_EQ(message(s).rfind("stages: ", 0), 0u) << message(s);
  s = MakeScenario(PipelineSchedule::k1F1B, 4, 8);
  s.backend = "nope";
  EXPECT_EQ(message(s).rfind("backend: ", 0), 0u) << message(s);
  EXPECT_EQ(message(MakeScenario(PipelineSchedule::k1F1B, 4, 8)), "");
}

}  // namespace
}  // namespace shardlab
