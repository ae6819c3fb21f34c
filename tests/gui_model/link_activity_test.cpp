// LinkActivity: a simulated ring all-reduce, replayed at a time inside a
// step, loads exactly the ring's link directions and names the chunks the
// plan moves.
#include "app/gui/model/link_activity.h"

#include <gtest/gtest.h>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/pipeline.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab::gui {
namespace {

Plan RingAllReduce(int ranks, std::int64_t count) {
  CollectiveParams params;
  params.kind = CollectiveKind::kAllReduce;
  params.algo = CollectiveAlgo::kRing;
  params.ranks = ranks;
  params.count = count;
  return BuildCollective(params);
}

TimelineStore Simulate(const Plan& plan, const Topology& topology) {
  Executor run(CreateBackend("sim"), plan, topology);
  VectorSink sink;
  run.RunToEnd(sink);
  TimelineStore store;
  store.Add(sink.events);
  return store;
}

// A time in the middle of step `step`, when every rank is moving its chunk.
TimeNs MidStep(const TimelineStore& store, int step) {
  return (store.StepEndNs(step - 1) + store.StepEndNs(step)) / 2;
}

// The link joining GPU ranks a and b, and whether a -> b is its forward way.
std::pair<int, bool> LinkBetween(const Topology& topology, int a, int b) {
  const int na = topology.gpus[static_cast<std::size_t>(a)];
  const int nb = topology.gpus[static_cast<std::size_t>(b)];
  for (std::size_t i = 0; i < topology.links.size(); ++i) {
    const Link& link = topology.links[i];
    if (link.a == na && link.b == nb) return {static_cast<int>(i), true};
    if (link.a == nb && link.b == na) return {static_cast<int>(i), false};
  }
  return {-1, true};
}

// The chunk the plan's Recv of step `step` on rank `to` writes.
int PlannedChunk(const Plan& plan, int step, int to) {
  for (const Op& op : plan.ops)
    if (op.kind == OpKind::kRecv && op.step == step && op.rank == to) return op.tags.chunk;
  return -2;
}

TEST(LinkActivity, RingStepLoadsEachLinkOneWayAtItsRate) {
  const int n = 4;
  const Topology ring = MakeUniformRing(n, 100, 0);
  const Plan plan = RingAllReduce(n, 4096);
  const TimelineStore store = Simulate(plan, ring);
  LinkActivity activity(ring, plan);
  activity.Update(store, MidStep(store, 1));

  for (int i = 0; i < n; ++i) {
    const auto [link, forward] = LinkBetween(ring, i, (i + 1) % n);
    ASSERT_GE(link, 0);
    // One transfer per direction, alone on its link: it runs at 100 GB/s.
    EXPECT_NEAR(activity.LoadGbps(link, forward), 100.0, 1e-6) << i << "->" << (i + 1) % n;
    EXPECT_NEAR(activity.Utilization(link, forward), 1.0, 1e-8);
    EXPECT_EQ(activity.LoadGbps(link, !forward), 0.0) << (i + 1) % n << "->" << i;
  }

  ASSERT_EQ(activity.in_flight().size(), static_cast<std::size_t>(n));
  std::vector<bool> seen(n, false);
  for (const InFlight& t : activity.in_flight()) {
    EXPECT_EQ(t.to_rank, (t.from_rank + 1) % n);
    seen[static_cast<std::size_t>(t.to_rank)] = true;
    EXPECT_GT(t.progress, 0.0);
    EXPECT_LT(t.progress, 1.0);
    EXPECT_EQ(t.label, ChunkLetter(PlannedChunk(plan, 1, t.to_rank)));
    EXPECT_EQ(t.phase, Phase::kReduceScatter);
    ASSERT_GE(t.route, 0);
    const Route& route = activity.route(t.route);
    EXPECT_EQ(route.src, ring.gpus[static_cast<std::size_t>(t.from_rank)]);
    EXPECT_EQ(route.dst, ring.gpus[static_cast<std::size_t>(t.to_rank)]);
    EXPECT_EQ(route.hops.size(), 1u);
  }
  for (const bool s : seen) EXPECT_TRUE(s);
}

TEST(LinkActivity, NothingIsInFlightBeforeTheStartOrAfterTheEnd) {
  const Topology ring = MakeUniformRing(4, 100, 0);
  const Plan plan = RingAllReduce(4, 4096);
  const TimelineStore store = Simulate(plan, ring);
  LinkActivity activity(ring, plan);
  activity.Update(store, MidStep(store, 2));
  EXPECT_FALSE(activity.in_flight().empty());
  for (const TimeNs t : {store.end_ns(), store.end_ns() + 1e6, -1.0}) {
    activity.Update(store, t);
    EXPECT_TRUE(activity.in_flight().empty()) << t;
    for (std::size_t link = 0; link < ring.links.size(); ++link) {
      EXPECT_EQ(activity.LoadGbps(static_cast<int>(link), true), 0.0);
      EXPECT_EQ(activity.LoadGbps(static_cast<int>(link), false), 0.0);
    }
  }
}

TEST(LinkActivity, AllGatherStepsAreLabelledWithTheirChunks) {
  const Topology ring = MakeUniformRing(4, 100, 0);
  const Plan plan = RingAllReduce(4, 4096);
  const TimelineStore store = Simulate(plan, ring);
  LinkActivity activity(ring, plan);
  activity.Update(store, MidStep(store, 4));  // steps 3..5 gather
  ASSERT_EQ(activity.in_flight().size(), 4u);
  for (const InFlight& t : activity.in_flight()) {
    EXPECT_EQ(t.phase, Phase::kAllGather);
    EXPECT_EQ(t.label, ChunkLetter(PlannedChunk(plan, 4, t.to_rank)));
  }
}

TEST(LinkActivity, NvSwitchTransfersRouteThroughTheSwitch) {
  const Topology dgx = MakeTopologyPreset("dgx-a100");
  const Plan plan = RingAllReduce(8, 8 * 1024);
  const TimelineStore store = Simulate(plan, dgx);
  LinkActivity activity(dgx, plan);
  activity.Update(store, MidStep(store, 1));
  ASSERT_EQ(activity.in_flight().size(), 8u);
  const int nvswitch = dgx.FindNode("nvswitch");
  for (const InFlight& t : activity.in_flight()) {
    ASSERT_GE(t.route, 0);
    const Route& route = activity.route(t.route);
    EXPECT_EQ(dgx.nodes[static_cast<std::size_t>(route.src)].kind, NodeKind::kGpu);
    EXPECT_EQ(dgx.nodes[static_cast<std::size_t>(route.dst)].kind, NodeKind::kGpu);
    ASSERT_EQ(route.via_nodes.size(), 1u);
    EXPECT_EQ(route.via_nodes[0], nvswitch);
    EXPECT_EQ(route.hops.size(), 2u);
  }
  // Every GPU sends once and receives once: each GPU-switch link carries
  // one transfer up and one down, at the same rate.
  for (std::size_t i = 0; i < dgx.links.size(); ++i) {
    const Link& link = dgx.links[i];
    if (link.b != nvswitch) continue;
    EXPECT_GT(activity.LoadGbps(static_cast<int>(i), true), 0.0);
    EXPECT_NEAR(activity.LoadGbps(static_cast<int>(i), true),
                activity.LoadGbps(static_cast<int>(i), false), 1e-6);
  }
}

TEST(LinkActivity, RanksMappedOntoOtherGpusUseThoseGpusRoutes) {
  const Topology ring = MakeUniformRing(4, 100, 0);
  const Plan plan = RingAllReduce(2, 4096);
  const TimelineStore store = Simulate(plan, MakeUniformRing(2, 100, 0));
  LinkActivity activity(ring, plan, {2, 3});  // ranks 0, 1 on GPUs 2, 3
  activity.Update(store, MidStep(store, 1));
  ASSERT_FALSE(activity.in_flight().empty());
  for (const InFlight& t : activity.in_flight()) {
    const Route& route = activity.route(t.route);
    EXPECT_EQ(route.src, ring.gpus[static_cast<std::size_t>(t.from_rank + 2)]);
    EXPECT_EQ(route.dst, ring.gpus[static_cast<std::size_t>(t.to_rank + 2)]);
  }
}

TEST(LinkActivity, ChunkLettersCountLikeSpreadsheetColumns) {
  EXPECT_EQ(ChunkLetter(0), "A");
  EXPECT_EQ(ChunkLetter(2), "C");
  EXPECT_EQ(ChunkLetter(25), "Z");
  EXPECT_EQ(ChunkLetter(26), "AA");
  EXPECT_EQ(ChunkLetter(27), "AB");
  EXPECT_EQ(ChunkLetter(701), "ZZ");
  EXPECT_EQ(ChunkLetter(702), "AAA");
  EXPECT_EQ(ChunkLetter(-1), "");
}

// A pipeline's transfers are named for what they carry: F<mb> moves an
// activation from stage s to s+1, B<mb> a gradient from s+1 back to s.
TEST(LinkActivity, PipelineTransfersAreActivationsForwardAndGradientsBack) {
  PipelineParams params;
  params.shape = {4, 4, 1};
  params.model.layers = 4;
  params.model.width = 8;
  params.model.batch = 8;
  const PipelinePlan pipeline = BuildPipeline(params);
  const Topology topology = MakeUniformRing(4, 100, 500);
  const TimelineStore store = Simulate(pipeline.plan, topology);
  LinkActivity activity(topology, pipeline.plan);
  int forward = 0, backward = 0;
  for (const TimelineRow& row : store.rows()) {
    for (const Event& e : row.events) {
      if (e.kind != OpKind::kRecv) continue;
      activity.Update(store, (e.start_ns + e.end_ns) / 2);
      bool found = false;
      for (const InFlight& t : activity.in_flight()) {
        if (t.from_rank != e.peer || t.to_rank != e.rank) continue;
        const OpTags& tags = pipeline.plan.ops[static_cast<std::size_t>(e.op)].tags;
        if (t.microbatch != tags.microbatch) continue;
        found = true;
        const bool goes_forward = e.rank == e.peer + 1;
        EXPECT_EQ(t.label, (goes_forward ? "F" : "B") + std::to_string(tags.microbatch));
        (goes_forward ? forward : backward) += 1;
      }
      EXPECT_TRUE(found) << "op " << e.op;
    }
  }
  EXPECT_EQ(forward, 3 * 4);   // p-1 boundaries, m micro-batches
  EXPECT_EQ(backward, 3 * 4);
}

}  // namespace
}  // namespace shardlab::gui
