// Group collectives appended to a larger plan: results equal the host sum
// (exact: FillInputs values add exactly), only the slices change, the ring
// passes take 2(n-1) or n-1 steps and each member sends 2(n-1)/n of its
// slice; a collective ordered after another through done/after sees its
// result; bad groups are rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/group_collective.h"
#include "engine/core/error.h"
#include "engine/core/fill.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

constexpr std::uint64_t kSeed = 11;
constexpr int kRanks = 6;
constexpr std::int64_t kPad = 3;  // slices start kPad elements into "data"

// A plan of kRanks ranks, each with one random "data" buffer of
// kPad + count + kPad elements (stream 100 + rank).
struct Fixture {
  explicit Fixture(std::int64_t elements) : count(elements), builder("group test", kRanks) {
    for (int r = 0; r < kRanks; ++r) {
      Buffer b{"data", r, count + 2 * kPad, DType::kF32, BufferInit::kRandom, 100 + r, 1.0f};
      data.push_back(builder.AddBuffer(b));
    }
  }
  float Initial(int rank, std::int64_t i) const { return InputValue(kSeed, 100 + rank, i); }
  BufferSlice Slice(int rank) const { return BufferSlice{data[rank], kPad, count}; }
  GroupCollective Group(GroupCollectiveKind kind, std::vector<int> ranks) const {
    GroupCollective c;
    c.kind = kind;
    for (int r : ranks) {
      c.slices.push_back(Slice(r));
      c.after.emplace_back();
    }
    c.ranks = std::move(ranks);
    return c;
  }
  // Runs the plan; returns each rank's "data".
  std::vector<std::vector<float>> Run() {
    plan = builder.Finish();
    RunOptions options;
    options.seed = kSeed;
    Executor ex(CreateBackend("sim"), plan, MakeSharedBus(kRanks, 100, 500), options);
    ex.RunToEnd(sink);
    EXPECT_EQ(ex.state(), ExecutorState::kDone) << ex.error();
    std::vector<std::vector<float>> out;
    for (int r = 0; r < kRanks; ++r) {
      const auto d = ex.backend().BufferData(data[r]);
      out.emplace_back(d.begin(), d.end());
    }
    return out;
  }

  std::int64_t count;
  PlanBuilder builder;
  std::vector<BufferId> data;
  Plan plan;
  VectorSink sink;
};

// Outside the slice, and on ranks outside every group, nothing changes.
void ExpectUntouchedOutside(const Fixture& f, const std::vector<std::vector<float>>& got,
                            const std::vector<int>& members) {
  for (int r = 0; r < kRanks; ++r) {
    const bool member = std::find(members.begin(), members.end(), r) != members.end();
    for (std::int64_t i = 0; i < f.count + 2 * kPad; ++i) {
      const bool inside = i >= kPad && i < kPad + f.count;
      if (member && inside) continue;
      ASSERT_EQ(got[r][i], f.Initial(r, i)) << "rank " << r << " element " << i;
    }
  }
}

TEST(GroupCollective, AllReduceEqualsTheSumForAnyCountAndOrder) {
  const std::vector<int> members = {4, 1, 3, 0};  // not rank order
  for (const std::int64_t count : {40, 37, 3, 1}) {  // divisible, not, fewer than members
    Fixture f(count);
    const GroupCollectiveOps ops =
        AppendGroupCollective(f.builder, f.Group(GroupCollectiveKind::kAllReduce, members));
    EXPECT_EQ(ops.steps, 2 * 3);
    const auto got = f.Run();
    EXPECT_EQ(f.plan.num_steps, 6);
    for (int r : members)
      for (std::int64_t i = 0; i < count; ++i) {
        float sum = 0;
        for (int m : members) sum += f.Initial(m, kPad + i);
        ASSERT_EQ(got[r][kPad + i], sum) << "count " << count << " rank " << r << " element " << i;
      }
    ExpectUntouchedOutside(f, got, members);
  }
}

TEST(GroupCollective, ReduceScatterLeavesChunkIOnMemberI) {
  const std::vector<int> members = {5, 2, 0};
  Fixture f(30);
  const GroupCollectiveOps ops =
      AppendGroupCollective(f.builder, f.Group(GroupCollectiveKind::kReduceScatter, members));
  EXPECT_EQ(ops.steps, 2);
  const auto got = f.Run();
  for (int i = 0; i < 3; ++i)
    for (std::int64_t e = i * 10; e < (i + 1) * 10; ++e) {
      float sum = 0;
      for (int m : members) sum += f.Initial(m, kPad + e);
      ASSERT_EQ(got[members[i]][kPad + e], sum) << "member " << i << " element " << e;
    }
}

TEST(GroupCollective, AllGatherSpreadsMemberIsChunkI) {
  const std::vector<int> members = {1, 2, 3, 4, 5};
  Fixture f(23);  // chunks of 5, 5, 5, 4, 4
  const GroupCollectiveOps ops =
      AppendGroupCollective(f.builder, f.Group(GroupCollectiveKind::kAllGather, members));
  EXPECT_EQ(ops.steps, 4);
  const auto got = f.Run();
  for (int i = 0; i < 5; ++i) {
    const std::int64_t begin = ChunkBegin(23, 5, i), n = ChunkCount(23, 5, i);
    for (int r : members)
      for (std::int64_t e = begin; e < begin + n; ++e)
        ASSERT_EQ(got[r][kPad + e], f.Initial(members[i], kPad + e)) << "rank " << r << " element " << e;
  }
  ExpectUntouchedOutside(f, got, members);
}

// Group B = {2, 3} after group A = {0, 1, 2} on rank 2 only: rank 3 ends
// with A's sum plus its own data.
TEST(GroupCollective, DoneAndAfterOrderCollectivesOnOverlappingGroups) {
  Fixture f(24);
  const GroupCollectiveOps a =
      AppendGroupCollective(f.builder, f.Group(GroupCollectiveKind::kAllReduce, {0, 1, 2}));
  GroupCollective b = f.Group(GroupCollectiveKind::kAllReduce, {2, 3});
  b.after[0] = a.done[2];
  b.first_step = a.steps;
  AppendGroupCollective(f.builder, b);
  const auto got = f.Run();
  EXPECT_EQ(f.plan.num_steps, 4 + 2);
  for (std::int64_t e = 0; e < 24; ++e) {
    const float a_sum = f.Initial(0, kPad + e) + f.Initial(1, kPad + e) + f.Initial(2, kPad + e);
    ASSERT_EQ(got[0][kPad + e], a_sum) << e;
    ASSERT_EQ(got[3][kPad + e], a_sum + f.Initial(3, kPad + e)) << e;
    ASSERT_EQ(got[2][kPad + e], a_sum + f.Initial(3, kPad + e)) << e;
  }
}

// Slow compute ops on both sides: rank 2 doubles its slice before the
// all-reduce (after), rank 3 doubles the result after it (done). Without
// either dependency the sim runs the collective at time zero beside them.
TEST(GroupCollective, AfterAndDoneOrderItWithComputeOps) {
  Fixture f(16);
  auto doubling = [&](int rank, const std::vector<OpId>& deps) {
    Op op;
    op.rank = rank;
    op.flops = 1'000'000'000'000;  // about seconds of simulated time
    return f.builder.AddCompute(
        op, {ElementwiseCall(KernelKind::kAxpy, f.Slice(rank), {}, f.Slice(rank), 1, 16)}, deps);
  };
  GroupCollective c = f.Group(GroupCollectiveKind::kAllReduce, {2, 3});
  c.after[0] = {doubling(2, {})};
  const GroupCollectiveOps ops = AppendGroupCollective(f.builder, c);
  doubling(3, ops.done[1]);
  const auto got = f.Run();
  for (std::int64_t e = 0; e < 16; ++e) {
    const float sum = 2 * f.Initial(2, kPad + e) + f.Initial(3, kPad + e);
    ASSERT_EQ(got[2][kPad + e], sum) << e;
    ASSERT_EQ(got[3][kPad + e], 2 * sum) << e;
  }
}

// 4(n-1) ops per member (2(n-1) sends, 2(n-1) recvs), each member sends
// 2(n-1)/n of its slice, tags say the phase and chunk, and done[i] is on
// member i.
TEST(GroupCollective, OpsAndBytesPerMemberFollowTheRing) {
  for (const int n : {2, 3, 6}) {
    std::vector<int> members;
    for (int i = 0; i < n; ++i) members.push_back(kRanks - 1 - i);
    const std::int64_t count = 60;  // divisible by 2, 3 and 6
    Fixture f(count);
    GroupCollective c = f.Group(GroupCollectiveKind::kAllReduce, members);
    c.collective_seq = 7;
    c.tags.layer = 2;
    const GroupCollectiveOps ops = AppendGroupCollective(f.builder, c);
    f.Run();
    std::vector<int> op_count(kRanks, 0);
    std::vector<Bytes> sent(kRanks, 0);
    for (const Op& op : f.plan.ops) {
      ++op_count[op.rank];
      if (op.kind == OpKind::kSend) sent[op.rank] += op.bytes;
      EXPECT_EQ(op.collective_seq, 7);
      EXPECT_EQ(op.tags.layer, 2);
      EXPECT_TRUE(op.tags.phase == Phase::kReduceScatter || op.tags.phase == Phase::kAllGather);
      EXPECT_GE(op.tags.chunk, 0);
      EXPECT_LT(op.tags.chunk, n);
    }
    for (int i = 0; i < n; ++i) {
      const int r = members[i];
      EXPECT_EQ(op_count[r], 4 * (n - 1)) << "n " << n;
      EXPECT_EQ(sent[r], 2 * (n - 1) * (count / n) * 4) << "n " << n;
      for (OpId id : ops.done[i]) EXPECT_EQ(f.plan.ops[id].rank, r);
    }
    // The same bytes in the events.
    std::vector<Bytes> event_sent(kRanks, 0);
    for (const Event& ev : f.sink.events)
      if (ev.kind == OpKind::kSend) event_sent[ev.rank] += ev.bytes;
    EXPECT_EQ(event_sent, sent);
  }
}

TEST(GroupCollective, AGroupOfOneAddsNothing) {
  Fixture f(8);
  GroupCollective c = f.Group(GroupCollectiveKind::kAllReduce, {3});
  c.after[0] = {};
  const GroupCollectiveOps ops = AppendGroupCollective(f.builder, c);
  EXPECT_EQ(f.builder.op_count(), 0u);
  EXPECT_EQ(ops.steps, 0);
  ASSERT_EQ(ops.done.size(), 1u);
}

TEST(GroupCollective, BadGroupsAreRejected) {
  auto message = [](const Fixture& f, const GroupCollective& c) -> std::string {
    PlanBuilder copy = f.builder;
    try {
      AppendGroupCollective(copy, c);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      return e.what();
    }
    return "";
  };
  Fixture f(12);
  GroupCollective c = f.Group(GroupCollectiveKind::kAllReduce, {0, 1, 2});
  EXPECT_EQ(message(f, c), "");  // the helper's sanity: the good group passes
  c.ranks = {0, 1, 0};
  EXPECT_NE(message(f, c).find("in the group twice"), std::string::npos) << message(f, c);
  c = f.Group(GroupCollectiveKind::kAllReduce, {0, 1, 2});
  c.slices[1] = f.Slice(4);
  EXPECT_NE(message(f, c).find("on rank 4"), std::string::npos) << message(f, c);
  c = f.Group(GroupCollectiveKind::kAllReduce, {0, 1, 2});
  c.slices[2].count = 5;
  EXPECT_NE(message(f, c).find("differ in length"), std::string::npos) << message(f, c);
  c = f.Group(GroupCollectiveKind::kAllReduce, {0, 1, 2});
  c.slices[2].offset = 10;
  EXPECT_NE(message(f, c).find("outside"), std::string::npos) << message(f, c);
  c = f.Group(GroupCollectiveKind::kAllReduce, {0, 1, 2});
  c.after.pop_back();
  EXPECT_NE(message(f, c).find("one of each per member"), std::string::npos) << message(f, c);
  c = f.Group(GroupCollectiveKind::kAllReduce, {0, 1, 2});
  c.ranks[2] = 9;
  EXPECT_NE(message(f, c).find("outside the plan"), std::string::npos) << message(f, c);
  EXPECT_NE(message(f, GroupCollective{}).find("no ranks"), std::string::npos);
}

}  // namespace
}  // namespace shardlab
