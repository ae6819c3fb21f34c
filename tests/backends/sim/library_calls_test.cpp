// Library collectives (--algo nccl) on the simulator: every kind leaves the
// data the single-buffer reference expects, the call takes the NCCL
// model's time, and it starts only when the last rank arrives.
#include <gtest/gtest.h>

#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/verify.h"
#include "engine/backends/sim/nccl_model.h"
#include "engine/backends/sim/sim_backend.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

CollectiveParams NcclParams(CollectiveKind kind, int ranks, std::int64_t count) {
  CollectiveParams p;
  p.kind = kind;
  p.algo = CollectiveAlgo::kNccl;
  p.ranks = ranks;
  p.count = count;
  p.root = ranks - 1;
  return p;
}

TEST(LibraryCalls, EveryKindMatchesTheReferenceAndTakesTheModelsTime) {
  const Topology topology = MakeTopologyPreset("dgx-a100");
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                              CollectiveKind::kAllGather, CollectiveKind::kBroadcast,
                              CollectiveKind::kReduce, CollectiveKind::kAllToAll}) {
    const CollectiveParams params = NcclParams(kind, 4, 4096);
    RunOptions options;
    options.seed = 7;
    Executor executor(CreateSimBackend(), BuildCollective(params), topology, options);
    VectorSink sink;
    executor.RunToEnd(sink);
    const VerifyResult v = VerifyCollective(params, executor.plan(), options.seed,
                                            [&](BufferId id) { return executor.backend().BufferData(id); });
    EXPECT_TRUE(v.correct) << CollectiveKindName(kind) << ": " << v.wrong << " wrong";
    EXPECT_GT(v.checked, 0);
    // Every rank's op ends at the model's time (all arrive at 0).
    const std::vector<std::int32_t> gpus(topology.gpus.begin(), topology.gpus.begin() + 4);
    const LibraryCollective call = executor.plan().ops[0].library;
    const NcclPrediction p = PredictNccl(call, 4096.0 * 4, DescribeNcclMachine(topology, gpus));
    ASSERT_EQ(sink.events.size(), 4u);
    for (const Event& e : sink.events) {
      EXPECT_DOUBLE_EQ(e.start_ns, 0);
      EXPECT_DOUBLE_EQ(e.end_ns, p.chosen.time_ns) << CollectiveKindName(kind);
    }
  }
}

// Rank 0 computes for 100 us first; the call begins when it arrives, and
// rank 1's op waits inside the call from 0.
TEST(LibraryCalls, TheCallWaitsForItsLastRank) {
  const Topology topology = MakeTopologyPreset("dgx-a100");
  const CollectiveParams params = NcclParams(CollectiveKind::kAllReduce, 2, 1024);
  Plan plan = BuildCollective(params);
  // Put a compute op of 1.95e9 flops (100 us on an A100's 19.5 TFLOP/s
  // fp32) before rank 0's call, on the same lane.
  Plan delayed;
  {
    PlanBuilder b(plan.name, 2);
    for (const Buffer& buf : plan.buffers) b.AddBuffer(buf);
    Op compute;
    compute.kind = OpKind::kCompute;
    compute.lane = plan.ops[0].lane;
    compute.rank = 0;
    compute.flops = 1.95e9;
    b.AddOp(compute);
    for (const Op& op : plan.ops) b.AddOp(op);
    delayed = b.Finish();
  }
  Executor executor(CreateSimBackend(), std::move(delayed), topology, RunOptions{});
  VectorSink sink;
  executor.RunToEnd(sink);
  const std::vector<std::int32_t> gpus = {topology.gpus[0], topology.gpus[1]};
  const double t = PredictNccl(LibraryCollective::kAllReduce, 4096, DescribeNcclMachine(topology, gpus))
                       .chosen.time_ns;
  ASSERT_EQ(sink.events.size(), 3u);
  for (const Event& e : sink.events) {
    if (e.kind == OpKind::kCompute) {
      EXPECT_NEAR(e.end_ns, 100e3, 1);
      continue;
    }
    EXPECT_NEAR(e.end_ns, 100e3 + t, 1);
    EXPECT_NEAR(e.start_ns, e.rank == 0 ? 100e3 : 0, 1);  // rank 1 waits inside the call
  }
}

}  // namespace
}  // namespace shardlab
