// Link emulation equals its model, checked without a GPU: the windows the
// CUDA backend holds transfers for are the simulator's times on the same
// plan and topology, and a device that runs every op for exactly its
// window, with the plan issued by PlanEnqueuer (streams in order,
// dependencies as events), ends when the simulator ends. Transfers that
// share a modelled link get longer windows than one alone, as the
// simulator shares the link's bandwidth.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "engine/algorithms/collective.h"
#include "engine/backends/device/emulated_windows.h"
#include "engine/backends/device/plan_enqueuer.h"
#include "engine/backends/sim/sim_backend.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

using device::EventId;
using device::StreamId;

// A GPU with one in-order queue per stream where each op takes its window.
class TimedDevice final : public device::DeviceApi {
 public:
  explicit TimedDevice(std::vector<TimeNs> windows, const Plan& plan)
      : windows_(std::move(windows)), plan_(plan) {}
  void StartClock() override {}
  void RecordEvent(EventId event, StreamId stream, bool) override { time_[event] = ready_[stream]; }
  void WaitEvent(StreamId stream, EventId event) override {
    ready_[stream] = std::max(ready_[stream], time_.at(event));
  }
  void LaunchWork(OpId unit, StreamId stream) override {
    const Op& op = plan_.ops[static_cast<std::size_t>(unit)];
    const OpId timed = op.kind == OpKind::kSend ? op.match : unit;
    ready_[stream] += windows_[static_cast<std::size_t>(timed)];
  }
  void LaunchCollective(std::span<const OpId>) override { FAIL() << "no collectives here"; }
  void BeginCapture(std::span<const StreamId>) override { FAIL() << "no graph here"; }
  void EndCapture() override {}
  void AbortCapture() override {}
  void LaunchGraph() override {}
  void SynchronizeEvent(EventId) override {}
  void SynchronizeAll() override {}
  TimeNs EventTimeNs(EventId event) override { return time_.at(event); }
  TimeNs HostNowNs() override { return 0; }

 private:
  std::vector<TimeNs> windows_;
  const Plan& plan_;
  std::map<StreamId, TimeNs> ready_;
  std::map<EventId, TimeNs> time_;
};

std::vector<Event> Simulate(const Plan& plan, const Topology& topology) {
  std::unique_ptr<Backend> sim = CreateSimBackend();
  RunOptions options;
  options.timing_only = true;
  sim->Load(plan, topology, options);
  VectorSink sink;
  const std::atomic<bool> cancel{false};
  sim->RunThroughStep(plan.num_steps - 1, sink, cancel);
  return sink.events;
}

TimeNs End(const std::vector<Event>& events) {
  TimeNs end = 0;
  for (const Event& e : events) end = std::max(end, e.end_ns);
  return end;
}

Plan Ring(int ranks, Bytes bytes, CollectiveKind kind = CollectiveKind::kAllReduce) {
  CollectiveParams p;
  p.kind = kind;
  p.ranks = ranks;
  p.count = bytes / 4;
  return BuildCollective(p);
}

TEST(EmulatedWindows, EveryTransferHoldsForTheSimulatorsTime) {
  const Plan plan = Ring(8, Bytes{64} << 20);
  const Topology topology = MakeTopologyPreset("dgx-a100");
  const std::vector<TimeNs> windows = device::EmulatedTransferWindows(plan, topology, {});
  const std::vector<Event> sim = Simulate(plan, topology);
  std::size_t transfers = 0;
  for (const Event& e : sim) {
    if (e.kind != OpKind::kRecv) continue;
    ++transfers;
    EXPECT_DOUBLE_EQ(windows[static_cast<std::size_t>(e.op)], e.end_ns - e.start_ns) << "op " << e.op;
    EXPECT_GT(windows[static_cast<std::size_t>(e.op)], 0.0);
  }
  EXPECT_EQ(transfers, plan.ops.size() / 2);
}

// The whole run, issued as the CUDA backend issues it, on a device that
// keeps every window exactly: it ends when the simulator ends.
void ExpectEmulatedRunEndsWithTheSimulator(const Plan& plan, const Topology& topology) {
  const std::vector<TimeNs> windows = device::EmulatedTransferWindows(plan, topology, {});
  TimedDevice gpu(windows, plan);
  device::PlanEnqueuer enqueuer;
  enqueuer.Load(plan, /*use_graph=*/false);
  VectorSink sink;
  const std::atomic<bool> cancel{false};
  enqueuer.RunThroughStep(plan.num_steps - 1, gpu, sink, cancel, ClockKind::kEmulated);
  const TimeNs sim_end = End(Simulate(plan, topology));
  ASSERT_GT(sim_end, 0.0);
  EXPECT_NEAR(End(sink.events), sim_end, sim_end * 1e-9) << plan.name;
  for (const Event& e : sink.events) {
    if (e.kind == OpKind::kRecv) {
      EXPECT_EQ(e.clock, ClockKind::kEmulated);
    }
  }
}

TEST(EmulatedWindows, AnEmulatedRingEndsWhenTheSimulatorSays) {
  ExpectEmulatedRunEndsWithTheSimulator(Ring(8, Bytes{64} << 20), MakeTopologyPreset("dgx-a100"));
  ExpectEmulatedRunEndsWithTheSimulator(Ring(8, Bytes{16} << 20), MakeTopologyPreset("dgx-a100"));
  ExpectEmulatedRunEndsWithTheSimulator(Ring(4, Bytes{1} << 20),
                                        MakeTopologyPreset("pcie-gen3-4gpu"));
  ExpectEmulatedRunEndsWithTheSimulator(Ring(8, Bytes{4} << 20, CollectiveKind::kAllGather),
                                        MakeTopologyPreset("dgx1-v100"));
}

TEST(EmulatedWindows, TransfersSharingALinkShareItsBandwidth) {
  // All-to-all on a PCIe box: every GPU sends to every other at once, so
  // transfers share the switch's links; one transfer alone is faster.
  CollectiveParams p;
  p.kind = CollectiveKind::kAllToAll;
  p.algo = CollectiveAlgo::kDirect;
  p.ranks = 4;
  p.count = (Bytes{4} << 20) / 4;
  const Plan all = BuildCollective(p);
  const Topology topology = MakeTopologyPreset("pcie-gen3-4gpu");
  const std::vector<TimeNs> windows = device::EmulatedTransferWindows(all, topology, {});
  TimeNs longest = 0;
  Bytes bytes = 0;
  for (std::size_t i = 0; i < all.ops.size(); ++i)
    if (all.ops[i].kind == OpKind::kRecv && windows[i] > longest) {
      longest = windows[i];
      bytes = all.ops[i].bytes;
    }
  ASSERT_GT(bytes, 0);
  // The same bytes between two of the GPUs with nothing else on the links.
  PlanBuilder b("one transfer", 4);
  const std::int64_t count = bytes / 4;
  const BufferId src = b.AddBuffer(0, "src", count);
  const BufferId dst = b.AddBuffer(1, "dst", count);
  b.AddTransfer(0, 1, BufferSlice{src, 0, count}, BufferSlice{dst, 0, count}, ReduceOp::kNone, 0,
                OpTags{}, {}, {});
  const Plan single = b.Finish();
  const std::vector<TimeNs> lone = device::EmulatedTransferWindows(single, topology, {});
  TimeNs lone_max = 0;
  for (TimeNs t : lone) lone_max = std::max(lone_max, t);
  ASSERT_GT(lone_max, 0.0);
  EXPECT_GT(longest, 1.5 * lone_max) << "shared links did not slow the transfers";
}

}  // namespace
}  // namespace shardlab
