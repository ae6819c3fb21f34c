// Tensor parallelism on the simulator: each split layer's forward output
// and every gradient equal the single-device layer, for tp 1, 2, 4, 8, with
// and without sequence parallelism, and hidden sizes that do and do not
// divide by tp; the all-reduces (or reduce-scatter + all-gather pairs) are
// where Megatron puts them, counted in the Plan and in the events with
// T×H elements each; the reference's gradients match finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <string>

#include "engine/algorithms/tensor_parallel.h"
#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

constexpr std::uint64_t kSeed = 3;
constexpr TpLayerKind kKinds[] = {TpLayerKind::kColumnLinear, TpLayerKind::kRowLinear,
                                  TpLayerKind::kMlp, TpLayerKind::kAttention,
                                  TpLayerKind::kTransformer};

std::string Describe(const TpLayerConfig& c) {
  return std::string(TpLayerKindName(c.kind)) + (c.sequence_parallel ? "+SP" : "") +
         " tp=" + std::to_string(c.tp) + " B=" + std::to_string(c.batch) + " S=" +
         std::to_string(c.seq) + " H=" + std::to_string(c.hidden) + " F=" +
         std::to_string(c.split_width()) + " heads=" + std::to_string(c.head_count());
}

TpLayerConfig Small(TpLayerKind kind, int tp, bool sp = false) {
  TpLayerConfig c;
  c.kind = kind;
  c.tp = tp;
  c.batch = 2;
  c.seq = 8;
  c.hidden = 16;
  c.heads = 8;
  c.ffn = kind == TpLayerKind::kColumnLinear || kind == TpLayerKind::kRowLinear ? 32 : 0;
  c.sequence_parallel = sp;
  return c;
}

struct Ran {
  TpLayerPlan tp;
  std::unique_ptr<Executor> executor;
  VectorSink sink;
};

std::unique_ptr<Ran> RunLayer(const TpLayerConfig& c, TpLayerPlan layer) {
  auto ran = std::make_unique<Ran>();
  ran->tp = std::move(layer);
  RunOptions options;
  options.seed = kSeed;
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), ran->tp.plan,
                                             MakeSharedBus(c.tp, 100, 500), options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_EQ(ran->executor->state(), ExecutorState::kDone) << ran->executor->error();
  return ran;
}

std::unique_ptr<Ran> RunLayer(const TpLayerConfig& c) { return RunLayer(c, BuildTpLayer(c)); }

// Largest |got − want| over the block, relative to the block's largest |want|
// (computed here, not by the engine's own checker). The key bias's gradient
// is zero in exact arithmetic (softmax ignores a shift of a whole row), so
// the scale has a floor of 0.1 (the layer's values are of order 1): rounding noise there is compared absolutely.
double BlockError(std::span<const float> data, const TpTensorBlock& tb, const TpRefTensor& want) {
  const TpBlock& b = tb.block;
  EXPECT_EQ(b.total_rows, want.rows) << tb.tensor;
  EXPECT_EQ(b.total_cols, want.cols) << tb.tensor;
  EXPECT_LE(tb.offset + b.rows * b.cols, static_cast<std::int64_t>(data.size())) << tb.tensor;
  double err = 0, scale = 0.1;
  for (std::int64_t i = 0; i < b.rows; ++i)
    for (std::int64_t j = 0; j < b.cols; ++j) {
      const double w = want.data[static_cast<std::size_t>((b.row0 + i) * want.cols + b.col0 + j)];
      const double g = data[static_cast<std::size_t>(tb.offset + i * b.cols + j)];
      err = std::max(err, std::abs(g - w));
      scale = std::max(scale, std::abs(w));
    }
  return err / scale;
}

// Every output and gradient the reference has is covered by blocks, and
// every block equals the reference.
void ExpectEqualsReference(const TpLayerConfig& c) {
  const auto ran = RunLayer(c);
  const TpLayerReference ref(c, kSeed);
  const Backend& be = ran->executor->backend();
  std::set<std::string> expected = {"y", "dx"};
  for (const TpTensorSpec& spec : TpLayerTensors(c))
    if (spec.weight) expected.insert("d" + spec.name);
  std::map<std::string, std::int64_t> covered;
  for (const TpTensorBlock& b : ran->tp.blocks) {
    if (b.role == TpTensorRole::kWeight) continue;
    ASSERT_TRUE(ref.has(b.tensor)) << b.tensor;
    EXPECT_LT(BlockError(be.BufferData(b.buffer), b, ref.tensor(b.tensor)), 1e-4)
        << Describe(c) << ": " << b.tensor << " on rank " << b.rank;
    covered[b.tensor] += b.block.rows * b.block.cols;
  }
  for (const std::string& name : expected) {
    const TpRefTensor& t = ref.tensor(name);
    // Sharded: the ranks' blocks add up to the tensor; replicated: tp times it.
    const std::int64_t n = t.rows * t.cols, got = covered[name];
    EXPECT_TRUE(got == n || got == n * c.tp) << Describe(c) << ": " << name << " covered " << got
                                             << " of " << n;
  }
}

TEST(TensorParallel, EveryLayerEqualsOneDeviceForEveryDegree) {
  for (const TpLayerKind kind : kKinds)
    for (const int tp : {1, 2, 4, 8}) ExpectEqualsReference(Small(kind, tp));
}

TEST(TensorParallel, SequenceParallelEqualsOneDeviceToo) {
  for (const TpLayerKind kind : {TpLayerKind::kMlp, TpLayerKind::kAttention, TpLayerKind::kTransformer})
    for (const int tp : {1, 2, 4, 8}) ExpectEqualsReference(Small(kind, tp, true));
}

// Hidden sizes tp does not divide are fine where Megatron does not split
// them: only F (and the heads) must divide. The all-reduce's ring chunks
// are then uneven (12 elements over 8 ranks).
TEST(TensorParallel, HiddenSizesThatDoNotDivideStillMatch) {
  for (const TpLayerKind kind : kKinds) {
    for (const int tp : {3, 8}) {
      TpLayerConfig c = Small(kind, tp);
      c.batch = 1;
      c.seq = 2;
      c.hidden = tp == 3 ? 6 : 24;  // 24 = 8 heads of 3; 6 = 3 heads of 2
      c.heads = tp;
      c.ffn = 3 * tp;
      if (kind == TpLayerKind::kAttention || kind == TpLayerKind::kTransformer) c.hidden = 2 * tp;
      ExpectEqualsReference(c);
    }
  }
}

TEST(TensorParallel, ABrokenAllReduceIsCaught) {
  for (const TpLayerKind kind : {TpLayerKind::kMlp, TpLayerKind::kAttention}) {
    const TpLayerConfig c = Small(kind, 4);
    TpLayerPlan tp = BuildTpLayer(c);
    // Drop the reduction of one forward transfer: one rank's partial sum is lost.
    for (Op& op : tp.plan.ops) {
      if (op.kind == OpKind::kRecv && op.reduce == ReduceOp::kSum) {
        op.reduce = ReduceOp::kNone;
        break;
      }
    }
    const auto ran = RunLayer(c, std::move(tp));
    const TpLayerReference ref(c, kSeed);
    double worst = 0;
    for (const TpTensorBlock& b : ran->tp.blocks)
      if (b.tensor == "y") worst = std::max(worst, BlockError(ran->executor->backend().BufferData(b.buffer), b, ref.tensor("y")));
    EXPECT_GT(worst, 1e-3) << Describe(c);
  }
}

// Megatron's placement: column none forward and one backward, row one
// forward and none backward, MLP and attention one each way, a transformer
// layer two each way; with sequence parallelism each becomes a
// reduce-scatter and an all-gather. Counted in the Plan (distinct
// collective_seq, phases) and in the events (bytes each rank sent:
// 2(tp−1)/tp × T×H×4 per all-reduce, half that per RS or AG).
TEST(TensorParallel, AllReducesAreWhereMegatronPutsThem) {
  struct Expect {
    TpLayerKind kind;
    int forward, backward;
  };
  for (const bool sp : {false, true}) {
    for (const Expect e : {Expect{TpLayerKind::kColumnLinear, 0, 1}, Expect{TpLayerKind::kRowLinear, 1, 0},
                           Expect{TpLayerKind::kMlp, 1, 1}, Expect{TpLayerKind::kAttention, 1, 1},
                           Expect{TpLayerKind::kTransformer, 2, 2}}) {
      if (sp && (e.kind == TpLayerKind::kColumnLinear || e.kind == TpLayerKind::kRowLinear)) continue;
      for (const int tp : {2, 4, 8}) {
        const TpLayerConfig c = Small(e.kind, tp, sp);
        const auto ran = RunLayer(c);
        const std::string where = Describe(c);
        const std::int64_t th = c.tokens() * c.hidden;
        EXPECT_EQ(ran->tp.forward_allreduces, e.forward) << where;
        EXPECT_EQ(ran->tp.backward_allreduces, e.backward) << where;
        EXPECT_EQ(ran->tp.allreduce_count, th) << where;
        const int per_pair = sp ? 2 : 1;
        ASSERT_EQ(static_cast<int>(ran->tp.collectives.size()), per_pair * (e.forward + e.backward)) << where;
        // In the plan: one collective_seq per collective, ring steps each.
        std::map<int, std::set<Phase>> phases;
        for (const Op& op : ran->tp.plan.ops)
          if (op.kind == OpKind::kSend) phases[op.collective_seq].insert(op.tags.phase);
        EXPECT_EQ(phases.size(), ran->tp.collectives.size()) << where;
        for (const TpCollective& col : ran->tp.collectives) {
          EXPECT_EQ(col.count, th) << where;
          const std::set<Phase> want =
              col.kind == GroupCollectiveKind::kAllReduce ? std::set<Phase>{Phase::kReduceScatter, Phase::kAllGather}
              : col.kind == GroupCollectiveKind::kReduceScatter ? std::set<Phase>{Phase::kReduceScatter}
                                                                 : std::set<Phase>{Phase::kAllGather};
          EXPECT_EQ(phases[col.seq], want) << where << " collective " << col.seq;
        }
        // In the events: what each rank sent, and the counts MeasureTp finds.
        std::vector<Bytes> sent(static_cast<std::size_t>(tp), 0);
        for (const Event& ev : ran->sink.events)
          if (ev.kind == OpKind::kSend) sent[static_cast<std::size_t>(ev.rank)] += ev.bytes;
        const Bytes per_allreduce = 2 * (tp - 1) * (th / tp) * 4;
        for (int r = 0; r < tp; ++r)
          EXPECT_EQ(sent[static_cast<std::size_t>(r)], per_allreduce * (e.forward + e.backward)) << where;
        const TpMetrics m = MeasureTp(ran->tp, ran->tp.plan, ran->sink.events);
        EXPECT_EQ(m.forward_allreduces, e.forward) << where;
        EXPECT_EQ(m.backward_allreduces, e.backward) << where;
        for (const TpCollectiveTiming& t : m.collectives)
          EXPECT_EQ(t.sent_per_rank, (sp ? 1 : 2) * (tp - 1) * (th / tp) * 4) << where;
      }
    }
  }
}

// Each weight is split (every element on exactly one rank) or replicated
// (on every rank); the blocks' captions in the app rely on it.
TEST(TensorParallel, WeightBlocksTileEachWeight) {
  for (const TpLayerKind kind : kKinds) {
    const TpLayerConfig c = Small(kind, 4);
    const TpLayerPlan layer = BuildTpLayer(c);
    for (const TpTensorSpec& spec : TpLayerTensors(c)) {
      if (!spec.weight) continue;
      std::vector<int> hits(static_cast<std::size_t>(spec.rows * spec.cols), 0);
      for (const TpTensorBlock& b : layer.blocks) {
        if (b.tensor != spec.name || b.role != TpTensorRole::kWeight) continue;
        for (std::int64_t i = 0; i < b.block.rows; ++i)
          for (std::int64_t j = 0; j < b.block.cols; ++j)
            ++hits[static_cast<std::size_t>((b.block.row0 + i) * spec.cols + b.block.col0 + j)];
      }
      const int first = hits.front();
      EXPECT_TRUE(first == 1 || first == c.tp) << spec.name;
      EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [&](int h) { return h == first; })) << spec.name;
    }
  }
}

// The reference's analytic gradient against central differences of
// L = Σ y·dy, for a few input elements.
TEST(TensorParallel, ReferenceGradientsMatchFiniteDifferences) {
  for (const TpLayerKind kind : {TpLayerKind::kMlp, TpLayerKind::kAttention, TpLayerKind::kTransformer}) {
    TpLayerConfig c = Small(kind, 1);
    c.batch = 1;
    c.seq = 4;
    c.hidden = 8;
    c.heads = 2;
    const TpLayerReference ref(c, kSeed);
    const TpRefTensor& x = ref.tensor("x");
    const TpRefTensor& dy = ref.tensor("dy");
    const TpRefTensor& dx = ref.tensor("dx");
    std::vector<double> base(x.data.begin(), x.data.end());
    auto loss = [&](const std::vector<double>& in) {
      const std::vector<double> y = ref.Forward(in);
      double l = 0;
      for (std::size_t i = 0; i < y.size(); ++i) l += y[i] * dy.data[i];
      return l;
    };
    for (const std::size_t i : {std::size_t{0}, std::size_t{5}, base.size() - 1}) {
      const double eps = 1e-4;
      std::vector<double> plus = base, minus = base;
      plus[i] += eps;
      minus[i] -= eps;
      const double numeric = (loss(plus) - loss(minus)) / (2 * eps);
      EXPECT_NEAR(dx.data[i], numeric, 1e-4 * std::max(1.0, std::abs(numeric)))
          << TpLayerKindName(kind) << " element " << i;
    }
  }
}

TEST(TensorParallel, SplitsThatDoNotDivideAreRejectedWithTheField) {
  auto message = [](TpLayerConfig c) -> std::string {
    try {
      BuildTpLayer(c);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      return e.what();
    }
    return "";
  };
  auto starts = [](const std::string& text, const std::string& prefix) {
    return text.rfind(prefix, 0) == 0;
  };
  TpLayerConfig c = Small(TpLayerKind::kColumnLinear, 8);
  c.ffn = 0;
  c.hidden = 12;  // 12 output features over 8 ranks
  EXPECT_TRUE(starts(message(c), "hidden: 12 output features do not split evenly over tp 8")) << message(c);
  c.kind = TpLayerKind::kMlp;
  c.ffn = 100;
  EXPECT_TRUE(starts(message(c), "ffn: 100 inner (ffn) features")) << message(c);
  c = Small(TpLayerKind::kAttention, 4);
  c.hidden = 24;
  c.heads = 6;  // 6 heads of 4 over 4 ranks
  EXPECT_TRUE(starts(message(c), "heads: 6 heads do not split evenly over tp 4")) << message(c);
  c.heads = 5;  // 24 / 5
  EXPECT_TRUE(starts(message(c), "heads: 5 heads do not divide hidden 24")) << message(c);
  c.hidden = 16;
  c.heads = 0;  // no default for hidden 16
  EXPECT_TRUE(starts(message(c), "heads: hidden 16 is not a multiple of 128")) << message(c);
  c = Small(TpLayerKind::kTransformer, 4, true);
  c.batch = 1;
  c.seq = 6;  // 6 tokens over 4 ranks
  EXPECT_TRUE(starts(message(c), "sequence-parallel: 6 tokens")) << message(c);
  c = Small(TpLayerKind::kRowLinear, 2, true);
  EXPECT_TRUE(starts(message(c), "sequence-parallel: ")) << message(c);
  c = Small(TpLayerKind::kMlp, 0);
  EXPECT_TRUE(starts(message(c), "tp: ")) << message(c);
  c = Small(TpLayerKind::kMlp, 2);
  c.batch = 0;
  EXPECT_TRUE(starts(message(c), "batch: ")) << message(c);
  c = Small(TpLayerKind::kMlp, 2);
  c.batch = 65536;
  c.seq = 256;
  c.hidden = 256;  // 2^24 tokens × 256 = 2^32 elements in one activation
  EXPECT_TRUE(starts(message(c), "batch: 16777216 tokens × hidden 256")) << message(c);
  c = Small(TpLayerKind::kAttention, 1);
  c.batch = 1024;
  c.hidden = 1024;
  c.heads = 1024;  // a million per-head products: the plan would take gigabytes
  EXPECT_TRUE(starts(message(c), "heads: batch × heads = 1048576")) << message(c);
  EXPECT_THROW(ParseTpLayerKind("attention-ish"), Error);
  EXPECT_EQ(ParseTpLayerKind("transformer"), TpLayerKind::kTransformer);
}

}  // namespace
}  // namespace shardlab
