// ValidatePlan must reject every malformed plan with a message naming the op.
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/plan/dump.h"
#include "engine/plan/host_data.h"
#include "engine/plan/validate.h"

namespace shardlab {
namespace {

// Two ranks, each with a 4-element buffer; one transfer 0 -> 1 of 2 elements.
struct TwoRankPlan {
  PlanBuilder builder{"test", 2};
  BufferId b0 = builder.AddBuffer(0, "data", 4, DType::kF32, BufferInit::kRandom);
  BufferId b1 = builder.AddBuffer(1, "data", 4, DType::kF32, BufferInit::kRandom);
};

std::string ValidationError(const Plan& plan) {
  try {
    ValidatePlan(plan);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "";
}

TEST(ValidatePlan, AcceptsAWellFormedTransfer) {
  TwoRankPlan p;
  p.builder.AddTransfer(0, 1, {p.b0, 0, 2}, {p.b1, 2, 2}, ReduceOp::kSum, 0, {}, {}, {});
  EXPECT_EQ(ValidationError(p.builder.Finish()), "");
}

TEST(ValidatePlan, RejectsADependencyCycle) {
  TwoRankPlan p;
  Op a;
  a.rank = 0;
  a.lane = Lane::kCompute;
  Op b = a;
  b.lane = Lane::kCopy;  // a different lane, so only the explicit deps order them
  p.builder.AddOp(a, {1});
  p.builder.AddOp(b, {0});
  const std::string message = ValidationError(p.builder.Finish());
  EXPECT_NE(message.find("cycle"), std::string::npos) << message;
  EXPECT_NE(message.find("op 0"), std::string::npos) << message;
}

TEST(ValidatePlan, RejectsSendsAndRecvsInOpposingOrder) {
  // rank 0 sends X then Y on its send lane; rank 1 receives Y then X on its
  // recv lane: a rendezvous deadlock that no single dependency shows.
  PlanBuilder b("deadlock", 2);
  const BufferId b0 = b.AddBuffer(0, "data", 4);
  const BufferId b1 = b.AddBuffer(1, "data", 4);
  Op send;
  send.kind = OpKind::kSend;
  send.lane = Lane::kSend;
  send.rank = 0;
  send.peer = 1;
  send.bytes = 8;
  Op recv = send;
  recv.kind = OpKind::kRecv;
  recv.lane = Lane::kRecv;
  recv.rank = 1;
  recv.peer = 0;
  // ids: 0 send X, 1 send Y, 2 recv Y, 3 recv X
  send.src = {b0, 0, 2};
  send.match = 3;
  b.AddOp(send);
  send.src = {b0, 2, 2};
  send.match = 2;
  b.AddOp(send);
  recv.dst = {b1, 2, 2};
  recv.match = 1;
  b.AddOp(recv);
  recv.dst = {b1, 0, 2};
  recv.match = 0;
  b.AddOp(recv);
  const Plan plan = b.Finish();
  const std::string message = ValidationError(plan);
  EXPECT_NE(message.find("deadlock"), std::string::npos) << message;
  HostBuffers data;
  AllocateHostBuffers(plan, 1, data);
  EXPECT_THROW(ExecutePlanInOrder(plan, data), Error);
}

TEST(ValidatePlan, RejectsAnUnmatchedSend) {
  TwoRankPlan p;
  const auto t = p.builder.AddTransfer(0, 1, {p.b0, 0, 2}, {p.b1, 0, 2}, ReduceOp::kNone, 0, {},
                                       {}, {});
  Plan plan = p.builder.Finish();
  plan.ops[t.send].match = kNoOp;
  EXPECT_NE(ValidationError(plan).find("no matching recv"), std::string::npos);
}

TEST(ValidatePlan, RejectsASliceOutsideItsBuffer) {
  TwoRankPlan p;
  p.builder.AddTransfer(0, 1, {p.b0, 3, 2}, {p.b1, 0, 2}, ReduceOp::kNone, 0, {}, {}, {});
  const std::string message = ValidationError(p.builder.Finish());
  EXPECT_NE(message.find("outside buffer"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0, send->1"), std::string::npos) << message;
}

TEST(ValidatePlan, RejectsASliceOnAnotherRank) {
  TwoRankPlan p;
  p.builder.AddTransfer(0, 1, {p.b1, 0, 2}, {p.b1, 0, 2}, ReduceOp::kNone, 0, {}, {}, {});
  EXPECT_NE(ValidationError(p.builder.Finish()).find("lives on rank 1"), std::string::npos);
}

TEST(ValidatePlan, RejectsRanksAndDepsOutOfRange) {
  {
    TwoRankPlan p;
    Op op;
    op.rank = 5;
    p.builder.AddOp(op);
    EXPECT_NE(ValidationError(p.builder.Finish()).find("rank out of range"), std::string::npos);
  }
  {
    TwoRankPlan p;
    p.builder.AddOp(Op{}, {42});
    EXPECT_NE(ValidationError(p.builder.Finish()).find("op 42, which does not exist"),
              std::string::npos);
  }
  {
    Plan empty;
    EXPECT_NE(ValidationError(empty).find("at least one rank"), std::string::npos);
  }
}

TEST(ValidatePlan, RejectsPartnersThatDisagree) {
  TwoRankPlan p;
  const auto t = p.builder.AddTransfer(0, 1, {p.b0, 0, 2}, {p.b1, 0, 2}, ReduceOp::kNone, 0, {},
                                       {}, {});
  Plan plan = p.builder.Finish();
  plan.ops[t.recv].bytes = 4;
  EXPECT_NE(ValidationError(plan).find("partner"), std::string::npos);
}

TEST(HostData, AppliesSumAndOverwriteThroughTheReferenceExecutor) {
  TwoRankPlan p;
  // 1 += 0 on elements [0,2), then 0 = 1 on elements [0,2).
  const auto t1 = p.builder.AddTransfer(0, 1, {p.b0, 0, 2}, {p.b1, 0, 2}, ReduceOp::kSum, 0, {},
                                        {}, {});
  p.builder.AddTransfer(1, 0, {p.b1, 0, 2}, {p.b0, 0, 2}, ReduceOp::kNone, 1, {}, {t1.recv},
                        {t1.send});
  const Plan plan = p.builder.Finish();
  ValidatePlan(plan);
  HostBuffers before, after;
  AllocateHostBuffers(plan, 7, before);
  after = before;
  ExecutePlanInOrder(plan, after);
  for (int i = 0; i < 2; ++i) {
    const float sum = before.data[0][i] + before.data[1][i];
    EXPECT_EQ(after.data[1][i], sum);
    EXPECT_EQ(after.data[0][i], sum);
  }
  for (int i = 2; i < 4; ++i) {  // untouched
    EXPECT_EQ(after.data[0][i], before.data[0][i]);
    EXPECT_EQ(after.data[1][i], before.data[1][i]);
  }
  const std::string dump = DumpPlan(plan);
  EXPECT_NE(dump.find("step 1:"), std::string::npos) << dump;
  EXPECT_NE(dump.find("dst+= data@r1[0:2]"), std::string::npos) << dump;
}

}  // namespace
}  // namespace shardlab
