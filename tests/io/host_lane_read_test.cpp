// The host lane through a trace file: the writer's "host (enqueue)" slices
// read back as LoadedTrace::host_lane, span for span, each naming the event
// of the op it issued; a recorded H200 run's lane obeys what a real CPU and
// GPU must (one thread's calls do not overlap; each names a transfer).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "engine/algorithms/collective.h"
#include "engine/backends/sim/sim_backend.h"
#include "engine/core/error.h"
#include "engine/io/trace_reader.h"
#include "engine/io/trace_writer.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/this_machine.h"

namespace shardlab {
namespace {

const std::string kData = SHARDLAB_TEST_DATA_DIR;

// ts and dur are written as microseconds with 9 significant digits.
void ExpectNear(TimeNs a, TimeNs b) { EXPECT_NEAR(a, b, std::max(1e-3, std::abs(b) * 2e-9)); }

struct Written {
  Plan plan;
  std::vector<Event> events;
  std::vector<HostEnqueueSpan> lane;
  std::string text;
};

// A 4-rank ring on one modelled H200 with the profile's issue cost.
Written WriteModelledRing(const std::string& backend) {
  const DeviceProfile profile = LoadDeviceProfile(kData + "/traces/h200.toml");
  MachineRecord record = MachineFromProfile(profile, 1, "test");
  record.rank_to_gpu = VirtualPlacement(4, 1);
  const Topology topology = BuildMachineTopology(record);
  CollectiveParams p;
  p.ranks = 4;
  p.count = 1024;
  RunOptions options;
  options.timing_only = true;
  options.rank_to_gpu.assign(4, 0);
  options.op_issue_ns = OpIssueNs(profile);
  Executor ex(CreateSimBackend(), BuildCollective(p), topology, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  Written w;
  w.plan = ex.plan();
  // Last event first: event index and op id differ in the file, so a span
  // must be matched to its op's event by the op id it wrote.
  w.events.assign(sink.events.rbegin(), sink.events.rend());
  w.lane = ex.backend().host_lane();
  TraceInfo info;
  info.backend = backend;
  info.host_lane = w.lane;
  info.machine = record;
  std::ostringstream out;
  WriteChromeTrace(out, w.plan, topology, w.events, info);
  w.text = out.str();
  return w;
}

TEST(HostLaneRead, EverySpanReadsBackOnItsRankNamingItsOpsEvent) {
  const Written w = WriteModelledRing("sim");
  ASSERT_FALSE(w.lane.empty());
  const LoadedTrace t = ReadChromeTrace(w.text, "ring.json");
  ASSERT_EQ(t.events.size(), w.events.size()) << "host slices are not events";
  ASSERT_EQ(t.host_lane.size(), w.lane.size());
  ASSERT_EQ(t.host_names.size(), w.lane.size());
  EXPECT_EQ(t.host_clock, "simulated") << "the simulator's lane is its model, not a host clock";
  for (std::size_t i = 0; i < w.lane.size(); ++i) {
    const HostEnqueueSpan& a = t.host_lane[i];
    const HostEnqueueSpan& b = w.lane[i];
    EXPECT_EQ(a.rank, b.rank) << i;
    ExpectNear(a.start_ns, b.start_ns);
    ExpectNear(a.end_ns, b.end_ns);
    ASSERT_GE(a.unit, 0) << i;
    ASSERT_LT(static_cast<std::size_t>(a.unit), t.events.size());
    EXPECT_EQ(t.original_op[static_cast<std::size_t>(a.unit)], b.unit) << "span " << i << " names another op";
    EXPECT_EQ(t.host_names[i].rfind("enqueue ", 0), 0u) << t.host_names[i];
  }
  // A real backend's lane is on the host clock.
  EXPECT_EQ(ReadChromeTrace(WriteModelledRing("cuda").text, "cuda.json").host_clock, "host");
}

TEST(HostLaneRead, AHostSliceOffTheHostThreadIsRefused) {
  Written w = WriteModelledRing("sim");
  // Move the first host slice onto rank 0's compute lane.
  const std::string from = "\"cat\":\"host\",\"pid\":1,\"tid\":1000009";
  const std::size_t at = w.text.find(from);
  ASSERT_NE(at, std::string::npos);
  w.text.replace(at, from.size(), "\"cat\":\"host\",\"pid\":1,\"tid\":1000000");
  try {
    ReadChromeTrace(w.text, "moved.json");
    FAIL() << "read a host slice off the host thread";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not the host thread of rank 0"), std::string::npos) << e.what();
  }
}

// (The recorded events are not checked against their spans: in this
// recording each transfer's GPU start stamp lies about 20 us before the
// host call that enqueued it began, so the host and event clocks of that
// run were not aligned to better than that.)
TEST(HostLaneRead, ARecordedEagerH200RunsLaneIsOneCpuThreadsCalls) {
  // 8 virtual ranks of one H200, 64 MiB ring, ops enqueued one by one.
  const LoadedTrace t = ReadChromeTraceFile(
      kData + "/../../bench/results/2026-11-26-h200-stamps/traces/ring8-64M-no-graph.json");
  EXPECT_EQ(t.host_clock, "host");
  std::size_t sends = 0;
  for (const Event& e : t.events) sends += e.kind == OpKind::kSend ? 1 : 0;
  ASSERT_EQ(t.host_lane.size(), sends) << "one enqueue per transfer";
  std::vector<HostEnqueueSpan> by_start = t.host_lane;
  std::sort(by_start.begin(), by_start.end(),
            [](const HostEnqueueSpan& a, const HostEnqueueSpan& b) { return a.start_ns < b.start_ns; });
  for (std::size_t i = 1; i < by_start.size(); ++i)
    EXPECT_GE(by_start[i].start_ns, by_start[i - 1].end_ns - 1e-3) << "one thread's calls overlap at " << i;
  for (const HostEnqueueSpan& s : t.host_lane) {
    ASSERT_GE(s.unit, 0);
    const Event& e = t.events[static_cast<std::size_t>(s.unit)];
    EXPECT_TRUE(e.kind == OpKind::kSend || e.kind == OpKind::kRecv) << "span names op " << s.unit;
  }
  // A graph run: the whole plan is one launch.
  const LoadedTrace g = ReadChromeTraceFile(
      kData + "/../../bench/results/2026-11-26-h200-stamps/traces/ring8-64M.json");
  ASSERT_EQ(g.host_lane.size(), 1u);
  EXPECT_EQ(g.host_lane[0].unit, -1);
  EXPECT_EQ(g.host_names[0], "cudaGraphLaunch (whole plan)");
}

}  // namespace
}  // namespace shardlab
