#include "engine/io/trace_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "tests/common/json_reader.h"

namespace shardlab {
namespace {

// The file must be valid JSON: read it with the shared strict reader.
using test_util::Json;
using test_util::ParseJson;

// --- Scenario: three GPUs on one NVSwitch, a few transfers.

Topology MakeSwitchTopology(int gpus) {
  Topology topology;
  topology.name = "test-switch";
  for (int g = 0; g < gpus; ++g) {
    Node gpu;
    gpu.name = "gpu" + std::to_string(g);
    gpu.kind = NodeKind::kGpu;
    gpu.device = DeviceSpec{"test-gpu", 19.5, 312, 2039, 80LL << 30};
    topology.nodes.push_back(gpu);
    topology.gpus.push_back(g);
  }
  Node sw;
  sw.name = "nvswitch";
  sw.kind = NodeKind::kNvSwitch;
  topology.nodes.push_back(sw);
  for (int g = 0; g < gpus; ++g) {
    Link link;
    link.a = g;
    link.b = gpus;
    link.kind = LinkKind::kNvLink3;
    link.gbps = 300;
    link.latency_ns = 700;
    link.lanes = 12;
    topology.links.push_back(link);
  }
  return topology;
}

Event EventFor(const Plan& plan, OpId id, TimeNs start_ns, TimeNs end_ns) {
  const Op& op = plan.ops[id];
  Event event;
  event.op = id;
  event.rank = op.rank;
  event.peer = op.peer;
  event.step = op.step;
  event.collective_seq = op.collective_seq;
  event.lane = op.lane;
  event.kind = op.kind;
  event.clock = ClockKind::kSimulated;
  event.start_ns = start_ns;
  event.end_ns = end_ns;
  event.bytes = op.bytes;
  return event;
}

struct Scenario {
  Plan plan;
  Topology topology = MakeSwitchTopology(3);
  std::vector<Event> events;
  std::vector<OpId> sends;
};

// rank 0 computes, then 0→1 and 0→2 overlap (1 MB each in 10 µs = 100 GB/s),
// then 1→2 reduces into rank 2, then 2→0 copies back.
Scenario MakeScenario() {
  Scenario s;
  PlanBuilder b("trace \"test\" plan\\ with\ttabs\nand a newline \x01", 3);
  std::vector<BufferId> data;
  for (int r = 0; r < 3; ++r) data.push_back(b.AddBuffer(r, "data", 250'000 * 3));
  const std::int64_t chunk = 250'000;  // floats: 1 MB
  auto slice = [&](int rank, int c) { return BufferSlice{data[rank], c * chunk, chunk}; };

  Op compute;
  compute.kind = OpKind::kCompute;
  compute.lane = Lane::kCompute;
  compute.rank = 0;
  compute.flops = 1e9;
  compute.tags.phase = Phase::kForward;
  compute.tags.microbatch = 0;
  compute.tags.layer = 1;
  const OpId c0 = b.AddOp(compute);

  OpTags rs{Phase::kReduceScatter, 0, -1, -1};
  const auto t01 =
      b.AddTransfer(0, 1, slice(0, 0), slice(1, 0), ReduceOp::kNone, 0, rs, {c0}, {}, 7);
  const auto t02 = b.AddTransfer(0, 2, slice(0, 1), slice(2, 1), ReduceOp::kNone, 0,
                                 OpTags{Phase::kReduceScatter, 1, -1, -1}, {c0}, {}, 7);
  const auto t12 = b.AddTransfer(1, 2, slice(1, 0), slice(2, 0), ReduceOp::kSum, 1,
                                 OpTags{Phase::kReduceScatter, 0, -1, -1}, {t01.recv}, {}, 7);
  const auto t20 = b.AddTransfer(2, 0, slice(2, 0), slice(0, 0), ReduceOp::kNone, 2,
                                 OpTags{Phase::kAllGather, 0, -1, -1}, {t12.recv}, {}, 7);
  s.plan = b.Finish();
  s.sends = {t01.send, t02.send, t12.send, t20.send};

  s.events.push_back(EventFor(s.plan, c0, 0, 5'000));
  // Recv events arrive before their Sends for 0→1, to test flow ordering.
  s.events.push_back(EventFor(s.plan, t01.recv, 5'000, 15'000));
  s.events.push_back(EventFor(s.plan, t01.send, 5'000, 15'000));
  s.events.push_back(EventFor(s.plan, t02.send, 5'000, 15'000));
  s.events.push_back(EventFor(s.plan, t02.recv, 5'000, 15'000));
  s.events.push_back(EventFor(s.plan, t12.send, 15'000, 25'000));
  s.events.push_back(EventFor(s.plan, t12.recv, 15'000, 25'000));
  s.events.push_back(EventFor(s.plan, t20.send, 25'000, 35'000.5));
  s.events.push_back(EventFor(s.plan, t20.recv, 25'000, 35'000.5));
  return s;
}

std::string WriteToString(const Scenario& s, const TraceInfo& info) {
  std::ostringstream out;
  WriteChromeTrace(out, s.plan, s.topology, s.events, info);
  return out.str();
}

std::vector<const Json*> EventsWithPhase(const Json& doc, const std::string& ph) {
  std::vector<const Json*> found;
  for (const Json& e : doc.At("traceEvents").items) {
    if (e.At("ph").text == ph) found.push_back(&e);
  }
  return found;
}

TEST(TraceWriter, WritesValidJsonWithTimeUnitEventsAndMetadata) {
  const Scenario s = MakeScenario();
  const std::string text = WriteToString(s, TraceInfo{"title \"quoted\" \\ back", "sim", {}});
  Json doc;
  ASSERT_NO_THROW(doc = ParseJson(text)) << text.substr(0, 2000);
  ASSERT_EQ(doc.type, Json::Type::kObject);
  EXPECT_EQ(doc.fields.front().first, "displayTimeUnit");  // Perfetto reads it only first
  EXPECT_EQ(doc.At("displayTimeUnit").text, "ns");
  ASSERT_EQ(doc.At("traceEvents").type, Json::Type::kArray);
  const Json& other = doc.At("otherData");
  EXPECT_EQ(other.At("title").text, "title \"quoted\" \\ back");
  EXPECT_EQ(other.At("plan").text, s.plan.name);  // escapes round-trip, \x01 included
  EXPECT_EQ(other.At("backend").text, "sim");
  EXPECT_EQ(other.At("events").number, 9);
  EXPECT_EQ(other.At("flows").number, 4);
  EXPECT_EQ(other.At("clock").text, "simulated");
}

TEST(TraceWriter, WritesOneCompleteSlicePerEventWithTheOpsFacts) {
  const Scenario s = MakeScenario();
  const Json doc = ParseJson(WriteToString(s, TraceInfo{}));
  const auto slices = EventsWithPhase(doc, "X");
  ASSERT_EQ(slices.size(), s.events.size());

  std::set<double> ops;
  for (const Json* x : slices) ops.insert(x->At("args").At("op").number);
  EXPECT_EQ(ops.size(), s.events.size());

  // The 0→1 send: name, category, microseconds and args.
  const Json* send = nullptr;
  const Json* recv_sum = nullptr;
  const Json* compute = nullptr;
  for (const Json* x : slices) {
    const double op = x->At("args").At("op").number;
    if (op == s.sends[0]) send = x;
    if (op == s.sends[2] + 1) recv_sum = x;
    if (op == 0) compute = x;
  }
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->At("name").text, "send c0 →1");
  EXPECT_EQ(send->At("cat").text, "reduce-scatter");
  EXPECT_DOUBLE_EQ(send->At("ts").number, 5.0);
  EXPECT_DOUBLE_EQ(send->At("dur").number, 10.0);
  EXPECT_EQ(send->At("pid").number, 1);  // rank 0
  const Json& args = send->At("args");
  EXPECT_EQ(args.At("bytes").number, 1'000'000);
  EXPECT_EQ(args.At("step").number, 0);
  EXPECT_EQ(args.At("seq").number, 7);
  EXPECT_EQ(args.At("peer").number, 1);
  EXPECT_EQ(args.At("chunk").number, 0);
  EXPECT_EQ(args.At("clock").text, "simulated");

  ASSERT_NE(recv_sum, nullptr);
  EXPECT_EQ(recv_sum->At("name").text, "recv+ c0 ←1");
  EXPECT_EQ(recv_sum->At("args").At("reduce").text, "sum");
  ASSERT_NE(compute, nullptr);
  EXPECT_EQ(compute->At("name").text, "forward mb0 L1");
  EXPECT_EQ(compute->At("cat").text, "forward");

  // Sub-microsecond precision survives: 35,000.5 ns ends the last transfer.
  bool found_half_ns = false;
  for (const Json* x : slices) {
    const double end_us = x->At("ts").number + x->At("dur").number;
    if (std::abs(end_us - 35.0005) < 1e-9) found_half_ns = true;
  }
  EXPECT_TRUE(found_half_ns);
}

TEST(TraceWriter, NamesOneProcessPerRankAndOneThreadPerUsedLane) {
  const Scenario s = MakeScenario();
  const Json doc = ParseJson(WriteToString(s, TraceInfo{}));
  std::map<double, std::string> processes;
  std::map<double, std::string> threads;
  for (const Json* m : EventsWithPhase(doc, "M")) {
    if (m->At("name").text == "process_name") {
      processes[m->At("pid").number] = m->At("args").At("name").text;
    }
    if (m->At("name").text == "thread_name") {
      threads[m->At("tid").number] = m->At("args").At("name").text;
    }
  }
  EXPECT_EQ(processes[1], "GPU 0");
  EXPECT_EQ(processes[2], "GPU 1");
  EXPECT_EQ(processes[3], "GPU 2");
  EXPECT_EQ(processes[4], "Links");
  // Rank 0 used compute, send and recv; rank 1 send and recv.
  std::multiset<std::string> names;
  for (const auto& [tid, name] : threads) names.insert(name);
  EXPECT_EQ(names.count("compute"), 1u);
  EXPECT_EQ(names.count("send"), 3u);
  EXPECT_EQ(names.count("recv"), 3u);
  // Every slice sits on a named thread of a named process, and no tid is a pid.
  for (const Json* x : EventsWithPhase(doc, "X")) {
    EXPECT_TRUE(threads.count(x->At("tid").number)) << x->At("name").text;
    EXPECT_TRUE(processes.count(x->At("pid").number));
    EXPECT_FALSE(processes.count(x->At("tid").number));
  }
}

TEST(TraceWriter, DrawsOneFlowFromEachSendToItsRecv) {
  const Scenario s = MakeScenario();
  const Json doc = ParseJson(WriteToString(s, TraceInfo{}));
  const auto starts = EventsWithPhase(doc, "s");
  const auto ends = EventsWithPhase(doc, "f");
  ASSERT_EQ(starts.size(), s.sends.size());
  ASSERT_EQ(ends.size(), s.sends.size());

  std::set<double> start_ids;
  std::set<double> end_ids;
  for (const Json* f : starts) start_ids.insert(f->At("id").number);
  for (const Json* f : ends) {
    end_ids.insert(f->At("id").number);
    EXPECT_EQ(f->At("bp").text, "e");
  }
  EXPECT_EQ(start_ids, std::set<double>(s.sends.begin(), s.sends.end()));
  EXPECT_EQ(end_ids, start_ids);

  // Each flow starts on its Send's track inside the Send, ends on the
  // Recv's track inside the Recv, and both halves follow both slices.
  const auto& items = doc.At("traceEvents").items;
  for (OpId send : s.sends) {
    const OpId recv = s.plan.ops[send].match;
    int send_at = -1, recv_at = -1, s_at = -1, f_at = -1;
    for (int i = 0; i < static_cast<int>(items.size()); ++i) {
      const Json& e = items[i];
      const std::string& ph = e.At("ph").text;
      if (ph == "X" && e.At("args").At("op").number == send) send_at = i;
      if (ph == "X" && e.At("args").At("op").number == recv) recv_at = i;
      if (ph == "s" && e.At("id").number == send) s_at = i;
      if (ph == "f" && e.At("id").number == send) f_at = i;
    }
    ASSERT_GE(send_at, 0);
    ASSERT_GE(recv_at, 0);
    EXPECT_GT(s_at, std::max(send_at, recv_at));
    EXPECT_GT(f_at, s_at);
    // Strictly inside both slices (they all have length here), s before f.
    auto inside = [&](int flow, int slice) {
      const double ts = items[flow].At("ts").number;
      const double begin = items[slice].At("ts").number;
      return ts > begin && ts < begin + items[slice].At("dur").number;
    };
    EXPECT_EQ(items[s_at].At("tid").number, items[send_at].At("tid").number);
    EXPECT_EQ(items[s_at].At("pid").number, items[send_at].At("pid").number);
    EXPECT_TRUE(inside(s_at, send_at));
    EXPECT_EQ(items[f_at].At("tid").number, items[recv_at].At("tid").number);
    EXPECT_EQ(items[f_at].At("pid").number, items[recv_at].At("pid").number);
    EXPECT_TRUE(inside(f_at, recv_at));
    EXPECT_GT(items[f_at].At("ts").number, items[s_at].At("ts").number);
    EXPECT_EQ(items[s_at].At("cat").text, items[f_at].At("cat").text);
    EXPECT_EQ(items[s_at].At("name").text, items[f_at].At("name").text);
  }
}

TEST(TraceWriter, OmitsHalfFlowsWhenARecvNeverRan) {
  Scenario s = MakeScenario();
  s.events.pop_back();  // the 2→0 recv was cancelled
  const Json doc = ParseJson(WriteToString(s, TraceInfo{}));
  EXPECT_EQ(EventsWithPhase(doc, "s").size(), 3u);
  EXPECT_EQ(EventsWithPhase(doc, "f").size(), 3u);
  EXPECT_EQ(EventsWithPhase(doc, "X").size(), s.events.size());
}

TEST(TraceWriter, KeepsFlowsOfZeroLengthTransfersAndSkipsTheirLoad) {
  Scenario s = MakeScenario();
  for (Event& event : s.events) event.end_ns = event.start_ns;
  const Json doc = ParseJson(WriteToString(s, TraceInfo{}));
  const auto starts = EventsWithPhase(doc, "s");
  const auto ends = EventsWithPhase(doc, "f");
  ASSERT_EQ(starts.size(), 4u);
  ASSERT_EQ(ends.size(), 4u);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    EXPECT_LE(starts[i]->At("ts").number, ends[i]->At("ts").number);
  }
  EXPECT_TRUE(EventsWithPhase(doc, "C").empty());  // no rate without a duration
}

// Counter value of `name` at `ts_us`: the last change at or before it.
double CounterAt(const Json& doc, const std::string& name, double ts_us) {
  double value = 0;
  double best_ts = -1;
  for (const Json* c : EventsWithPhase(doc, "C")) {
    if (c->At("name").text != name) continue;
    const double ts = c->At("ts").number;
    if (ts <= ts_us && ts >= best_ts) {
      best_ts = ts;
      value = c->At("args").At("GB/s").number;
    }
  }
  return value;
}

TEST(TraceWriter, CountsLinkLoadOnEveryHopOfEachRoute) {
  const Scenario s = MakeScenario();
  const Json doc = ParseJson(WriteToString(s, TraceInfo{}));
  std::set<std::string> names;
  for (const Json* c : EventsWithPhase(doc, "C")) {
    names.insert(c->At("name").text);
    EXPECT_EQ(c->At("pid").number, 4);  // the Links process
    EXPECT_GE(c->At("args").At("GB/s").number, 0);
  }
  // 0→1, 0→2, 1→2, 2→0 over the switch: 3 up-links and 3 down-links busy.
  EXPECT_EQ(names, (std::set<std::string>{
                       "gpu0→nvswitch NVLink3", "gpu1→nvswitch NVLink3", "gpu2→nvswitch NVLink3",
                       "nvswitch→gpu0 NVLink3", "nvswitch→gpu1 NVLink3", "nvswitch→gpu2 NVLink3"}));
  // Two 1 MB transfers leave gpu0 together in 10 µs: 200 GB/s, then idle.
  EXPECT_NEAR(CounterAt(doc, "gpu0→nvswitch NVLink3", 10), 200, 1e-9);
  EXPECT_NEAR(CounterAt(doc, "gpu0→nvswitch NVLink3", 15), 0, 1e-12);
  EXPECT_NEAR(CounterAt(doc, "nvswitch→gpu1 NVLink3", 10), 100, 1e-9);
  EXPECT_NEAR(CounterAt(doc, "nvswitch→gpu2 NVLink3", 20), 100, 1e-9);
  EXPECT_NEAR(CounterAt(doc, "gpu2→nvswitch NVLink3", 30), 1e6 / 10'000.5, 1e-6);  // 9 digits
  EXPECT_NEAR(CounterAt(doc, "gpu2→nvswitch NVLink3", 40), 0, 1e-12);
  EXPECT_EQ(doc.At("otherData").At("link_counters").number, 6);
}

TEST(TraceWriter, SkipsLinksBetweenRanksThatShareAGpu) {
  const Scenario s = MakeScenario();
  const Json doc = ParseJson(WriteToString(s, TraceInfo{"", "cuda", {0, 0, 1}}));
  std::map<double, std::string> processes;
  std::set<std::string> counters;
  for (const Json* m : EventsWithPhase(doc, "M")) {
    if (m->At("name").text == "process_name") {
      processes[m->At("pid").number] = m->At("args").At("name").text;
    }
  }
  for (const Json* c : EventsWithPhase(doc, "C")) counters.insert(c->At("name").text);
  EXPECT_EQ(processes[1], "GPU 0");
  EXPECT_EQ(processes[2], "rank 1 (GPU 0)");
  EXPECT_EQ(processes[3], "rank 2 (GPU 1)");
  // 0→1 stays on GPU 0; 0→2 and 1→2 go gpu0→gpu1; 2→0 goes gpu1→gpu0.
  EXPECT_EQ(counters, (std::set<std::string>{"gpu0→nvswitch NVLink3", "nvswitch→gpu1 NVLink3",
                                             "gpu1→nvswitch NVLink3", "nvswitch→gpu0 NVLink3"}));
  EXPECT_NEAR(CounterAt(doc, "gpu0→nvswitch NVLink3", 10), 100, 1e-9);
}

TEST(TraceWriter, CapsLinkCountersAtTheBusiestSixtyFour) {
  // 40 ranks each send to the next: 80 busy link directions.
  constexpr int kRanks = 40;
  Scenario s;
  s.topology = MakeSwitchTopology(kRanks);
  PlanBuilder b("ring step", kRanks);
  std::vector<BufferId> data;
  for (int r = 0; r < kRanks; ++r) data.push_back(b.AddBuffer(r, "data", 1000));
  std::vector<PlanBuilder::Transfer> transfers;
  for (int r = 0; r < kRanks; ++r) {
    // Rank r sends 100*(r+1) bytes, so the busiest directions are well defined.
    const BufferSlice src{data[r], 0, (r + 1) * 1000 / kRanks};
    const BufferSlice dst{data[(r + 1) % kRanks], 0, (r + 1) * 1000 / kRanks};
    transfers.push_back(
        b.AddTransfer(r, (r + 1) % kRanks, src, dst, ReduceOp::kSum, 0, {}, {}, {}));
  }
  s.plan = b.Finish();
  for (const auto& t : transfers) {
    s.events.push_back(EventFor(s.plan, t.send, 0, 1000));
    s.events.push_back(EventFor(s.plan, t.recv, 0, 1000));
  }
  const Json doc = ParseJson(WriteToString(s, TraceInfo{}));
  std::set<std::string> counters;
  for (const Json* c : EventsWithPhase(doc, "C")) counters.insert(c->At("name").text);
  EXPECT_EQ(counters.size(), 64u);
  EXPECT_TRUE(counters.count("gpu39→nvswitch NVLink3"));  // the busiest sender
  EXPECT_FALSE(counters.count("gpu0→nvswitch NVLink3"));  // the quietest
  const Json& other = doc.At("otherData");
  EXPECT_EQ(other.At("link_counters").number, 64);
  EXPECT_EQ(other.At("link_directions_with_traffic").number, 80);
  EXPECT_NE(other.At("link_counters_note").text.find("busiest 64 of 80"), std::string::npos);
  bool labelled = false;
  for (const Json* m : EventsWithPhase(doc, "M")) {
    if (m->At("name").text == "process_labels") labelled = true;
  }
  EXPECT_TRUE(labelled);
}

TEST(TraceWriter, WritesAnEmptyRunAsAValidTrace) {
  Scenario s = MakeScenario();
  s.events.clear();
  const Json doc = ParseJson(WriteToString(s, TraceInfo{}));
  EXPECT_TRUE(EventsWithPhase(doc, "X").empty());
  EXPECT_TRUE(EventsWithPhase(doc, "C").empty());
  EXPECT_EQ(doc.At("otherData").At("clock").text, "none");
}

TEST(TraceWriter, WritesAFileAndLeavesNoTemporaryBehind) {
  const Scenario s = MakeScenario();
  const std::string path = testing::TempDir() + "shardlab_trace_writer_test.json";
  std::remove(path.c_str());
  WriteChromeTraceFile(path, s.plan, s.topology, s.events, TraceInfo{"file", "sim", {}});
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), WriteToString(s, TraceInfo{"file", "sim", {}}));
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
  std::remove(path.c_str());
}

TEST(TraceWriter, FailsWithTheFileAndReasonWhenTheDirectoryIsMissing) {
  const Scenario s = MakeScenario();
  try {
    WriteChromeTraceFile("/nonexistent-dir/x.json", s.plan, s.topology, s.events, TraceInfo{});
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
    const std::string what = error.what();
    EXPECT_NE(what.find("/nonexistent-dir/x.json"), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace shardlab
