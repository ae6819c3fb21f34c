// The host lane on the Gantt (host_lane_rows.h): from a simulated run whose
// model charges the host an issue cost per op, one host row per rank, each
// placed just above that rank's GPU rows, holding every span once; and an
// opened trace brings its host lane into the session.
#include "app/gui/model/host_lane_rows.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "app/gui/model/session.h"
#include "engine/algorithms/collective.h"
#include "engine/backends/sim/sim_backend.h"
#include "engine/io/trace_writer.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/this_machine.h"

namespace shardlab::gui {
namespace {

struct ModelRun {
  Plan plan;
  Topology topology;
  MachineRecord record;
  std::vector<Event> events;
  std::vector<HostEnqueueSpan> lane;
  TimeNs issue_ns = 0;
};

// A 4-rank ring of 8 bytes on one modelled H200, each op issued by the host.
ModelRun RunModel() {
  ModelRun m;
  const DeviceProfile profile = LoadDeviceProfile(std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200.toml");
  m.record = MachineFromProfile(profile, 1, "test");
  m.record.rank_to_gpu = VirtualPlacement(4, 1);
  m.topology = BuildMachineTopology(m.record);
  m.issue_ns = OpIssueNs(profile);
  CollectiveParams p;
  p.ranks = 4;
  p.count = 2;
  RunOptions options;
  options.rank_to_gpu = m.record.rank_to_gpu;
  options.op_issue_ns = m.issue_ns;
  Executor ex(CreateSimBackend(), BuildCollective(p), m.topology, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  m.plan = ex.plan();
  m.events = sink.events;
  m.lane = ex.backend().host_lane();
  return m;
}

TEST(HostLaneRows, OneRowPerRankAboveItsGpuRowsHoldingEverySpanOnce) {
  const ModelRun m = RunModel();
  ASSERT_FALSE(m.lane.empty());
  const HostLaneView host = PrepareHostLane(m.lane, ClockKind::kSimulated);
  EXPECT_EQ(host.spans, m.lane.size());
  EXPECT_NEAR(host.busy_ns, m.lane.size() * m.issue_ns, 1e-6);
  std::set<int> ranks;
  for (const HostEnqueueSpan& s : m.lane) ranks.insert(s.rank);
  ASSERT_EQ(host.rows.size(), ranks.size());
  std::multiset<std::pair<int, std::int32_t>> want, got;  // (rank, op)
  for (const HostEnqueueSpan& s : m.lane) want.insert({s.rank, s.unit});
  for (const TimelineRow& row : host.rows) {
    for (std::size_t i = 0; i < row.events.size(); ++i) {
      got.insert({row.rank, row.events[i].op});
      EXPECT_EQ(row.events[i].rank, row.rank);
      EXPECT_EQ(row.events[i].clock, ClockKind::kSimulated);
      if (i > 0) EXPECT_GE(row.events[i].start_ns, row.events[i - 1].end_ns - 1e-9) << "a thread's calls overlap";
    }
  }
  EXPECT_EQ(got, want);

  TimelineStore store;
  store.Add(m.events);
  const std::vector<GanttDisplayRow> rows = InterleaveHostRows(store.rows(), host);
  ASSERT_EQ(rows.size(), store.rows().size() + host.rows.size());
  std::set<int> gpu_seen, host_seen;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const GanttDisplayRow& r = rows[i];
    if (i > 0) EXPECT_GE(r.rank, rows[i - 1].rank) << "rows leave rank order at " << i;
    if (r.host) {
      EXPECT_TRUE(host_seen.insert(r.index).second);
      EXPECT_EQ(host.rows[static_cast<std::size_t>(r.index)].rank, r.rank);
      // Directly above the rank's first GPU row.
      ASSERT_LT(i + 1, rows.size());
      EXPECT_FALSE(rows[i + 1].host);
      EXPECT_EQ(rows[i + 1].rank, r.rank);
    } else {
      EXPECT_TRUE(gpu_seen.insert(r.index).second);
      EXPECT_EQ(store.rows()[static_cast<std::size_t>(r.index)].rank, r.rank);
    }
  }
  EXPECT_EQ(gpu_seen.size(), store.rows().size());
  EXPECT_EQ(host_seen.size(), host.rows.size());
  // No host lane: the GPU rows alone, unchanged.
  const std::vector<GanttDisplayRow> plain = InterleaveHostRows(store.rows(), HostLaneView{});
  ASSERT_EQ(plain.size(), store.rows().size());
  for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(plain[i].index, static_cast<int>(i));

  const std::string key = HostLaneKey(host, store.end_ns());
  EXPECT_NE(key.find("host time, not GPU time"), std::string::npos) << key;
  EXPECT_NE(key.find(std::to_string(m.lane.size()) + " calls"), std::string::npos) << key;
  EXPECT_EQ(HostRowLabel(3), "host GPU3");
}

TEST(HostLaneRows, AnOpenedTraceBringsItsHostLaneIntoTheSession) {
  const ModelRun m = RunModel();
  TraceInfo info;
  info.backend = "sim";
  info.machine = m.record;
  info.host_lane = m.lane;
  const std::string path = testing::TempDir() + "host_lane_rows_test.json";
  WriteChromeTraceFile(path, m.plan, m.topology, m.events, info);
  Session session;
  std::string message;
  ASSERT_TRUE(session.OpenTrace(path, &message)) << message;
  ASSERT_EQ(session.host_lane().size(), m.lane.size());
  EXPECT_EQ(session.host_clock(), ClockKind::kSimulated);
  for (std::size_t i = 0; i < m.lane.size(); ++i) EXPECT_EQ(session.host_lane()[i].rank, m.lane[i].rank);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace shardlab::gui
