// NCCL's call order on --backend mpi --device gpu: a rank's collectives
// must be ordered by dependencies, or ranks could issue them in different
// orders and hang inside NCCL.
#include "engine/backends/mpi/nccl_call_order.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"

namespace shardlab {
namespace {

// One all-reduce call per rank and sequence number; `chained` makes call 1
// wait for call 0 on every rank (through a compute op between them).
Plan TwoCalls(int ranks, bool chained) {
  PlanBuilder b("two all-reduces", ranks);
  for (int r = 0; r < ranks; ++r) {
    const BufferId data = b.AddBuffer(r, "data", 16);
    Op first;
    first.kind = OpKind::kCollective;
    first.library = LibraryCollective::kAllReduce;
    first.reduce = ReduceOp::kSum;
    first.rank = r;
    first.collective_seq = 0;
    first.lane = Lane::kSend;
    first.src = first.dst = {data, 0, 16};
    const OpId a = b.AddOp(first);
    Op between;
    between.kind = OpKind::kCompute;
    between.rank = r;
    const OpId c = b.AddOp(between, chained ? std::vector<OpId>{a} : std::vector<OpId>{});
    Op second = first;
    second.collective_seq = 1;
    second.lane = Lane::kCopy;  // another lane: only the dependencies can order the two
    b.AddOp(second, std::vector<OpId>{c});
  }
  return b.Finish();
}

// The check on a plan, with the graph the backend builds for it.
void Check(const Plan& plan) { CheckNcclCallOrder(plan, BuildOpGraph(plan)); }

TEST(NcclCallOrder, AcceptsCollectivesChainedByDependencies) {
  EXPECT_NO_THROW(Check(TwoCalls(3, true)));
}

TEST(NcclCallOrder, RefusesTwoCollectivesOfARankThatCouldRunInEitherOrder) {
  try {
    Check(TwoCalls(3, false));
    FAIL() << "unordered collectives were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "rank 0: collective #1 (op 2, step 0) does not depend on collective #0 (op 0, step "
              "0); NCCL needs every rank to issue its calls in one order, so --algo nccl on "
              "--backend mpi needs each rank's collectives ordered by dependencies");
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
  }
}

TEST(NcclCallOrder, CollectivesOnOneLaneAreOrderedByTheLane) {
  // No dependency between the two calls, but a lane runs its ops in order.
  PlanBuilder b("two all-reduces on one lane", 2);
  for (int r = 0; r < 2; ++r) {
    const BufferId data = b.AddBuffer(r, "data", 4);
    for (int seq = 0; seq < 2; ++seq) {
      Op op;
      op.kind = OpKind::kCollective;
      op.library = LibraryCollective::kAllReduce;
      op.rank = r;
      op.lane = Lane::kSend;
      op.collective_seq = seq;
      op.src = op.dst = {data, 0, 4};
      b.AddOp(op);
    }
  }
  EXPECT_NO_THROW(Check(b.Finish()));
}

TEST(NcclCallOrder, OneCollectivePerRankIsAlwaysInOrder) {
  PlanBuilder b("one all-reduce", 2);
  for (int r = 0; r < 2; ++r) {
    Op op;
    op.kind = OpKind::kCollective;
    op.library = LibraryCollective::kAllReduce;
    op.rank = r;
    op.collective_seq = 0;
    const BufferId data = b.AddBuffer(r, "data", 4);
    op.src = op.dst = {data, 0, 4};
    b.AddOp(op);
  }
  EXPECT_NO_THROW(Check(b.Finish()));
}

}  // namespace
}  // namespace shardlab
