// The critical path: hand-built events with a known answer, and simulated
// runs whose path must account for the whole run and cross the slow link.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/run/critical_path.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

Event At(OpId op, const Plan& plan, TimeNs start, TimeNs end) {
  const Op& o = plan.ops[static_cast<std::size_t>(op)];
  Event e;
  e.op = op;
  e.rank = o.rank;
  e.peer = o.peer;
  e.lane = o.lane;
  e.kind = o.kind;
  e.start_ns = start;
  e.end_ns = end;
  e.bytes = o.bytes;
  return e;
}

Op ComputeOn(int rank) {
  Op op;
  op.kind = OpKind::kCompute;
  op.lane = Lane::kCompute;
  op.rank = rank;
  return op;
}

TimeNs Parts(const CriticalPath& p) {
  return p.compute_ns + p.communication_ns + p.link_wait_ns + p.idle_ns;
}

// rank 0: compute A, then a transfer to rank 1; rank 1: compute X, and
// compute Y after the transfer (X and Y share rank 1's compute lane).
struct HandPlan {
  Plan plan;
  OpId a = kNoOp, x = kNoOp, y = kNoOp;
  PlanBuilder::Transfer t{};
};

HandPlan MakeHandPlan() {
  PlanBuilder b("hand", 2);
  b.AddBuffer(0, "a", 4);
  b.AddBuffer(1, "b", 4);
  HandPlan h;
  h.a = b.AddOp(ComputeOn(0));
  h.t = b.AddTransfer(0, 1, {0, 0, 4}, {1, 0, 4}, ReduceOp::kNone, 0, {}, {h.a}, {});
  h.x = b.AddOp(ComputeOn(1));
  h.y = b.AddOp(ComputeOn(1), {h.t.recv});
  h.plan = b.Finish();
  return h;
}

// rank 0: A [0,100] ─send→ rank 1 [100,400]; rank 1: X [0,450] then Y (needs
// the transfer) [450,550]. Y waited for X (its lane), not the transfer.
TEST(CriticalPath, FollowsTheLaneWhenItEndsLaterThanTheDependency) {
  const HandPlan h = MakeHandPlan();
  const Plan& plan = h.plan;
  const OpId a = h.a, x = h.x, y = h.y;
  const PlanBuilder::Transfer t = h.t;
  const std::vector<Event> events = {At(a, plan, 0, 100), At(t.send, plan, 100, 400),
                                     At(t.recv, plan, 100, 400), At(x, plan, 0, 450),
                                     At(y, plan, 450, 550)};
  const CriticalPath p = FindCriticalPath(plan, events);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].op, x);
  EXPECT_EQ(p.steps[1].op, y);
  EXPECT_FALSE(p.steps[1].after_dependency);
  EXPECT_DOUBLE_EQ(p.end_ns, 550);
  EXPECT_DOUBLE_EQ(p.compute_ns, 550);
  EXPECT_DOUBLE_EQ(p.idle_ns, 0);
  EXPECT_EQ(p.bounding_rank, 1);
  EXPECT_EQ(p.slowest_hop.src, -1);
}

// The same plan with X short: Y waits for the transfer, which waits for A.
// A gap of 50 ns between the transfer's end and Y's start is idle.
TEST(CriticalPath, FollowsDependenciesThroughATransferAndCountsGapsAsIdle) {
  const HandPlan h = MakeHandPlan();
  const Plan& plan = h.plan;
  const OpId a = h.a, x = h.x, y = h.y;
  const PlanBuilder::Transfer t = h.t;
  const std::vector<Event> events = {At(a, plan, 0, 100), At(t.send, plan, 100, 400),
                                     At(t.recv, plan, 100, 400), At(x, plan, 0, 50),
                                     At(y, plan, 450, 550)};
  const CriticalPath p = FindCriticalPath(plan, events);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].op, a);
  EXPECT_EQ(p.steps[1].op, t.recv);
  EXPECT_EQ(p.steps[1].peer, 0);
  EXPECT_EQ(p.steps[2].op, y);
  EXPECT_TRUE(p.steps[2].after_dependency);
  EXPECT_DOUBLE_EQ(p.compute_ns, 200);
  EXPECT_DOUBLE_EQ(p.communication_ns, 300);
  EXPECT_DOUBLE_EQ(p.idle_ns, 50);
  EXPECT_DOUBLE_EQ(Parts(p), p.end_ns);
  EXPECT_EQ(p.slowest_hop.src, 0);
  EXPECT_EQ(p.slowest_hop.dst, 1);
}

// Two dependencies that end together: the lower op id is on the path, on
// every call (the answer does not depend on the order of the events).
TEST(CriticalPath, TiesGoToTheLowerOpIdWhateverTheEventOrder) {
  PlanBuilder b("tie", 3);
  for (int r = 0; r < 3; ++r) b.AddBuffer(r, "x", 1);
  const OpId p0 = b.AddOp(ComputeOn(0));
  const OpId p1 = b.AddOp(ComputeOn(1));
  const OpId last = b.AddOp(ComputeOn(2), {p1, p0});
  const Plan plan = b.Finish();
  std::vector<Event> events = {At(p1, plan, 0, 100), At(p0, plan, 0, 100), At(last, plan, 100, 150)};
  for (int round = 0; round < 2; ++round) {
    const CriticalPath p = FindCriticalPath(plan, events);
    ASSERT_EQ(p.steps.size(), 2u);
    EXPECT_EQ(p.steps[0].op, p0);
    std::swap(events[0], events[1]);
  }
}

TEST(CriticalPath, AnEventOfAnOpThePlanLacksIsRefused) {
  PlanBuilder b("one", 1);
  b.AddBuffer(0, "x", 1);
  b.AddOp(ComputeOn(0));
  const Plan plan = b.Finish();
  Event e;
  e.op = 7;
  EXPECT_THROW(FindCriticalPath(plan, {e}), Error);
  EXPECT_TRUE(FindCriticalPath(plan, {}).steps.empty());
}

std::vector<Event> Simulate(const Plan& plan, const Topology& topology) {
  Executor run(CreateBackend("sim"), plan, topology);
  VectorSink sink;
  run.RunToEnd(sink);
  return sink.events;
}

// A ring all-reduce: every one of its 2(n-1) steps waits for the one
// before, so the path holds at least one transfer per step, ends at the
// run's end, and its parts add up to that end.
TEST(CriticalPath, ARingAllReduceOnTheSimulatorIsAccountedForWhole) {
  CollectiveParams c;
  c.ranks = 8;
  c.count = 1 << 20;
  const Plan plan = BuildCollective(c);
  const Topology topology = MakeTopologyPreset("dgx-a100");
  const std::vector<Event> events = Simulate(plan, topology);
  TimeNs end = 0;
  for (const Event& e : events) end = std::max(end, e.end_ns);
  const CriticalPath p = FindCriticalPath(plan, events, &topology);
  EXPECT_DOUBLE_EQ(p.end_ns, end);
  EXPECT_NEAR(Parts(p), p.end_ns, 1.0 * static_cast<double>(p.steps.size()));
  int transfers = 0;
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    transfers += p.steps[i].kind == OpKind::kRecv;
    if (i > 0) {
      EXPECT_GE(p.steps[i].start_ns + 1, p.steps[i - 1].end_ns) << "step " << i;
    }
  }
  EXPECT_GE(transfers, 2 * (c.ranks - 1));
  EXPECT_GT(p.communication_ns, 0.5 * p.end_ns);  // a ring of 4 MiB is bandwidth-bound
}

// A ring over a uniform ring of links with one link 10x slower: the path
// runs through that hop, and the slowest hop names it.
TEST(CriticalPath, ARingThroughOneSlowLinkIsBoundByThatHop) {
  Topology topology = MakeUniformRing(4, 100, 1000);
  // The link from GPU 2 to GPU 3 (ring order 0 1 2 3).
  bool slowed = false;
  for (Link& link : topology.links) {
    const bool hop23 = (link.a == topology.gpus[2] && link.b == topology.gpus[3]) ||
                       (link.a == topology.gpus[3] && link.b == topology.gpus[2]);
    if (hop23) {
      link.gbps = 10;
      slowed = true;
    }
  }
  ASSERT_TRUE(slowed);
  CollectiveParams c;
  c.ranks = 4;
  c.count = 1 << 18;
  c.ring_order = {0, 1, 2, 3};
  const Plan plan = BuildCollective(c);
  const CriticalPath p = FindCriticalPath(plan, Simulate(plan, topology), &topology);
  EXPECT_EQ(p.slowest_hop.src, 2);
  EXPECT_EQ(p.slowest_hop.dst, 3);
  // Link sharing is not what makes it slow: one flow per link direction.
  EXPECT_LT(p.link_wait_ns, 0.01 * p.end_ns);
}

}  // namespace
}  // namespace shardlab
