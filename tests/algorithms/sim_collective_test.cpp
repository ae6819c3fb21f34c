// The collectives on the simulator backend: results read back from the
// backend verify, stepping shows the algorithm's intermediate states, and
// the times show the lesson (tree for latency, ring for bandwidth).
#include <gtest/gtest.h>

#include "collective_test_util.h"
#include "engine/run/executor.h"
#include "engine/run/metrics.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

using testing::Describe;
using testing::MakeParams;

VerifyResult VerifyOnBackend(const CollectiveParams& params, const Executor& ex,
                             std::uint64_t seed) {
  return VerifyCollective(params, ex.plan(), seed,
                          [&ex](BufferId id) { return ex.backend().BufferData(id); });
}

TEST(SimCollectives, EveryAlgorithmVerifiesOnTheSimulator) {
  const std::pair<CollectiveKind, CollectiveAlgo> algorithms[] = {
      {CollectiveKind::kAllReduce, CollectiveAlgo::kRing},
      {CollectiveKind::kAllReduce, CollectiveAlgo::kTree},
      {CollectiveKind::kReduceScatter, CollectiveAlgo::kRing},
      {CollectiveKind::kAllGather, CollectiveAlgo::kRing},
      {CollectiveKind::kBroadcast, CollectiveAlgo::kRing},
      {CollectiveKind::kReduce, CollectiveAlgo::kRing},
      {CollectiveKind::kAllToAll, CollectiveAlgo::kDirect},
  };
  for (const auto& [kind, algo] : algorithms) {
    for (const int n : {1, 2, 5, 8}) {
      CollectiveParams params = MakeParams(kind, algo, n, 1003);
      params.root = n - 1;
      params.tree_chunks = 3;
      RunOptions options;
      options.seed = 99;
      Executor ex(CreateBackend("sim"), BuildCollective(params), MakeSharedBus(n, 100, 500),
                  options);
      VectorSink sink;
      ex.RunToEnd(sink);
      ASSERT_EQ(ex.state(), ExecutorState::kDone) << Describe(params) << ": " << ex.error();
      EXPECT_EQ(ex.steps_done(), ExpectedSteps(params)) << Describe(params);
      EXPECT_EQ(sink.events.size(), ex.plan().ops.size()) << Describe(params);
      const VerifyResult result = VerifyOnBackend(params, ex, options.seed);
      EXPECT_TRUE(result.correct) << Describe(params) << " wrong=" << result.wrong;
    }
  }
}

TEST(SimCollectives, AfterTheReduceScatterHalfEachRankOwnsItsSummedChunk) {
  const int n = 6;
  const CollectiveParams params = MakeParams(CollectiveKind::kAllReduce, CollectiveAlgo::kRing, n, 6000);
  RunOptions options;
  options.seed = 5;
  Executor ex(CreateBackend("sim"), BuildCollective(params), MakeUniformRing(n, 50, 1000), options);
  VectorSink sink;
  for (int step = 0; step < n - 1; ++step) ASSERT_TRUE(ex.StepOnce(sink));
  // The all-reduce's first n-1 steps are a reduce-scatter: check it as one.
  CollectiveParams half = params;
  half.kind = CollectiveKind::kReduceScatter;
  EXPECT_TRUE(VerifyOnBackend(half, ex, options.seed).correct);
  EXPECT_FALSE(VerifyOnBackend(params, ex, options.seed).correct);  // not yet all-reduced
  ex.RunToEnd(sink);
  EXPECT_TRUE(VerifyOnBackend(params, ex, options.seed).correct);
}

TimeNs AllReduceTimeNs(CollectiveAlgo algo, std::int64_t count, const Topology& topology,
                       int ranks) {
  const CollectiveParams params = MakeParams(CollectiveKind::kAllReduce, algo, ranks, count);
  RunOptions options;
  options.timing_only = true;
  Executor ex(CreateBackend("sim"), BuildCollective(params), topology, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  return RunSpanNs(sink.events);
}

TEST(SimCollectives, TreeWinsSmallMessagesAndRingWinsLargeOnes) {
  const Topology topology = MakeTopologyPreset("dgx-a100");
  const std::int64_t small = 256;              // 1 KiB: latency-bound
  const std::int64_t large = 64 * 1024 * 1024;  // 256 MiB: bandwidth-bound
  const TimeNs tree_small = AllReduceTimeNs(CollectiveAlgo::kTree, small, topology, 8);
  const TimeNs ring_small = AllReduceTimeNs(CollectiveAlgo::kRing, small, topology, 8);
  const TimeNs tree_large = AllReduceTimeNs(CollectiveAlgo::kTree, large, topology, 8);
  const TimeNs ring_large = AllReduceTimeNs(CollectiveAlgo::kRing, large, topology, 8);
  EXPECT_LT(tree_small, ring_small) << "tree " << tree_small << " ns, ring " << ring_small << " ns";
  EXPECT_LT(ring_large, tree_large) << "ring " << ring_large << " ns, tree " << tree_large << " ns";
}

}  // namespace
}  // namespace shardlab
