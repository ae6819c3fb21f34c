// Data parallel and ZeRO stages 1-3 on the simulator: after k Adam steps
// every stage's parameters equal plain data parallelism (which equals the
// single-device reference), for N in {1, 2, 4, 8} and a parameter count no
// N > 1 divides; the memory each rank really holds per category is the
// stage's formula; each rank sends about 2Ψ elements per step (3Ψ for
// stage 3); bad input names its field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/algorithms/zero.h"
#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/metrics.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

constexpr std::uint64_t kSeed = 5;

ZeroParams Small(int stage, int ranks) {
  ZeroParams p;
  p.model.layers = 3;
  p.model.width = 6;   // Ψ = 3 · (36 + 6) = 126: not a multiple of 4 or 8
  p.model.batch = 8;
  p.model.optimizer = OptimizerKind::kAdam;
  p.model.learning_rate = 0.01f;
  p.stage = stage;
  p.ranks = ranks;
  p.steps = 3;
  p.bucket_bytes = 100;  // a layer is 84 bytes of fp16 gradient: buckets of two layers
  return p;
}

struct Ran {
  ZeroPlan zero;
  std::unique_ptr<Executor> executor;
  VectorSink sink;
};

std::unique_ptr<Ran> RunZero(const ZeroParams& p, bool timing_only = false) {
  auto ran = std::make_unique<Ran>();
  ran->zero = BuildZero(p);
  RunOptions options;
  options.seed = kSeed;
  options.timing_only = timing_only;
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), ran->zero.plan,
                                             MakeSharedBus(p.ranks, 100, 500), options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_EQ(ran->executor->state(), ExecutorState::kDone) << ran->executor->error();
  return ran;
}

// The flat parameters as rank `rank` holds them (-1: assembled from every
// rank's pieces; each element must be covered exactly once).
std::vector<float> Assemble(const Ran& ran, const std::vector<std::vector<ZeroPiece>>& pieces, int rank) {
  std::vector<float> flat(static_cast<std::size_t>(ran.zero.parameter_count), NAN);
  std::vector<int> hits(flat.size(), 0);
  for (int r = 0; r < static_cast<int>(pieces.size()); ++r) {
    if (rank >= 0 && r != rank) continue;
    for (const ZeroPiece& piece : pieces[r]) {
      const auto data = ran.executor->backend().BufferData(piece.slice.buffer);
      for (std::int64_t i = 0; i < piece.slice.count; ++i) {
        flat[static_cast<std::size_t>(piece.begin + i)] = data[static_cast<std::size_t>(piece.slice.offset + i)];
        ++hits[static_cast<std::size_t>(piece.begin + i)];
      }
    }
  }
  EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
  return flat;
}

double MaxRelativeError(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, scale = 1e-3;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(static_cast<double>(got[i]) - want[i]);
    err = std::isnan(d) ? INFINITY : std::max(err, d);
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return err / scale;
}

std::vector<float> ReferenceAfter(const ZeroParams& p) {
  MlpConfig m = p.model;
  m.optimizer = OptimizerKind::kAdam;
  MlpReference ref(m, kSeed);
  for (int k = 0; k < p.steps; ++k) ref.TrainStep();
  std::vector<float> flat;
  for (int l = 0; l < m.layers; ++l) {
    flat.insert(flat.end(), ref.weight(l).begin(), ref.weight(l).end());
    flat.insert(flat.end(), ref.bias(l).begin(), ref.bias(l).end());
  }
  return flat;
}

TEST(Zero, EveryStageEqualsDataParallelAndTheReferenceAfterKSteps) {
  const std::vector<float> reference = ReferenceAfter(Small(0, 1));
  for (int stage = 0; stage <= 3; ++stage)
    for (const int n : {1, 2, 4, 8}) {
      const auto ran = RunZero(Small(stage, n));
      const std::string where = "stage " + std::to_string(stage) + ", " + std::to_string(n) + " ranks";
      // The fp32 master parameters: every rank's full copy (stage 0), or
      // the ranks' shards put together.
      if (stage == 0) {
        for (int r = 0; r < n; ++r)
          EXPECT_LT(MaxRelativeError(Assemble(*ran, ran->zero.master, r), reference), 1e-4) << where << " rank " << r;
      } else {
        EXPECT_LT(MaxRelativeError(Assemble(*ran, ran->zero.master, -1), reference), 1e-4) << where;
      }
      // The fp16 working copy: the same values on every rank that keeps it all.
      if (stage < 3)
        for (int r = 0; r < n; ++r)
          EXPECT_LT(MaxRelativeError(Assemble(*ran, ran->zero.working, r), reference), 1e-4) << where << " rank " << r;
      else
        EXPECT_LT(MaxRelativeError(Assemble(*ran, ran->zero.working, -1), reference), 1e-4) << where;
      // The global loss of the last step is the ranks' partial losses summed.
      double loss = 0;
      for (const BufferId id : ran->zero.loss) loss += ran->executor->backend().BufferData(id)[2];
      EXPECT_GT(loss, 0) << where;
    }
}

TEST(Zero, ABrokenReductionIsCaught) {
  const ZeroParams p = Small(2, 4);
  ZeroPlan zero = BuildZero(p);
  for (Op& op : zero.plan.ops)
    if (op.kind == OpKind::kRecv && op.reduce == ReduceOp::kSum) {
      op.reduce = ReduceOp::kNone;  // one rank's gradient chunk is lost
      break;
    }
  RunOptions options;
  options.seed = kSeed;
  auto ran = std::make_unique<Ran>();
  ran->zero = zero;
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), zero.plan, MakeSharedBus(4, 100, 500), options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_GT(MaxRelativeError(Assemble(*ran, ran->zero.master, -1), ReferenceAfter(p)), 1e-3);
}

// Bytes each rank holds per category, from the simulator's allocations:
// exactly the stage's formula with K = 12 (fp32 master, m, v) on the
// rank's own share S_r of the units (Ψ/N when N divides every unit).
TEST(Zero, MemoryPerCategoryIsTheStageFormula) {
  for (int stage = 0; stage <= 3; ++stage)
    for (const int n : {1, 4, 8}) {
      const ZeroParams p = Small(stage, n);
      const auto ran = RunZero(p, /*timing_only=*/true);
      const MemoryUsage* usage = ran->executor->backend().memory();
      ASSERT_NE(usage, nullptr);
      const std::int64_t psi = ran->zero.parameter_count;
      for (int r = 0; r < n; ++r) {
        const std::int64_t own = ran->zero.shard_count[r];
        const RankMemory& mem = usage->ranks[r];
        auto at = [&](MemoryCategory c) { return mem.persistent[static_cast<int>(c)]; };
        const std::string where = "stage " + std::to_string(stage) + " N " + std::to_string(n) + " rank " + std::to_string(r);
        EXPECT_EQ(at(MemoryCategory::kParameters), 2 * (stage == 3 ? own : psi)) << where;
        EXPECT_EQ(at(MemoryCategory::kGradients), 2 * (stage >= 2 ? own : psi)) << where;
        EXPECT_EQ(at(MemoryCategory::kOptimizerStates), 12 * (stage >= 1 ? own : psi)) << where;
        EXPECT_LE(std::abs(own - psi / n), static_cast<std::int64_t>(ran->zero.units.size())) << where;
        const Bytes gathered = mem.peak[static_cast<int>(MemoryCategory::kGatheredParameters)];
        if (stage == 3) {  // one rank still copies each layer out of its shard
          EXPECT_GT(gathered, 0) << where;
          EXPECT_LE(gathered, 2 * 2 * (36 + 6)) << where;  // at most two layers gathered at once
        } else {
          EXPECT_EQ(gathered, 0) << where;
        }
        // Loading stages one layer's fp32 initial weights at a time.
        EXPECT_LE(mem.peak[static_cast<int>(MemoryCategory::kOther)],
                  at(MemoryCategory::kOther) + 4 * (36 + 6)) << where;
        // Stage 2 frees each bucket's full gradient after its reduce-scatter.
        if (stage == 2 && n > 1) {
          EXPECT_LT(mem.peak[static_cast<int>(MemoryCategory::kGradients)], 2 * psi) << where;
        }
      }
    }
}

// Elements each rank sends per step: 2(N-1)/N Ψ for stages 0-2 (all-reduce,
// or reduce-scatter + all-gather), 3(N-1)/N Ψ for stage 3 (two gathers and
// a reduce-scatter), counted from the events.
TEST(Zero, CommunicationVolumeIs2PsiOr3Psi) {
  for (int stage = 0; stage <= 3; ++stage)
    for (const int n : {2, 4, 8}) {
      ZeroParams p = Small(stage, n);
      p.steps = 1;
      const auto ran = RunZero(p, /*timing_only=*/true);
      std::vector<Bytes> sent(static_cast<std::size_t>(n), 0);
      for (const Event& e : ran->sink.events)
        if (e.kind == OpKind::kSend) sent[static_cast<std::size_t>(e.rank)] += e.bytes;
      const double psi = static_cast<double>(ran->zero.parameter_count);
      const double want = (stage == 3 ? 3.0 : 2.0) * (n - 1) / n * psi;
      for (int r = 0; r < n; ++r)
        EXPECT_NEAR(sent[static_cast<std::size_t>(r)] / 2.0 / want, 1.0, 0.05)
            << "stage " << stage << " N " << n << " rank " << r;
    }
}

// Overlap changes when a bucket's all-reduce starts, never the result; on a
// slow bus it shortens the step.
TEST(Zero, OverlapHidesCommunicationWithoutChangingTheResult) {
  ZeroParams p = Small(0, 4);
  p.model.layers = 6;
  p.model.width = 32;
  p.model.batch = 64;
  p.steps = 1;
  p.bucket_bytes = 2 * (32 * 32 + 32);  // one layer per bucket
  ZeroParams serial = p;
  serial.overlap = false;
  const auto a = RunZero(p), b = RunZero(serial);
  EXPECT_EQ(Assemble(*a, a->zero.master, 0), Assemble(*b, b->zero.master, 0));
  EXPECT_LT(RunSpanNs(a->sink.events), RunSpanNs(b->sink.events));
}

TEST(Zero, BucketsAreWholeLayersFromTheTop) {
  ZeroParams p = Small(1, 2);
  p.model.layers = 5;
  const std::vector<ZeroUnit> units = ZeroUnits(p);  // two 84-byte layers reach 100 bytes
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[0].last_layer, 4);
  EXPECT_EQ(units[0].first_layer, 3);
  EXPECT_EQ(units[2].first_layer, 0);
  EXPECT_EQ(units[2].last_layer, 0);
  std::int64_t covered = 0;
  for (const ZeroUnit& u : units) covered += u.size();
  EXPECT_EQ(covered, MlpParameterCount(p.model));
  p.stage = 3;
  EXPECT_EQ(ZeroUnits(p).size(), 5u);  // one per layer
}

TEST(Zero, BadInputNamesTheField) {
  auto message = [](const ZeroParams& p) -> std::string {
    try {
      BuildZero(p);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      return e.what();
    }
    return "";
  };
  ZeroParams p = Small(4, 2);
  EXPECT_EQ(message(p).rfind("stage: 4 is not a ZeRO stage", 0), 0u) << message(p);
  p = Small(-1, 2);
  EXPECT_EQ(message(p).rfind("stage: ", 0), 0u) << message(p);
  p = Small(1, 2);
  p.bucket_bytes = 0;
  EXPECT_EQ(message(p).rfind("bucket: ", 0), 0u) << message(p);
  p = Small(1, 3);  // batch 8 over 3 ranks
  EXPECT_EQ(message(p).rfind("batch: 8 rows do not split into 3", 0), 0u) << message(p);
  p = Small(1, 0);
  EXPECT_EQ(message(p).rfind("ranks: ", 0), 0u) << message(p);
}

}  // namespace
}  // namespace shardlab
