// The "nccl" algorithm as a plan: one library-call op per rank with the
// collective's layout; the simulator refuses it with a message, the
// scenario check names the flag, and NCCL's equal-chunk rule is enforced.
#include <gtest/gtest.h>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/plan/validate.h"
#include "engine/run/collective_scenario.h"
#include "engine/run/executor.h"
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

TEST(NcclPlan, TheSimulatorRefusesIt) {
  CollectiveParams p;
  p.algo = CollectiveAlgo::kNccl;
  p.ranks = 2;
  p.count = 64;
  try {
    Executor ex(CreateBackend("sim"), BuildCollective(p), MakeTopologyPreset("dgx-a100"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run a library collective"), std::string::npos);
  }
  CollectiveScenario s;
  s.algo = CollectiveAlgo::kNccl;
  s.ranks = 2;
  s.size_bytes = 1024;
  try {
    CheckCollectiveScenario(s, MakeTopologyPreset("dgx-a100"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("algo: nccl runs on real GPUs (--backend cuda)", 0), 0u)
        << e.what();
  }
  EXPECT_EQ(ParseCollectiveAlgo("NCCL"), CollectiveAlgo::kNccl);
}

}  // namespace
}  // namespace shardlab
