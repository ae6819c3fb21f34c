// Tensor parallelism on the simulator: each split layer's forward output
// and every gradient equal the single-device layer, for tp 1, 2, 4, 8 and
// hidden sizes that do and do not divide by tp; the all-reduces are where
// Megatron puts them, counted in the Plan and in the events, with T×H
// elements each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "engine/algorithms/tensor_parallel.h"
#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

constexpr std::uint64_t kSeed = 3;
constexpr TpLayerKind kKinds[] = {TpLayerKind::kColumnLinear, TpLayerKind::kRowLinear,
                                  TpLayerKind::kMlp};

std::string Describe(const TpLayerConfig& c) {
  return std::string(TpLayerKindName(c.kind)) + " tp=" + std::to_string(c.tp) + " T=" +
         std::to_string(c.tokens) + " H=" + std::to_string(c.hidden) + " F=" +
         std::to_string(c.split_width());
}

// Largest |got − want| over the largest |want|: float32 sums in another order.
double RelativeError(std::span<const float> got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  double err = 0, scale = 1e-30;
  for (std::size_t i = 0; i < want.size() && i < got.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return err / scale;
}

// Columns [c0, c0 + w) of a rows × total tensor.
std::vector<float> Columns(const std::vector<float>& a, int rows, int total, int c0, int w) {
  std::vector<float> out;
  for (int r = 0; r < rows; ++r)
    for (int c = c0; c < c0 + w; ++c) out.push_back(a[static_cast<std::size_t>(r) * total + c]);
  return out;
}

std::vector<float> Range(const std::vector<float>& a, std::int64_t begin, std::int64_t count) {
  return std::vector<float>(a.begin() + begin, a.begin() + begin + count);
}

struct Ran {
  TpLayerPlan tp;
  std::unique_ptr<Executor> executor;
  VectorSink sink;
};

std::unique_ptr<Ran> RunLayer(const TpLayerConfig& c) {
  auto ran = std::make_unique<Ran>();
  ran->tp = BuildTpLayer(c);
  RunOptions options;
  options.seed = kSeed;
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), ran->tp.plan,
                                             MakeUniformRing(c.tp, 100, 500), options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_EQ(ran->executor->state(), ExecutorState::kDone) << ran->executor->error();
  return ran;
}

void ExpectEqualsReference(const TpLayerConfig& c) {
  const auto ran = RunLayer(c);
  const TpLayerReference ref(c, kSeed);
  const Backend& be = ran->executor->backend();
  const int t = c.tokens, h = c.hidden, f = c.split_width(), fs = f / c.tp;
  constexpr double kTol = 1e-5;
  for (int r = 0; r < c.tp; ++r) {
    const TpRankBuffers& b = ran->tp.ranks[static_cast<std::size_t>(r)];
    const std::string where = Describe(c) + " rank " + std::to_string(r);
    switch (c.kind) {
      case TpLayerKind::kColumnLinear:
        EXPECT_LT(RelativeError(be.BufferData(b.y), Columns(ref.y, t, f, r * fs, fs)), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.dx), ref.dx), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.dw1), Columns(ref.dw1, h, f, r * fs, fs)), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.db1), Range(ref.db1, r * fs, fs)), kTol) << where;
        break;
      case TpLayerKind::kRowLinear:
        EXPECT_LT(RelativeError(be.BufferData(b.y), ref.y), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.dx), Columns(ref.dx, t, f, r * fs, fs)), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.dw1), Range(ref.dw1, std::int64_t{r} * fs * h, std::int64_t{fs} * h)), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.db1), ref.db1), kTol) << where;
        break;
      case TpLayerKind::kMlp:
        EXPECT_LT(RelativeError(be.BufferData(b.y), ref.y), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.dx), ref.dx), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.dw1), Columns(ref.dw1, h, f, r * fs, fs)), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.db1), Range(ref.db1, r * fs, fs)), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.dw2), Range(ref.dw2, std::int64_t{r} * fs * h, std::int64_t{fs} * h)), kTol) << where;
        EXPECT_LT(RelativeError(be.BufferData(b.db2), ref.db2), kTol) << where;
        break;
    }
  }
}

TEST(TensorParallel, EveryLayerEqualsOneDeviceForEveryDegree) {
  for (const TpLayerKind kind : kKinds) {
    for (const int tp : {1, 2, 4, 8}) {
      TpLayerConfig c;
      c.kind = kind;
      c.tp = tp;
      c.tokens = 8;
      c.hidden = 16;
      c.ffn = kind == TpLayerKind::kMlp ? 0 : 32;
      ExpectEqualsReference(c);
    }
  }
}

// Hidden sizes tp does not divide are fine where Megatron does not split
// them: only the split width F must divide. The all-reduce's ring chunks
// are then uneven (12 elements over 8 ranks).
TEST(TensorParallel, HiddenSizesThatDoNotDivideStillMatch) {
  for (const TpLayerKind kind : kKinds) {
    for (const int tp : {3, 8}) {
      TpLayerConfig c;
      c.kind = kind;
      c.tp = tp;
      c.tokens = 2;
      c.hidden = 6;
      c.ffn = 3 * tp;  // the split width divides
      ExpectEqualsReference(c);
    }
  }
}

TEST(TensorParallel, ABrokenAllReduceIsCaught) {
  TpLayerConfig c;
  c.kind = TpLayerKind::kMlp;
  c.tp = 4;
  c.tokens = 4;
  c.hidden = 8;
  TpLayerPlan tp = BuildTpLayer(c);
  // Drop the reduction of one forward transfer: one rank's partial sum is lost.
  for (Op& op : tp.plan.ops) {
    if (op.kind == OpKind::kRecv && op.reduce == ReduceOp::kSum) {
      op.reduce = ReduceOp::kNone;
      break;
    }
  }
  RunOptions options;
  options.seed = kSeed;
  Executor ex(CreateBackend("sim"), tp.plan, MakeUniformRing(4, 100, 500), options);
  VectorSink sink;
  ex.RunToEnd(sink);
  ASSERT_EQ(ex.state(), ExecutorState::kDone) << ex.error();
  const TpLayerReference ref(c, kSeed);
  double worst = 0;
  for (const TpRankBuffers& b : tp.ranks)
    worst = std::max(worst, RelativeError(ex.backend().BufferData(b.y), ref.y));
  EXPECT_GT(worst, 1e-3);
}

// Megatron's placement: column no forward all-reduce and one backward, row
// one forward and none backward, the MLP one each way; each over T×H
// elements, counted in the Plan (distinct collective_seq per phase) and in
// the events (bytes each rank sent: 2(tp−1)/tp × T×H×4 per all-reduce).
TEST(TensorParallel, AllReducesAreWhereMegatronPutsThem) {
  struct Expect {
    TpLayerKind kind;
    int forward, backward;
  };
  for (const Expect e : {Expect{TpLayerKind::kColumnLinear, 0, 1}, Expect{TpLayerKind::kRowLinear, 1, 0},
                         Expect{TpLayerKind::kMlp, 1, 1}}) {
    for (const int tp : {2, 4, 8}) {
      TpLayerConfig c;
      c.kind = e.kind;
      c.tp = tp;
      c.tokens = 16;
      c.hidden = 32;  // T×H = 512 elements: divisible by every tp
      c.ffn = 64;
      const auto ran = RunLayer(c);
      const std::string where = Describe(c);
      EXPECT_EQ(ran->tp.forward_allreduces, e.forward) << where;
      EXPECT_EQ(ran->tp.backward_allreduces, e.backward) << where;
      EXPECT_EQ(ran->tp.allreduce_count, 16 * 32) << where;
      // In the plan: sends per collective, all of one size.
      std::set<int> seqs;
      for (const Op& op : ran->tp.plan.ops)
        if (op.kind == OpKind::kSend) seqs.insert(op.collective_seq);
      EXPECT_EQ(static_cast<int>(seqs.size()), e.forward + e.backward) << where;
      // In the events: what each rank sent.
      std::vector<Bytes> sent(static_cast<std::size_t>(tp), 0);
      for (const Event& ev : ran->sink.events)
        if (ev.kind == OpKind::kSend) sent[static_cast<std::size_t>(ev.rank)] += ev.bytes;
      const Bytes per_allreduce = 2 * (tp - 1) * (16 * 32 / tp) * 4;
      for (int r = 0; r < tp; ++r)
        EXPECT_EQ(sent[static_cast<std::size_t>(r)], per_allreduce * (e.forward + e.backward)) << where;
    }
  }
}

TEST(TensorParallel, SplitsThatDoNotDivideAreRejectedWithTheField) {
  auto message = [](TpLayerConfig c) -> std::string {
    try {
      BuildTpLayer(c);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  TpLayerConfig c;
  c.kind = TpLayerKind::kColumnLinear;
  c.hidden = 12;
  c.tp = 8;  // 12 output features over 8 ranks
  EXPECT_EQ(message(c).rfind("hidden: 12 output features do not split evenly over tp 8", 0), 0u)
      << message(c);
  c.kind = TpLayerKind::kMlp;
  c.ffn = 100;
  EXPECT_EQ(message(c).rfind("ffn: 100 inner (ffn) features", 0), 0u) << message(c);
  c.ffn = 0;
  c.tp = 0;
  EXPECT_EQ(message(c).rfind("tp: ", 0), 0u) << message(c);
  c.tp = 2;
  c.tokens = 0;
  EXPECT_EQ(message(c).rfind("tokens: ", 0), 0u) << message(c);
  EXPECT_THROW(ParseTpLayerKind("attention-ish"), Error);
}

}  // namespace
}  // namespace shardlab
