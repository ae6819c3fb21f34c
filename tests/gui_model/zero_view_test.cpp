// ZeroView and MemoryTimeline: the memory chart of a ZeRO run. Bars stack
// exactly what the simulator measured (segments add up to the persistent
// bytes plus each transient peak), the formula's line is ZeroMemoryPerGpu's
// total, and from stage 0 to 3 the optimizer states, then the gradients,
// then the parameters fall to 1/N. The timeline rebuilt from the events
// peaks where the backend's tracker did, and the collectives of every
// stage get the names a student reads on the pills.
#include "app/gui/model/zero_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/gui/model/memory_timeline.h"
#include "app/gui/model/timeline_store.h"
#include "engine/model/zero_memory.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab::gui {
namespace {

constexpr auto kParams = static_cast<std::size_t>(MemoryCategory::kParameters);
constexpr auto kGrads = static_cast<std::size_t>(MemoryCategory::kGradients);
constexpr auto kOptimizer = static_cast<std::size_t>(MemoryCategory::kOptimizerStates);
constexpr auto kGathered = static_cast<std::size_t>(MemoryCategory::kGatheredParameters);

/// A ZeRO run recorded as the app records it: events in a store, and the
/// summary with the backend's measured memory.
struct Recorded {
  std::unique_ptr<PreparedZero> prepared;
  TimelineStore store;
  ZeroSummary summary;
  const ZeroPlan& zero() const { return prepared->zero; }
  const Plan& plan() const { return prepared->zero.plan; }
};

/// The app's default model: 4 layers x 64, batch 32, 2 Adam steps, a 16K
/// bucket (two buckets of two layers), overlap on.
ZeroScenario Small(int stage, int ranks = 4) {
  ZeroScenario s;
  s.params.model.layers = 4;
  s.params.model.width = 64;
  s.params.model.batch = 32;
  s.params.model.optimizer = OptimizerKind::kAdam;
  s.params.model.learning_rate = 1e-3f;
  s.params.ranks = ranks;
  s.params.stage = stage;
  s.params.steps = 2;
  s.params.bucket_bytes = 16 << 10;
  return s;
}

std::unique_ptr<Recorded> Record(const ZeroScenario& s) {
  auto r = std::make_unique<Recorded>();
  r->prepared = PrepareZero(s);
  RunOptions options;
  options.seed = s.seed;
  options.timing_only = s.timing_only;
  Executor executor(CreateBackend("sim"), r->prepared->zero.plan, r->prepared->topology, options);
  VectorSink sink;
  executor.RunToEnd(sink);
  EXPECT_EQ(executor.state(), ExecutorState::kDone) << executor.error();
  r->store.Add(sink.events);
  r->summary = SummarizeZero(*r->prepared, sink.events, executor.backend(), &executor.plan());
  return r;
}

Bytes SegmentSum(const ZeroMemoryBar& bar) {
  Bytes sum = 0;
  for (const ZeroMemorySegment& s : bar.segments) sum += s.bytes;
  return sum;
}

Bytes Persistent(const ZeroMemoryBar& bar, std::size_t category) {
  for (const ZeroMemorySegment& s : bar.segments) {
    if (!s.transient && static_cast<std::size_t>(s.category) == category) return s.bytes;
  }
  return 0;
}

TEST(ZeroMemoryBar, SegmentsAddUpToWhatTheBackendMeasured) {
  for (int stage = 0; stage <= 3; ++stage) {
    const auto r = Record(Small(stage));
    ASSERT_EQ(r->summary.memory.size(), 4u);
    for (int rank = 0; rank < 4; ++rank) {
      const RankMemory& m = r->summary.memory[static_cast<std::size_t>(rank)];
      const ZeroMemoryBar bar = ZeroPeakBar(rank, m);
      // Persistent bytes, then each category's peak above them; the load
      // step's fp32 staging ("other" that comes and goes) is counted apart.
      const Bytes transient = (m.peak[kGrads] - m.persistent[kGrads]) + (m.peak[kGathered] - m.persistent[kGathered]);
      const auto other = static_cast<std::size_t>(MemoryCategory::kOther);
      EXPECT_EQ(SegmentSum(bar), bar.total);
      EXPECT_EQ(bar.total, m.persistent_total() + transient) << "stage " << stage << " rank " << rank;
      EXPECT_EQ(bar.left_out, m.peak[other] - m.persistent[other]);
      EXPECT_EQ(bar.model_states, m.persistent[kParams] + m.persistent[kGrads] + m.persistent[kOptimizer]);
      // Stacked without gaps, persistent first.
      Bytes base = 0;
      bool seen_transient = false;
      for (const ZeroMemorySegment& s : bar.segments) {
        EXPECT_EQ(s.base, base);
        EXPECT_GT(s.bytes, 0);
        EXPECT_FALSE(seen_transient && !s.transient) << "a persistent segment above a transient one";
        seen_transient = seen_transient || s.transient;
        base += s.bytes;
      }
      // The model states the formula counts (K = 12) are exactly what was allocated.
      EXPECT_NEAR(static_cast<double>(bar.model_states), r->summary.formula.total(), 8.0) << stage;
    }
  }
}

TEST(ZeroMemoryBar, StagesShardOptimizerStatesThenGradientsThenParameters) {
  constexpr int kRanks = 4;
  std::vector<ZeroMemoryBar> bars;
  for (int stage = 0; stage <= 3; ++stage) bars.push_back(ZeroPeakBar(0, Record(Small(stage, kRanks))->summary.memory[0]));
  auto ratio = [&](int from, int to, std::size_t c) {
    return static_cast<double>(Persistent(bars[static_cast<std::size_t>(from)], c)) /
           static_cast<double>(Persistent(bars[static_cast<std::size_t>(to)], c));
  };
  // Stage 1: the optimizer states fall to 1/N, nothing else moves.
  EXPECT_NEAR(ratio(0, 1, kOptimizer), kRanks, 0.01);
  EXPECT_EQ(Persistent(bars[1], kGrads), Persistent(bars[0], kGrads));
  EXPECT_EQ(Persistent(bars[1], kParams), Persistent(bars[0], kParams));
  // Stage 2: then the gradients.
  EXPECT_NEAR(ratio(1, 2, kGrads), kRanks, 0.01);
  EXPECT_EQ(Persistent(bars[2], kParams), Persistent(bars[0], kParams));
  // Stage 3: then the parameters.
  EXPECT_NEAR(ratio(2, 3, kParams), kRanks, 0.01);
  // Every stage holds less than the one before.
  for (int stage = 1; stage <= 3; ++stage) {
    EXPECT_LT(bars[static_cast<std::size_t>(stage)].model_states, bars[static_cast<std::size_t>(stage - 1)].model_states);
  }
  // What comes and goes: stage 2's bucket of full gradients, stage 3's
  // gathered layer (and its gradient); none before.
  auto transient = [](const ZeroMemoryBar& bar, std::size_t c) {
    for (const ZeroMemorySegment& s : bar.segments)
      if (s.transient && static_cast<std::size_t>(s.category) == c) return s.bytes;
    return Bytes{0};
  };
  EXPECT_EQ(transient(bars[0], kGrads) + transient(bars[1], kGrads), 0);
  EXPECT_GT(transient(bars[2], kGrads), 0);
  EXPECT_EQ(transient(bars[2], kGathered), 0);
  EXPECT_GT(transient(bars[3], kGathered), 0);
}

TEST(ZeroMemoryChart, FormulaLineAndAxisStayPutAcrossStages) {
  // One axis for every stage of a model: what stage 0 holds.
  std::vector<double> axes;
  for (int stage = 0; stage <= 3; ++stage) {
    const auto r = Record(Small(stage));
    std::vector<ZeroMemoryBar> bars;
    for (int rank = 0; rank < 4; ++rank) bars.push_back(ZeroPeakBar(rank, r->summary.memory[static_cast<std::size_t>(rank)]));
    const double psi = r->summary.parameter_count;
    for (const int k : {12, 8}) {
      const double formula = ZeroMemoryPerGpu(psi, 4, stage, k).total();
      const double axis = ZeroChartAxisBytes(psi, bars, formula);
      if (k == 12) axes.push_back(axis);
      EXPECT_GE(axis, static_cast<double>(bars[0].total));
      const Rect plot{{10, 20}, {410, 320}};
      const ZeroChartLayout layout = LayoutZeroMemoryChart(bars, axis, plot);
      ASSERT_EQ(layout.shown.size(), 4u);
      EXPECT_EQ(layout.hidden, 0);
      // The line sits at the formula's bytes on the chart's scale; with
      // K = 12 that is the top of the optimizer states.
      const float line_y = layout.YOf(formula);
      EXPECT_NEAR(line_y, plot.max.y - formula / axis * plot.height(), 1e-3);
      if (k == 12) {
        const std::size_t top_of_states = 2;  // parameters, gradients, optimizer states
        EXPECT_NEAR(layout.segments[0][top_of_states].min.y, line_y, 0.5f) << "stage " << stage;
      } else {
        EXPECT_GT(line_y, layout.segments[0][2].min.y) << "K = 8 leaves out the fp32 master copy";
      }
      // Segments are stacked in the bar, from the plot's floor up.
      for (std::size_t b = 0; b < layout.shown.size(); ++b) {
        float y = plot.max.y;
        for (const Rect& seg : layout.segments[b]) {
          EXPECT_NEAR(seg.max.y, y, 1e-3);
          EXPECT_LE(seg.min.y, seg.max.y);
          y = seg.min.y;
        }
        EXPECT_NEAR(y, layout.bars[b].min.y, 1e-3);
        EXPECT_GE(y, plot.min.y - 1e-3);
      }
    }
  }
  for (double axis : axes) EXPECT_DOUBLE_EQ(axis, axes.front());
}

TEST(ZeroMemoryChart, ManyRanksShowTheFirstAndTheLast) {
  std::vector<ZeroMemoryBar> bars(64);
  for (int r = 0; r < 64; ++r) {
    bars[static_cast<std::size_t>(r)] = StackZeroMemory(r, CategoryBytes{0, 100, 100, 400, 10, 0}, CategoryBytes{});
  }
  const ZeroChartLayout layout = LayoutZeroMemoryChart(bars, 1000, Rect{{0, 0}, {240, 100}});
  ASSERT_EQ(layout.shown.size(), 10u);  // 240 px / (2 x 12 px)
  EXPECT_EQ(layout.shown.front(), 0);
  EXPECT_EQ(layout.shown.back(), 63);
  EXPECT_EQ(layout.hidden, 54);
  for (std::size_t k = 1; k < layout.bars.size(); ++k) EXPECT_LT(layout.bars[k - 1].max.x, layout.bars[k].min.x);
  EXPECT_GE(layout.bars.front().width(), kZeroMinBarPx - 1e-3f);
}

TEST(ZeroMemoryChart, TicksAreRoundAndCoverTheAxis) {
  const std::vector<double> ticks = ZeroChartTicks(284680, 4);
  ASSERT_GE(ticks.size(), 3u);
  EXPECT_EQ(ticks.front(), 0);
  EXPECT_DOUBLE_EQ(ticks[1], 100000);  // 71 kB a tick rounds up to 100 kB
  EXPECT_LE(ticks.back(), 284680);
  EXPECT_TRUE(ZeroChartTicks(0, 4).empty());
}

TEST(ZeroBytesText, DecimalUnitsAsThePaperCounts) {
  EXPECT_EQ(ZeroBytesText(266240), "266 kB");
  EXPECT_EQ(ZeroBytesText(66560), "66.6 kB");
  EXPECT_EQ(ZeroBytesText(8320), "8.32 kB");
  EXPECT_EQ(ZeroBytesText(999), "999 B");
  EXPECT_EQ(ZeroBytesText(999600), "1.00 MB");
  EXPECT_EQ(ZeroBytesText(16 * 7.5e9), "120 GB");
  EXPECT_EQ(ZeroBytesText(ZeroMemoryPerGpu(7.5e9, 64, 3, 12).total()), "1.88 GB");
}

TEST(MemoryTimeline, PeaksWhereTheBackendsTrackerDid) {
  for (int stage = 0; stage <= 3; ++stage) {
    const auto r = Record(Small(stage));
    MemoryTimeline timeline;
    timeline.Build(r->plan(), r->store);
    ASSERT_EQ(timeline.ranks(), 4);
    for (int rank = 0; rank < 4; ++rank) {
      const RankMemory& m = r->summary.memory[static_cast<std::size_t>(rank)];
      const CategoryBytes peak = timeline.Peak(rank);
      for (int c = 0; c < kMemoryCategoryCount; ++c) {
        const auto i = static_cast<std::size_t>(c);
        EXPECT_EQ(timeline.persistent(rank)[i], m.persistent[i]) << "stage " << stage << " category " << c;
        EXPECT_EQ(peak[i], m.peak[i]) << "stage " << stage << " rank " << rank << " category "
                                      << MemoryCategoryName(static_cast<MemoryCategory>(c));
      }
      EXPECT_EQ(timeline.PeakTotal(rank), m.peak_total) << "stage " << stage;
    }
  }
}

TEST(MemoryTimeline, GatheredParametersComeAndGoDuringAStage3Run) {
  const auto r = Record(Small(3));
  MemoryTimeline timeline;
  timeline.Build(r->plan(), r->store);
  // Sample the run: gathered parameters are live at some moments and not
  // at others, never more than the tracker's peak, and gone at the end.
  const TimeNs end = r->store.end_ns();
  int live = 0, idle = 0;
  for (int k = 0; k <= 1000; ++k) {
    const TimeNs t = end * k / 1000.0;
    const ZeroMemoryBar bar = ZeroLiveBar(0, timeline, t);
    const Bytes gathered = timeline.LiveAt(0, t)[kGathered];
    (gathered > 0 ? live : idle) += 1;
    EXPECT_LE(gathered, r->summary.memory[0].peak[kGathered]);
    EXPECT_GE(bar.total, r->summary.memory[0].persistent_total() - r->summary.memory[0].persistent[static_cast<std::size_t>(MemoryCategory::kOther)]);
  }
  EXPECT_GT(live, 0);
  EXPECT_GT(idle, 0);
  EXPECT_EQ(timeline.LiveAt(0, end)[kGathered], 0);
  EXPECT_TRUE(timeline.TransientLiveAt(0, end).empty());
}

TEST(MemoryTimeline, AnUnfinishedBufferStaysLive) {
  const auto r = Record(Small(3));
  // Only the events that ended in the first third of the run.
  std::vector<Event> early;
  const TimeNs cut = r->store.end_ns() / 3;
  for (const TimelineRow& row : r->store.rows())
    for (const Event& e : row.events)
      if (e.end_ns <= cut) early.push_back(e);
  TimelineStore partial;
  partial.Add(early);
  MemoryTimeline timeline;
  timeline.Build(r->plan(), partial);
  // Whatever was gathered and not yet used by every op is still held.
  const CategoryBytes at_cut = timeline.LiveAt(0, cut);
  const CategoryBytes much_later = timeline.LiveAt(0, 1e18);
  for (std::size_t c = 0; c < at_cut.size(); ++c) EXPECT_LE(much_later[c], at_cut[c] + r->summary.memory[0].peak[c]);
  EXPECT_GE(much_later[kGathered] + much_later[kGrads], timeline.persistent(0)[kGrads]);
}

TEST(ZeroCollectiveNames, SayWhatEachStageMovesAndWhen) {
  // Stage 0: one all-reduce per bucket (two buckets of two layers), per step.
  {
    const auto r = Record(Small(0));
    const auto names = NameZeroCollectives(r->zero(), r->plan());
    ASSERT_EQ(names.size(), 4u);  // 2 buckets x 2 steps
    EXPECT_EQ(names[0].tag, "AR b0");
    EXPECT_EQ(names[0].what, "all-reduce of the gradients of bucket 0 (layers 3-2)");
    EXPECT_TRUE(names[0].two_passes);
    EXPECT_EQ(names[1].tag, "AR b1");
    EXPECT_EQ(names[2].training_step, 1);
  }
  // Stage 2: reduce-scatter of each bucket, then the updated parameters gathered.
  {
    const auto r = Record(Small(2));
    const auto names = NameZeroCollectives(r->zero(), r->plan());
    ASSERT_EQ(names.size(), 8u);
    std::multiset<std::string> tags;
    for (const auto& n : names) {
      if (n.training_step == 0) tags.insert(n.tag);
      EXPECT_FALSE(n.two_passes);
    }
    EXPECT_EQ(tags, (std::multiset<std::string>{"RS b0", "RS b1", "AG b0 upd", "AG b1 upd"}));
    EXPECT_EQ(names[0].what, "reduce-scatter of the gradients of bucket 0 (layers 3-2)");
    const auto updated = std::find_if(names.begin(), names.end(),
                                      [](const ZeroCollectiveName& n) { return n.kind == ZeroCollectiveKind::kGatherUpdated; });
    ASSERT_NE(updated, names.end());
    EXPECT_EQ(updated->what, "all-gather of the updated parameters of bucket 0 (layers 3-2)");
  }
  // Stage 3: every layer gathered before its forward and its backward, its
  // gradient reduce-scattered: 3 x 4 layers a step.
  {
    const auto r = Record(Small(3));
    const auto names = NameZeroCollectives(r->zero(), r->plan());
    ASSERT_EQ(names.size(), 24u);
    EXPECT_EQ(r->zero().collectives_per_step, 12);
    EXPECT_EQ(names[0].tag, "AG L0 fwd");
    EXPECT_EQ(names[0].what, "all-gather of layer 0's parameters before its forward");
    EXPECT_EQ(names[3].tag, "AG L3 fwd");
    EXPECT_EQ(names[4].tag, "AG L3 bwd");
    EXPECT_EQ(names[5].tag, "RS L3");
    EXPECT_EQ(names[5].what, "reduce-scatter of the gradients of layer 3");
    EXPECT_EQ(names[12].training_step, 1);
    EXPECT_EQ(names[12].tag, "AG L0 fwd");
    for (std::size_t i = 0; i < names.size(); ++i) {
      EXPECT_EQ(FindZeroCollective(names, names[i].seq), &names[i]);
    }
  }
}

TEST(ZeroOpLabels, ComputeSaysLayerAndTransfersSayTheirCollective) {
  const auto r = Record(Small(3));
  const auto names = NameZeroCollectives(r->zero(), r->plan());
  bool saw_forward = false, saw_gather = false, saw_adam = false;
  for (const Op& op : r->plan().ops) {
    const auto labels = ZeroOpLabels(op, r->zero(), names);
    for (const std::string& l : labels) EXPECT_FALSE(l.empty());
    EXPECT_GE(labels[0].size(), labels[1].size());
    if (op.kind == OpKind::kCompute && op.tags.phase == Phase::kForward && op.tags.layer == 2) {
      EXPECT_EQ(labels[1], "F2");
      EXPECT_TRUE(ZeroComputeWords(op, r->zero()).rfind("forward of layer 2 on this GPU's 8 rows", 0) == 0)
          << ZeroComputeWords(op, r->zero());
      saw_forward = true;
    }
    if (op.kind == OpKind::kSend && op.collective_seq == 4) {  // step 1's gather of layer 3 before backward
      EXPECT_EQ(labels[0].rfind("AG L3 bwd\xC2\xB7", 0), 0u) << labels[0];
      EXPECT_EQ(labels[1].rfind("AG L3\xC2\xB7", 0), 0u) << labels[1];
      saw_gather = true;
    }
    if (op.kind == OpKind::kCompute && op.tags.phase == Phase::kOptimizer) {
      EXPECT_EQ(labels[1], "Adam");
      EXPECT_NE(ZeroComputeWords(op, r->zero()).find("1/4 shard of layer"), std::string::npos);
      saw_adam = true;
    }
  }
  EXPECT_TRUE(saw_forward && saw_gather && saw_adam);
}

}  // namespace
}  // namespace shardlab::gui
