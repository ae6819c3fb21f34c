// The host lane in a Chrome trace: the CPU's enqueue calls of a real run
// (Backend::host_lane) on a "host (enqueue)" thread of each rank, named
// after the op they issued, clock "host"; the trace reader keeps them apart
// (LoadedTrace::host_lane), so a trace with a host lane reads back to the same events.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "engine/algorithms/collective.h"
#include "engine/run/executor.h"
#include "engine/io/trace_reader.h"
#include "engine/io/trace_writer.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

std::size_t Count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(HostLaneTrace, EnqueueCallsGetAThreadPerRankAndReadBackWithoutThem) {
  CollectiveParams p;
  p.ranks = 2;
  p.count = 64;
  const Topology topology = MakeTopologyPreset("dgx-a100");
  Executor executor(CreateBackend("sim"), BuildCollective(p), topology);
  VectorSink sink;
  executor.RunToEnd(sink);
  const Plan& plan = executor.plan();
  TraceInfo info;
  info.backend = "cuda";
  // One span per op, as a device backend's eager run has, plus one launch.
  for (std::size_t i = 0; i < plan.ops.size(); ++i)
    info.host_lane.push_back({static_cast<std::int32_t>(i), plan.ops[i].rank, i * 1000.0,
                              i * 1000.0 + 500.0});
  info.host_lane.push_back({-1, 0, 0.0, 2000.0});
  std::ostringstream with, without;
  WriteChromeTrace(with, plan, topology, sink.events, info);
  info.host_lane.clear();
  WriteChromeTrace(without, plan, topology, sink.events, info);

  EXPECT_EQ(Count(with.str(), "\"name\":\"host (enqueue)\""), 2u) << "one thread per rank";
  EXPECT_EQ(Count(with.str(), "\"cat\":\"host\""), plan.ops.size() + 1);
  EXPECT_EQ(Count(with.str(), "cudaGraphLaunch (whole plan)"), 1u);
  EXPECT_EQ(Count(with.str(), "\"name\":\"enqueue send"), plan.ops.size() / 2);
  EXPECT_EQ(Count(without.str(), "\"cat\":\"host\""), 0u);

  const LoadedTrace a = ReadChromeTrace(with.str(), "with.json");
  const LoadedTrace b = ReadChromeTrace(without.str(), "without.json");
  ASSERT_EQ(a.events.size(), sink.events.size());
  ASSERT_EQ(b.events.size(), sink.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].op, b.events[i].op);
    EXPECT_DOUBLE_EQ(a.events[i].start_ns, b.events[i].start_ns);
  }
}

}  // namespace
}  // namespace shardlab
