// The "nccl" algorithm as a plan: one library-call op per rank with the
// collective's layout; the simulator runs it with its NCCL model (and
// refuses a rank in one call twice), and NCCL's equal-chunk rule is enforced.
#include <gtest/gtest.h>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/plan/validate.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

TEST(NcclPlan, OneLibraryCallPerRank) {
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                              CollectiveKind::kAllGather, CollectiveKind::kBroadcast,
                              CollectiveKind::kReduce, CollectiveKind::kAllToAll}) {
    CollectiveParams p;
    p.kind = kind;
    p.algo = CollectiveAlgo::kNccl;
    p.ranks = 4;
    p.count = 1024;
    p.root = 2;
    p.collective_seq = 7;
    const Plan plan = BuildCollective(p);
    ValidatePlan(plan);
    ASSERT_EQ(plan.ops.size(), 4u) << CollectiveKindName(kind);
    EXPECT_EQ(plan.num_steps, ExpectedSteps(p));
    for (int r = 0; r < 4; ++r) {
      const Op& op = plan.ops[r];
      EXPECT_EQ(op.kind, OpKind::kCollective);
      EXPECT_NE(op.library, LibraryCollective::kNone);
      EXPECT_EQ(op.rank, r);
      EXPECT_EQ(op.collective_seq, 7);
      EXPECT_EQ(plan.buffers[op.src.buffer].rank, r);
      EXPECT_EQ(plan.buffers[op.dst.buffer].rank, r);
      EXPECT_EQ(op.peer, CollectiveHasRoot(kind) ? 2 : -1);
    }
  }
}

TEST(NcclPlan, AllGatherNeedsEqualChunks) {
  CollectiveParams p;
  p.kind = CollectiveKind::kAllGather;
  p.algo = CollectiveAlgo::kNccl;
  p.ranks = 3;
  p.count = 1024;
  EXPECT_THROW(BuildCollective(p), Error);
  p.count = 1023;
  EXPECT_NO_THROW(BuildCollective(p));
}

// The simulator used to refuse the plan; since issue 31 it times each call
// with its model of NCCL, and the scenario check accepts --algo nccl on sim.
TEST(NcclPlan, TheSimulatorRunsItWithItsNcclModel) {
  CollectiveParams p;
  p.algo = CollectiveAlgo::kNccl;
  p.ranks = 2;
  p.count = 64;
  Executor ex(CreateBackend("sim"), BuildCollective(p), MakeTopologyPreset("dgx-a100"));
  VectorSink sink;
  ex.RunToEnd(sink);
  ASSERT_EQ(sink.events.size(), 2u);
  for (const Event& e : sink.events) {
    EXPECT_EQ(e.kind, OpKind::kCollective);
    EXPECT_GT(e.end_ns, 0);
  }
  CollectiveScenario s;
  s.algo = CollectiveAlgo::kNccl;
  s.ranks = 2;
  s.size_bytes = 1024;
  EXPECT_NO_THROW(CheckCollectiveScenario(s, MakeTopologyPreset("dgx-a100")));
}

// A call needs one op per rank: a rank that joins the same call twice is
// refused by the simulator with the op named.
TEST(NcclPlan, TheSimulatorRefusesARankInOneCallTwice) {
  CollectiveParams p;
  p.algo = CollectiveAlgo::kNccl;
  p.ranks = 2;
  p.count = 64;
  Plan plan = BuildCollective(p);
  plan.ops[1].rank = 0;  // both ops on rank 0, same collective_seq
  plan.ops[1].src.buffer = plan.ops[1].dst.buffer = 0;
  try {
    Executor ex(CreateBackend("sim"), std::move(plan), MakeTopologyPreset("dgx-a100"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("joins library call"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ParseCollectiveAlgo("NCCL"), CollectiveAlgo::kNccl);
}

}  // namespace
}  // namespace shardlab
