// Memory accounting in the simulator: persistent buffers count for the whole
// run; transient ones from the first op that touches them to the end of the
// last, so two gathered layers used one after the other peak at the larger,
// not at their sum; the same in timing-only runs.
#include <gtest/gtest.h>

#include "engine/plan/kernel.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

Buffer Make(int rank, const char* name, std::int64_t count, MemoryCategory category, bool transient,
            DType dtype = DType::kF32) {
  Buffer b;
  b.name = name;
  b.rank = rank;
  b.count = count;
  b.dtype = dtype;
  b.category = category;
  b.transient = transient;
  return b;
}

// Rank 0: params (fp16, 1000), master (fp32, 1000); layer 0 gathered (400)
// used by ops 0-1, layer 1 gathered (600) used by op 2, then op 3 on
// params only. Rank 1 holds only its params.
Plan TwoLayers() {
  PlanBuilder b("memory", 2);
  const BufferId params = b.AddBuffer(Make(0, "params", 1000, MemoryCategory::kParameters, false, DType::kF16));
  b.AddBuffer(Make(0, "master", 1000, MemoryCategory::kOptimizerStates, false));
  const BufferId g0 = b.AddBuffer(Make(0, "gathered.0", 400, MemoryCategory::kGatheredParameters, true));
  const BufferId g1 = b.AddBuffer(Make(0, "gathered.1", 600, MemoryCategory::kGatheredParameters, true));
  b.AddBuffer(Make(1, "params", 1000, MemoryCategory::kParameters, false, DType::kF16));
  auto axpy = [&](BufferId from, BufferId to, std::int64_t n, const std::vector<OpId>& deps) {
    Op op;
    op.rank = 0;
    op.step = static_cast<int>(b.op_count());
    return b.AddCompute(op, {ElementwiseCall(KernelKind::kAxpy, {from, 0, n}, {}, {to, 0, n}, 1, static_cast<int>(n))}, deps);
  };
  const OpId a = axpy(params, g0, 400, {});
  const OpId c = axpy(g0, params, 400, {a});
  const OpId d = axpy(params, g1, 600, {c});
  axpy(params, params, 10, {d});
  return b.Finish();
}

void ExpectAccounting(bool timing_only) {
  RunOptions options;
  options.timing_only = timing_only;
  Executor ex(CreateBackend("sim"), TwoLayers(), MakeSharedBus(2, 100, 500), options);
  VectorSink sink;
  ex.RunToEnd(sink);
  ASSERT_EQ(ex.state(), ExecutorState::kDone) << ex.error();
  const MemoryUsage* usage = ex.backend().memory();
  ASSERT_NE(usage, nullptr);
  ASSERT_EQ(usage->ranks.size(), 2u);
  const RankMemory& r0 = usage->ranks[0];
  auto at = [](const std::array<Bytes, kMemoryCategoryCount>& a, MemoryCategory c) {
    return a[static_cast<int>(c)];
  };
  EXPECT_EQ(at(r0.persistent, MemoryCategory::kParameters), 2000);       // fp16
  EXPECT_EQ(at(r0.persistent, MemoryCategory::kOptimizerStates), 4000);  // fp32
  EXPECT_EQ(at(r0.persistent, MemoryCategory::kGatheredParameters), 0);
  EXPECT_EQ(at(r0.peak, MemoryCategory::kGatheredParameters), 600 * 4);  // not 1000 * 4
  EXPECT_EQ(r0.peak_total, 6000 + 600 * 4);
  EXPECT_EQ(r0.current_total, 6000);  // both layers freed at the end
  EXPECT_EQ(usage->ranks[1].persistent_total(), 2000);
  EXPECT_EQ(usage->ranks[1].peak_total, 2000);
  // Reset frees the transient buffers and starts the peaks again.
  ex.Reset();
  EXPECT_EQ(ex.backend().memory()->ranks[0].peak_total, 6000);
}

TEST(MemoryTracker, TransientBuffersLiveFromFirstToLastUse) { ExpectAccounting(false); }
TEST(MemoryTracker, TimingOnlyRunsCountTheSame) { ExpectAccounting(true); }

}  // namespace
}  // namespace shardlab
