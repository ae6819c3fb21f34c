// The simulator on hand-made plans and topologies: timing of one transfer,
// sharing, compute time, data, and stepping.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "engine/backends/sim/sim_backend.h"
#include "engine/core/error.h"
#include "engine/plan/host_data.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

DeviceSpec TestDevice() {
  DeviceSpec d;
  d.model = "test";
  d.fp32_tflops = 10;   // 10^4 flop/ns
  d.fp16_tflops = 100;
  d.memory_gbps = 1000;
  d.memory_bytes = Bytes{1} << 30;
  return d;
}

// GPUs joined point to point by links of `gbps`, in a chain 0-1-2-...
Topology Chain(int gpus, Gbps gbps, TimeNs latency_ns) {
  Topology t;
  t.name = "chain";
  for (int i = 0; i < gpus; ++i) {
    Node n;
    n.name = "gpu" + std::to_string(i);
    n.device = TestDevice();
    t.nodes.push_back(n);
    t.gpus.push_back(i);
    if (i > 0) t.links.push_back(Link{i - 1, i, LinkKind::kNvLink3, gbps, latency_ns, 1});
  }
  return t;
}

std::vector<Event> RunAll(const Plan& plan, const Topology& topo, RunOptions options = {}) {
  Executor ex(CreateSimBackend(), plan, topo, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  EXPECT_EQ(ex.state(), ExecutorState::kDone);
  return sink.events;
}

TEST(SimBackend, OneTransferTakesLatencyPlusBytesOverBandwidth) {
  PlanBuilder b("one", 2);
  const BufferId b0 = b.AddBuffer(0, "data", 250, DType::kF32, BufferInit::kRandom);
  const BufferId b1 = b.AddBuffer(1, "data", 250);
  b.AddTransfer(0, 1, {b0, 0, 250}, {b1, 0, 250}, ReduceOp::kNone, 0, {}, {}, {});
  const auto events = RunAll(b.Finish(), Chain(2, 10.0, 100.0));
  ASSERT_EQ(events.size(), 2u);
  for (const Event& e : events) {
    EXPECT_DOUBLE_EQ(e.start_ns, 0.0);
    EXPECT_DOUBLE_EQ(e.end_ns, 100.0 + 1000.0 / 10.0);
    EXPECT_EQ(e.bytes, 1000);
    EXPECT_EQ(e.clock, ClockKind::kSimulated);
  }
}

TEST(SimBackend, TwoTransfersOnOneLinkDirectionShareIt) {
  // gpu0,gpu1 hang off switch A, gpu2,gpu3 off switch B; A-B is the only
  // slow link. 0->2 and 1->3 both cross A->B, so each gets half of it.
  PlanBuilder b("share", 4);
  const BufferId b0 = b.AddBuffer(0, "data", 250, DType::kF32, BufferInit::kRandom);
  const BufferId b1 = b.AddBuffer(1, "data", 250, DType::kF32, BufferInit::kRandom);
  const BufferId b2 = b.AddBuffer(2, "data", 250);
  const BufferId b3 = b.AddBuffer(3, "data", 250);
  b.AddTransfer(0, 2, {b0, 0, 250}, {b2, 0, 250}, ReduceOp::kNone, 0, {}, {}, {});
  b.AddTransfer(1, 3, {b1, 0, 250}, {b3, 0, 250}, ReduceOp::kNone, 0, {}, {}, {});
  Topology t = Chain(4, 10.0, 0.0);
  t.links.clear();
  for (const char* name : {"switchA", "switchB"}) {
    Node sw;
    sw.name = name;
    sw.kind = NodeKind::kPcieSwitch;
    t.nodes.push_back(sw);
  }
  const int a = 4, bsw = 5;
  t.links.push_back(Link{0, a, LinkKind::kPcie4, 1000.0, 0.0, 1});
  t.links.push_back(Link{1, a, LinkKind::kPcie4, 1000.0, 0.0, 1});
  t.links.push_back(Link{2, bsw, LinkKind::kPcie4, 1000.0, 0.0, 1});
  t.links.push_back(Link{3, bsw, LinkKind::kPcie4, 1000.0, 0.0, 1});
  t.links.push_back(Link{a, bsw, LinkKind::kPcie4, 10.0, 0.0, 1});
  const auto events = RunAll(b.Finish(), t);
  ASSERT_EQ(events.size(), 4u);
  // 1000 bytes at 5 GB/s = 200 ns; alone on A->B it would be 100 ns.
  for (const Event& e : events) EXPECT_NEAR(e.end_ns, 200.0, 1e-6) << OpKindName(e.kind);
}

TEST(SimBackend, RoutesThroughIntermediateNodesAddLatencyPerHop) {
  PlanBuilder b("hops", 3);
  const BufferId b0 = b.AddBuffer(0, "data", 25, DType::kF32, BufferInit::kRandom);
  b.AddBuffer(1, "data", 25);
  const BufferId b2 = b.AddBuffer(2, "data", 25);
  b.AddTransfer(0, 2, {b0, 0, 25}, {b2, 0, 25}, ReduceOp::kNone, 0, {}, {}, {});
  // A chain routes 0->2 through gpu1 only if GPUs may forward; they may
  // not, so add a switch joined to every GPU.
  Topology t = Chain(3, 10.0, 50.0);
  t.links.clear();
  Node sw;
  sw.name = "switch";
  sw.kind = NodeKind::kNvSwitch;
  t.nodes.push_back(sw);
  for (int i = 0; i < 3; ++i) t.links.push_back(Link{i, 3, LinkKind::kNvLink3, 10.0, 50.0, 1});
  const auto events = RunAll(b.Finish(), t);
  for (const Event& e : events) EXPECT_DOUBLE_EQ(e.end_ns, 2 * 50.0 + 100.0 / 10.0);
}

TEST(SimBackend, ComputeTimeIsTheSlowerOfFlopsAndMemory) {
  PlanBuilder b("compute", 1);
  Op op;
  op.flops = 1e6;   // 10^6 / 10^4 flop/ns = 100 ns
  op.bytes = 1000;  // 1000 / 1000 B/ns = 1 ns
  b.AddOp(op);
  op.flops = 0;
  op.bytes = 50000;  // 50 ns, after the first on the same lane
  b.AddOp(op);
  const auto events = RunAll(b.Finish(), Chain(1, 10.0, 0.0));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_DOUBLE_EQ(events[0].end_ns, 100.0);
  EXPECT_DOUBLE_EQ(events[1].start_ns, 100.0);
  EXPECT_DOUBLE_EQ(events[1].end_ns, 150.0);
}

TEST(SimBackend, DataMatchesTheReferenceExecutorAndTimingOnlyHasNone) {
  PlanBuilder b("data", 2);
  const BufferId b0 = b.AddBuffer(0, "data", 8, DType::kF32, BufferInit::kRandom);
  const BufferId b1 = b.AddBuffer(1, "data", 8, DType::kF32, BufferInit::kRandom);
  const auto t = b.AddTransfer(0, 1, {b0, 0, 4}, {b1, 0, 4}, ReduceOp::kSum, 0, {}, {}, {});
  b.AddTransfer(1, 0, {b1, 0, 4}, {b0, 0, 4}, ReduceOp::kNone, 1, {}, {t.recv}, {t.send});
  const Plan plan = b.Finish();
  const Topology topo = Chain(2, 10.0, 10.0);

  HostBuffers reference;
  AllocateHostBuffers(plan, 3, reference);
  ExecutePlanInOrder(plan, reference);

  RunOptions options;
  options.seed = 3;
  Executor ex(CreateSimBackend(), plan, topo, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  for (BufferId id : {b0, b1}) {
    const auto got = ex.backend().BufferData(id);
    ASSERT_EQ(got.size(), reference.data[id].size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], reference.data[id][i]);
  }
  options.timing_only = true;
  Executor timing(CreateSimBackend(), plan, topo, options);
  VectorSink timing_sink;
  timing.RunToEnd(timing_sink);
  EXPECT_TRUE(timing.backend().BufferData(b0).empty());
  ASSERT_EQ(timing_sink.events.size(), sink.events.size());
  for (std::size_t i = 0; i < sink.events.size(); ++i)
    EXPECT_DOUBLE_EQ(timing_sink.events[i].end_ns, sink.events[i].end_ns);
}

TEST(SimBackend, RejectsMoreRanksThanGpus) {
  PlanBuilder b("big", 4);
  for (int r = 0; r < 4; ++r) b.AddBuffer(r, "data", 1);
  Op op;
  op.rank = 3;
  b.AddOp(op);
  try {
    Executor ex(CreateSimBackend(), b.Finish(), Chain(2, 1.0, 0.0));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4 ranks but topology 'chain' has 2 GPUs"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace shardlab

namespace shardlab {
namespace {

// All 16 GPUs of 2x-dgx-a100-ib send across the boxes at once, each to a
// GPU on another rail (i -> 8 + (i+1) % 8 and back the same way). With
// every GPU on its own NIC nothing is shared: each transfer takes its
// route's latency plus bytes over the NIC's 25 GB/s. (When GPUs 2s and
// 2s+1 both took NIC 2s, each got half of it.)
TEST(SimBackend, EveryGpuOfABoxSendsAcrossBoxesAtItsOwnNicsBandwidth) {
  const Topology t = MakeTopologyPreset("2x-dgx-a100-ib");
  constexpr std::int64_t kCount = 1 << 16;  // f32: 256 KiB per transfer
  PlanBuilder b("cross", 16);
  std::vector<BufferId> out, in;
  for (int r = 0; r < 16; ++r) {
    out.push_back(b.AddBuffer(r, "out", kCount, DType::kF32, BufferInit::kRandom));
    in.push_back(b.AddBuffer(r, "in", kCount));
  }
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < 8; ++i) {
    pairs.push_back({i, 8 + (i + 1) % 8});
    pairs.push_back({8 + i, (i + 1) % 8});
  }
  for (const auto& [src, dst] : pairs) {
    b.AddTransfer(src, dst, {out[static_cast<std::size_t>(src)], 0, kCount},
                  {in[static_cast<std::size_t>(dst)], 0, kCount}, ReduceOp::kNone, 0, {}, {}, {});
  }
  const auto events = RunAll(b.Finish(), t);
  ASSERT_EQ(events.size(), 2 * pairs.size());  // one event per end of each transfer
  RouteTable routes(t);
  const double bytes = 4.0 * kCount;
  for (const Event& e : events) {
    const bool send = e.kind == OpKind::kSend;
    const Route& route = routes.Between(send ? e.rank : e.peer, send ? e.peer : e.rank);
    EXPECT_EQ(route.bottleneck_gbps, 25);
    EXPECT_NEAR(e.end_ns, route.latency_ns + bytes / 25.0, 1e-3)
        << OpKindName(e.kind) << " rank " << e.rank << " peer " << e.peer;
  }
}

}  // namespace
}  // namespace shardlab
