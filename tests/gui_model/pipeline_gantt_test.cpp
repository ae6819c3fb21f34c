// PipelineGantt: the bubbles the Gantt hatches add up to the engine's idle
// time per stage and make GPipe's staircase; micro-batch colours share a hue
// across passes; labels and tooltip words name the micro-batch and layers.
#include "app/gui/model/pipeline_gantt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/run/executor.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab::gui {
namespace {

PipelineScenario Scenario(PipelineSchedule schedule, int p, int m, int v = 1) {
  PipelineScenario s;
  s.params.schedule = schedule;
  s.params.shape = {p, m, v};
  s.params.model.layers = 8;
  s.params.model.width = 16;
  s.params.model.batch = 2 * m;
  s.seed = 3;
  return s;
}

/// A real run of `scenario` on the simulator, its events in a TimelineStore.
struct PipelineRun {
  std::unique_ptr<PreparedPipeline> prepared;
  Plan plan;  // the plan the executor ran
  std::vector<Event> events;
  TimelineStore store;
  PipelineMetrics metrics;
};

/// Runs `scenario` on `topology`; `costs` (if set) rewrites the plan's FLOPs first.
std::unique_ptr<PipelineRun> RunPipeline(const PipelineScenario& scenario, const Topology& topology,
                                 void (*costs)(Plan&) = nullptr) {
  auto run = std::make_unique<PipelineRun>();
  run->prepared = PreparePipeline(scenario, topology);
  if (costs != nullptr) costs(run->prepared->pipeline.plan);
  RunOptions options;
  options.seed = scenario.seed;
  options.timing_only = costs != nullptr;
  Executor executor(CreateBackend("sim"), run->prepared->pipeline.plan, topology, options);
  VectorSink sink;
  executor.RunToEnd(sink);
  EXPECT_EQ(executor.state(), ExecutorState::kDone) << executor.error();
  run->plan = executor.plan();
  run->events = sink.events;
  run->store.Add(run->events);
  run->metrics = MeasurePipeline(run->prepared->pipeline, run->plan, run->events);
  return run;
}

// F one unit of time, B two, optimizer free: GPipe's textbook timeline.
void UnitCosts(Plan& plan) {
  for (Op& op : plan.ops) {
    if (op.kind != OpKind::kCompute) continue;
    op.flops = op.tags.phase == Phase::kForward ? 1e6 : op.tags.phase == Phase::kBackward ? 2e6 : 0;
  }
}

// Links and memory that cost nothing: only FLOPs take time.
Topology FreeLinks(int gpus) {
  Topology t = MakeUniformRing(gpus, 1e12, 0);
  for (Node& node : t.nodes) node.device.memory_gbps = 0;
  return t;
}

TEST(PipelineBubbles, AddUpToTheEnginesIdleTimeOfEveryStage) {
  for (const PipelineSchedule schedule : {PipelineSchedule::kGPipe, PipelineSchedule::k1F1B,
                                          PipelineSchedule::kInterleaved1F1B, PipelineSchedule::kZeroBubbleH1}) {
    const int v = schedule == PipelineSchedule::kInterleaved1F1B ? 2 : 1;
    // Real kernels and links that cost time: slots of unequal length, and
    // transfers that open gaps of their own.
    const auto four = RunPipeline(Scenario(schedule, 4, 8, v), MakeUniformRing(4, 100, 500));
    const auto two = RunPipeline(Scenario(schedule, 2, 4, v), MakeUniformRing(2, 100, 500));
    for (const PipelineRun* r : {four.get(), two.get()}) {
      const std::string name = PipelineScheduleName(schedule) + std::string(" p=") +
                               std::to_string(r->prepared->pipeline.params.shape.stages);
      const PipelineBubbles bubbles = FindPipelineBubbles(r->store, r->plan);
      EXPECT_NEAR(bubbles.span.end_ns - bubbles.span.start_ns, r->metrics.span_ns, 1e-6) << name;
      ASSERT_EQ(bubbles.stages.size(), r->metrics.stages.size()) << name;
      for (int s = 0; s < static_cast<int>(bubbles.stages.size()); ++s) {
        EXPECT_NEAR(bubbles.IdleNs(s), r->metrics.stages[s].idle_ns, 1e-6 * r->metrics.span_ns)
            << name << " stage " << s;
        EXPECT_GT(bubbles.IdleNs(s), 0) << name << " stage " << s;
        // Sorted, disjoint, non-empty, inside the span.
        TimeNs last_end = bubbles.span.start_ns;
        for (const PipelineBubble& b : bubbles.stages[s]) {
          EXPECT_GE(b.start_ns, last_end) << name << " stage " << s;
          EXPECT_GT(b.end_ns, b.start_ns) << name << " stage " << s;
          last_end = b.end_ns;
        }
        EXPECT_LE(last_end, bubbles.span.end_ns) << name << " stage " << s;
      }
    }
  }
}

TEST(PipelineBubbles, GPipeOnFourStagesIsTheTextbookStaircase) {
  // F = f, B = 2f, free links. Stage s waits s·f to start (fill), then
  // (3-s)(f+b) for the first gradient to come back, and s·b at the end
  // (drain): 3(f+b) in all on every stage.
  const int p = 4, m = 4;
  const auto run = RunPipeline(Scenario(PipelineSchedule::kGPipe, p, m), FreeLinks(p), UnitCosts);
  const PipelineBubbles bubbles = FindPipelineBubbles(run->store, run->plan);
  const TimeNs f = run->metrics.stages[0].forward_ns / m;
  const TimeNs b = run->metrics.stages[0].backward_ns / m;
  ASSERT_GT(f, 0);
  ASSERT_NEAR(b, 2 * f, 1e-6 * f);
  const double tolerance = 1e-6 * f;
  const TimeNs start = bubbles.span.start_ns, end = bubbles.span.end_ns;
  EXPECT_NEAR(end - start, (m + p - 1) * (f + b), tolerance);
  for (int s = 0; s < p; ++s) {
    std::vector<PipelineBubble> expected;
    if (s > 0) expected.push_back({start, start + s * f});                              // fill
    const TimeNs last_forward_end = start + (s + m) * f;
    if (s < p - 1) expected.push_back({last_forward_end, last_forward_end + (p - 1 - s) * (f + b)});  // turn
    if (s > 0) expected.push_back({end - s * b, end});                                  // drain
    const std::vector<PipelineBubble>& got = bubbles.stages[s];
    ASSERT_EQ(got.size(), expected.size()) << "stage " << s;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i].start_ns, expected[i].start_ns, tolerance) << "stage " << s << " bubble " << i;
      EXPECT_NEAR(got[i].end_ns, expected[i].end_ns, tolerance) << "stage " << s << " bubble " << i;
    }
    EXPECT_NEAR(bubbles.IdleNs(s), (p - 1) * (f + b), tolerance) << "stage " << s;
  }
}

TEST(PipelineBubbles, SayWhatTheStageWaitsFor) {
  const int p = 4, m = 4;
  const auto run = RunPipeline(Scenario(PipelineSchedule::kGPipe, p, m), FreeLinks(p), UnitCosts);
  const PipelineBubbles bubbles = FindPipelineBubbles(run->store, run->plan);
  auto compute_row = [&](int rank) -> const TimelineRow& {
    for (const TimelineRow& row : run->store.rows())
      if (row.rank == rank && row.lane == Lane::kCompute) return row;
    ADD_FAILURE() << "no compute row for rank " << rank;
    return run->store.rows().front();
  };
  const TimelineRow& stage2 = compute_row(2);
  EXPECT_EQ(BubbleReason(stage2, run->plan, bubbles.stages[2][0], bubbles.span),
            "fill: waiting for the activation of micro-batch 0 from GPU1");
  EXPECT_EQ(BubbleReason(stage2, run->plan, bubbles.stages[2][1], bubbles.span),
            "waiting for the gradient of micro-batch 0 from GPU3");
  EXPECT_EQ(BubbleReason(stage2, run->plan, bubbles.stages[2][2], bubbles.span).rfind("drain: ", 0), 0u);
}

// A hand-made plan: the optimizer counts as idle, a stage with no compute
// row idles for the whole span, and nothing before the first slot counts.
TEST(PipelineBubbles, TheOptimizerIsIdleAndAStageWithoutWorkIdlesThroughout) {
  Plan plan;
  plan.num_ranks = 3;
  auto add = [&](int rank, Phase phase, TimeNs start_ns, TimeNs end_ns, std::vector<Event>& events) {
    Op op;
    op.rank = rank;
    op.tags.phase = phase;
    op.tags.microbatch = phase == Phase::kOptimizer ? -1 : 0;
    plan.ops.push_back(op);
    Event e;
    e.op = static_cast<int>(plan.ops.size()) - 1;
    e.rank = rank;
    e.lane = Lane::kCompute;
    e.start_ns = start_ns;
    e.end_ns = end_ns;
    events.push_back(e);
  };
  std::vector<Event> events;
  add(0, Phase::kOptimizer, -5, 0, events);  // before the span: not counted
  add(0, Phase::kForward, 0, 10, events);
  add(0, Phase::kOptimizer, 10, 15, events);
  add(0, Phase::kBackward, 20, 30, events);
  add(1, Phase::kWeightGrad, 10, 20, events);
  TimelineStore store;
  store.Add(events);

  const PipelineBubbles bubbles = FindPipelineBubbles(store, plan);
  EXPECT_EQ(bubbles.span.start_ns, 0);
  EXPECT_EQ(bubbles.span.end_ns, 30);
  ASSERT_EQ(bubbles.stages.size(), 3u);
  ASSERT_EQ(bubbles.stages[0].size(), 1u);
  EXPECT_EQ(bubbles.stages[0][0].start_ns, 10);
  EXPECT_EQ(bubbles.stages[0][0].end_ns, 20);
  ASSERT_EQ(bubbles.stages[1].size(), 2u);
  EXPECT_EQ(bubbles.IdleNs(1), 20);
  ASSERT_EQ(bubbles.stages[2].size(), 1u);
  EXPECT_EQ(bubbles.IdleNs(2), 30);
  EXPECT_EQ(bubbles.IdleNs(3), 0);

  EXPECT_EQ(BubbleAt(bubbles.stages[1], -1), -1);
  EXPECT_EQ(BubbleAt(bubbles.stages[1], 0), 0);
  EXPECT_EQ(BubbleAt(bubbles.stages[1], 15), -1);
  EXPECT_EQ(BubbleAt(bubbles.stages[1], 25), 1);
  EXPECT_EQ(BubbleAt(bubbles.stages[1], 31), -1);

  const PipelineBubbles none = FindPipelineBubbles(TimelineStore{}, plan);
  EXPECT_TRUE(none.span.empty());
  EXPECT_EQ(none.IdleNs(0), 0);
}

// ---------------------------------------------------------------------------
// Colours

struct Rgb {
  double r, g, b;
};
Rgb Channels(std::uint32_t rgb) {
  return {((rgb >> 16) & 0xFF) / 255.0, ((rgb >> 8) & 0xFF) / 255.0, (rgb & 0xFF) / 255.0};
}
double HueOf(std::uint32_t packed) {
  const Rgb c = Channels(packed);
  const double hi = std::max({c.r, c.g, c.b}), lo = std::min({c.r, c.g, c.b}), d = hi - lo;
  if (d <= 0) return 0;
  double h = hi == c.r ? std::fmod((c.g - c.b) / d, 6.0) : hi == c.g ? (c.b - c.r) / d + 2 : (c.r - c.g) / d + 4;
  h *= 60;
  return h < 0 ? h + 360 : h;
}
double HueDistance(double a, double b) {
  const double d = std::fabs(a - b);
  return std::min(d, 360 - d);
}
double Luma(std::uint32_t packed) {
  const Rgb c = Channels(packed);
  return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b;
}
std::uint32_t Colour(Phase phase, int microbatch, bool light) {
  return HsvToRgb(MicrobatchHsv(phase, microbatch, light));
}

TEST(MicrobatchColour, ForwardBackwardAndWeightShareTheHueButNotTheShade) {
  for (const bool light : {false, true}) {
    for (int j = 0; j < 2 * kMicrobatchHueCount; ++j) {
      const std::uint32_t f = Colour(Phase::kForward, j, light);
      const std::uint32_t b = Colour(Phase::kBackward, j, light);
      const std::uint32_t w = Colour(Phase::kWeightGrad, j, light);
      EXPECT_LT(HueDistance(HueOf(f), HueOf(b)), 4) << "micro-batch " << j << " light " << light;
      EXPECT_LT(HueDistance(HueOf(f), HueOf(w)), 4) << "micro-batch " << j << " light " << light;
      EXPECT_NE(f, b);
      EXPECT_NE(f, w);
      EXPECT_NE(b, w);
      // Forward is the light shade, backward the dark one.
      EXPECT_GT(Luma(f), Luma(b) + 0.15) << "micro-batch " << j << " light " << light;
    }
  }
}

TEST(MicrobatchColour, NeighbouringMicrobatchesLookDifferentAndThePaletteCycles) {
  for (const bool light : {false, true}) {
    for (int j = 0; j < 3 * kMicrobatchHueCount; ++j) {
      for (const Phase phase : {Phase::kForward, Phase::kBackward}) {
        const double here = HueOf(Colour(phase, j, light));
        EXPECT_GE(HueDistance(here, HueOf(Colour(phase, j + 1, light))), 90) << "micro-batch " << j;
        EXPECT_EQ(Colour(phase, j, light), Colour(phase, j + kMicrobatchHueCount, light));
      }
    }
    // Within one cycle every micro-batch has a hue of its own.
    for (int a = 0; a < kMicrobatchHueCount; ++a)
      for (int b = a + 1; b < kMicrobatchHueCount; ++b)
        EXPECT_GE(HueDistance(HueOf(Colour(Phase::kBackward, a, light)), HueOf(Colour(Phase::kBackward, b, light))),
                  20)
            << a << " vs " << b;
  }
  EXPECT_EQ(Colour(Phase::kForward, -1, false), Colour(Phase::kForward, 0, false));
}

TEST(MicrobatchColour, HsvToRgbHitsThePrimaries) {
  EXPECT_EQ(HsvToRgb({0, 1, 1}), 0xFF0000u);
  EXPECT_EQ(HsvToRgb({120, 1, 1}), 0x00FF00u);
  EXPECT_EQ(HsvToRgb({240, 1, 1}), 0x0000FFu);
  EXPECT_EQ(HsvToRgb({360, 1, 1}), 0xFF0000u);
  EXPECT_EQ(HsvToRgb({0, 0, 0.5}), 0x808080u);
}

// ---------------------------------------------------------------------------
// Words

TEST(PipelineOpLabels, NameTheMicrobatchPassAndPeer) {
  const PipelineShape plain{4, 8, 1};
  Op forward;
  forward.tags = {Phase::kForward, 1, 3, 2};
  EXPECT_EQ(PipelineOpLabels(forward, plain), (std::array<std::string, 3>{"F3", "F3", "3"}));
  const PipelineShape interleaved{4, 8, 2};
  forward.tags.chunk = 5;  // stage 1's local chunk 1
  EXPECT_EQ(PipelineOpLabels(forward, interleaved), (std::array<std::string, 3>{"F3.1", "F3", "3"}));

  Op send;
  send.kind = OpKind::kSend;
  send.lane = Lane::kSend;
  send.peer = 1;
  send.tags = {Phase::kForward, 4, 3, 1};
  EXPECT_EQ(PipelineOpLabels(send, interleaved), (std::array<std::string, 3>{"F3 -> GPU1", "F3 ->1", "F3"}));
  Op recv;
  recv.kind = OpKind::kRecv;
  recv.lane = Lane::kRecv;
  recv.peer = 2;
  recv.tags = {Phase::kBackward, 2, 3, 3};
  EXPECT_EQ(PipelineOpLabels(recv, plain), (std::array<std::string, 3>{"B3 <- GPU2", "B3 <-2", "B3"}));

  Op opt;
  opt.tags.phase = Phase::kOptimizer;
  EXPECT_EQ(PipelineOpLabels(opt, plain)[1], "opt");
}

TEST(PipelineOpSummary, NamesTheMicrobatchAndTheLayers) {
  const auto run = RunPipeline(Scenario(PipelineSchedule::k1F1B, 4, 8), FreeLinks(4), UnitCosts);
  const PipelinePlan& pipeline = run->prepared->pipeline;
  int checked = 0;
  for (const Op& op : run->plan.ops) {
    const std::string text = PipelineOpSummary(op, pipeline);
    if (op.rank != 1 || (op.tags.microbatch != 3 && op.tags.phase != Phase::kOptimizer)) continue;
    if (op.kind == OpKind::kCompute && op.tags.phase == Phase::kForward) {
      EXPECT_EQ(text, "micro-batch 3, forward of layers 2-3");
    } else if (op.kind == OpKind::kCompute && op.tags.phase == Phase::kBackward) {
      EXPECT_EQ(text, "micro-batch 3, backward of layers 2-3");
    } else if (op.tags.phase == Phase::kOptimizer) {
      EXPECT_EQ(text, "optimizer step of layers 2-3");
    } else if (op.kind == OpKind::kSend && op.tags.phase == Phase::kForward) {
      EXPECT_EQ(text, "micro-batch 3, activation out of layer 3");
    } else if (op.kind == OpKind::kSend && op.tags.phase == Phase::kBackward) {
      EXPECT_EQ(text, "micro-batch 3, gradient of layer 1's output");
    } else {
      continue;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);

  // Interleaved, p = 2, v = 2, 8 layers: stage 0 holds chunks 0 (layers
  // 0-1) and 2 (layers 4-5); ZB-H1 names its split passes.
  const auto inter = RunPipeline(Scenario(PipelineSchedule::kInterleaved1F1B, 2, 4, 2), FreeLinks(2), UnitCosts);
  for (const Op& op : inter->plan.ops) {
    if (op.rank != 0 || op.kind != OpKind::kCompute) continue;
    const std::string text = PipelineOpSummary(op, inter->prepared->pipeline);
    if (op.tags.phase == Phase::kOptimizer) {
      EXPECT_EQ(text, "optimizer step of layers 0-1, 4-5");
    }
    if (op.tags.phase == Phase::kForward && op.tags.chunk == 2 && op.tags.microbatch == 1) {
      EXPECT_EQ(text, "micro-batch 1, forward of layers 4-5 (chunk 1 of this stage)");
    }
  }
  const auto zb = RunPipeline(Scenario(PipelineSchedule::kZeroBubbleH1, 4, 4), FreeLinks(4), UnitCosts);
  for (const Op& op : zb->plan.ops) {
    if (op.rank != 0 || op.kind != OpKind::kCompute || op.tags.microbatch != 2) continue;
    const std::string text = PipelineOpSummary(op, zb->prepared->pipeline);
    if (op.tags.phase == Phase::kBackward) {
      EXPECT_EQ(text, "micro-batch 2, input gradient (B) of layers 0-1");
    }
    if (op.tags.phase == Phase::kWeightGrad) {
      EXPECT_EQ(text, "micro-batch 2, weight gradient (W) of layers 0-1");
    }
  }
}

}  // namespace
}  // namespace shardlab::gui
