#include "engine/io/trace_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <unordered_set>

#include "engine/core/backend_traits.h"
#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/plan/op_label.h"
#include "engine/topology/topology_file.h"

namespace shardlab {

namespace {

constexpr int kMaxLinkCounters = 64;
// Thread ids live above every pid: Perfetto keys threads by tid alone, so a
// tid equal to some pid would be taken for that process's main thread.
constexpr std::int64_t kTidBase = 1'000'000;
constexpr std::int64_t kTidsPerRank = 10;  // tid = base + rank*10 + lane: readable digits
constexpr const char* kFlowName = "transfer";

int Pid(int rank) { return rank + 1; }
std::int64_t Tid(int rank, int lane) { return kTidBase + rank * kTidsPerRank + lane; }
double Micros(TimeNs ns) { return ns / 1000.0; }

const char* ReduceSuffix(ReduceOp op) {
  switch (op) {
    case ReduceOp::kNone: return "";
    case ReduceOp::kSum: return "+";
    case ReduceOp::kMax: return " max";
    case ReduceOp::kMin: return " min";
  }
  return "";
}

const char* StatusName(EventStatus status) {
  switch (status) {
    case EventStatus::kOk: return "ok";
    case EventStatus::kFailed: return "failed";
    case EventStatus::kCancelled: return "cancelled";
  }
  return "?";
}

// "send c3 →2", "recv+ c3 ←1", "forward mb2 L1", "copy c0".
std::string SliceName(const Op* op, const Event& event) {
  std::string name;
  switch (event.kind) {
    case OpKind::kRecv:
      name = "recv";
      if (op != nullptr) name += ReduceSuffix(op->reduce);
      break;
    case OpKind::kReduce:
      name = "reduce";
      if (op != nullptr) name += ReduceSuffix(op->reduce);
      break;
    case OpKind::kCompute:
      name = op != nullptr && op->tags.phase != Phase::kNone ? PhaseName(op->tags.phase)
                                                             : "compute";
      break;
    default:
      name = OpKindName(event.kind);
  }
  if (op != nullptr) {
    if (op->tags.microbatch >= 0) name += " mb" + std::to_string(op->tags.microbatch);
    if (op->tags.layer >= 0) name += " L" + std::to_string(op->tags.layer);
    if (op->tags.chunk >= 0) name += " c" + std::to_string(op->tags.chunk);
  }
  if (event.peer >= 0) {
    if (event.kind == OpKind::kSend) name += " →" + std::to_string(event.peer);
    if (event.kind == OpKind::kRecv) name += " ←" + std::to_string(event.peer);
  }
  if (event.status != EventStatus::kOk) name += std::string(" [") + StatusName(event.status) + "]";
  return name;
}

// The facts every pass needs about which ops ran.
struct RunIndex {
  std::vector<std::int32_t> event_of_op;  // index into events, or -1
  std::vector<std::uint8_t> lanes_of_rank;  // bit per lane that has events
  int max_rank = -1;

  const Op* OpOf(const Plan& plan, const Event& event) const {
    if (event.op < 0 || static_cast<std::size_t>(event.op) >= plan.ops.size()) return nullptr;
    return &plan.ops[event.op];
  }
  // The event of `op`'s matched Send/Recv, or -1.
  std::int32_t MatchEvent(const Plan& plan, const Op& op) const {
    if (op.match < 0 || static_cast<std::size_t>(op.match) >= plan.ops.size()) return -1;
    return event_of_op[op.match];
  }
};

RunIndex IndexRun(const Plan& plan, std::span<const Event> events) {
  RunIndex index;
  index.event_of_op.assign(plan.ops.size(), -1);
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& event = events[i];
    if (event.op >= 0 && static_cast<std::size_t>(event.op) < plan.ops.size()) {
      index.event_of_op[event.op] = static_cast<std::int32_t>(i);
    }
    index.max_rank = std::max(index.max_rank, event.rank);
  }
  index.lanes_of_rank.assign(std::max(index.max_rank + 1, plan.num_ranks), 0);
  for (const Event& event : events) {
    if (event.rank < 0) continue;
    const unsigned lane_bit = 1u << static_cast<int>(event.lane);
    index.lanes_of_rank[event.rank] |= static_cast<std::uint8_t>(lane_bit);
  }
  return index;
}

// --- Link load --------------------------------------------------------------

// One direction of one link: 2 * link + (forward ? 0 : 1).
int DirectionIndex(const LinkHop& hop) { return 2 * hop.link + (hop.forward ? 0 : 1); }

std::string DirectionName(const Topology& topology, int direction) {
  const Link& link = topology.links[direction / 2];
  const bool forward = direction % 2 == 0;
  const Node& from = topology.nodes[forward ? link.a : link.b];
  const Node& to = topology.nodes[forward ? link.b : link.a];
  return from.name + "→" + to.name + " " + LinkKindName(link.kind);
}

struct LinkLoadStats {
  int directions_with_traffic = 0;
  int counters = 0;
  std::int64_t transfers_without_route = 0;
};

// Walks every transfer that ran and hands its route to `fn` with its time
// and rate. A transfer is timed by its Recv (the data has landed when the
// Recv ends), or by its Send when the Recv never ran. Transfers between
// ranks on one GPU cross no link.
class TransferRoutes {
 public:
  TransferRoutes(const Plan& plan, const Topology& topology, std::span<const Event> events,
                 const TraceInfo& info, const RunIndex& index)
      : plan_(plan), topology_(topology), events_(events), info_(info), index_(index),
        routes_(topology) {}

  template <typename Fn> void ForEach(Fn&& fn) {
    unrouted_ = 0;
    for (const Event& event : events_) {
      if (event.status != EventStatus::kOk || event.duration_ns() <= 0) continue;
      const Op* op = index_.OpOf(plan_, event);
      if (op == nullptr || op->match < 0) continue;
      if (static_cast<std::size_t>(op->match) >= plan_.ops.size()) continue;
      int src_rank = 0;
      int dst_rank = 0;
      if (op->kind == OpKind::kRecv) {
        src_rank = plan_.ops[op->match].rank;
        dst_rank = op->rank;
      } else if (op->kind == OpKind::kSend && index_.MatchEvent(plan_, *op) < 0) {
        src_rank = op->rank;
        dst_rank = plan_.ops[op->match].rank;
      } else {
        continue;
      }
      const int src_gpu = GpuOf(src_rank);
      const int dst_gpu = GpuOf(dst_rank);
      if (src_gpu < 0 || dst_gpu < 0) {
        ++unrouted_;
        continue;
      }
      if (src_gpu == dst_gpu) continue;
      const Route* route = nullptr;
      try {
        route = &routes_.Between(src_gpu, dst_gpu);
      } catch (const Error&) {
        ++unrouted_;
        continue;
      }
      const Bytes bytes = event.bytes > 0 ? event.bytes : op->bytes;
      const double gbps = static_cast<double>(bytes) / event.duration_ns();  // bytes/ns == GB/s
      fn(*route, event.start_ns, event.end_ns, static_cast<double>(bytes), gbps);
    }
  }

  std::int64_t unrouted() const { return unrouted_; }

 private:
  int GpuOf(int rank) const {
    int gpu = rank;
    if (!info_.rank_to_gpu.empty()) {
      if (rank < 0 || static_cast<std::size_t>(rank) >= info_.rank_to_gpu.size()) return -1;
      gpu = info_.rank_to_gpu[rank];
    }
    return gpu >= 0 && gpu < topology_.num_gpus() ? gpu : -1;
  }

  const Plan& plan_;
  const Topology& topology_;
  std::span<const Event> events_;
  const TraceInfo& info_;
  const RunIndex& index_;
  RouteTable routes_;
  std::int64_t unrouted_ = 0;
};

// Writes one counter track per busy link direction (the busiest
// kMaxLinkCounters by bytes): the GB/s in flight at every change point.
LinkLoadStats WriteLinkCounters(JsonWriter& w, std::ostream& out, const Plan& plan,
                                const Topology& topology, std::span<const Event> events,
                                const TraceInfo& info, const RunIndex& index, int pid) {
  LinkLoadStats stats;
  const int num_directions = 2 * static_cast<int>(topology.links.size());
  if (num_directions == 0) return stats;
  TransferRoutes transfers(plan, topology, events, info, index);

  std::vector<double> bytes_of(num_directions, 0.0);
  transfers.ForEach([&](const Route& route, TimeNs, TimeNs, double bytes, double) {
    for (const LinkHop& hop : route.hops) bytes_of[DirectionIndex(hop)] += bytes;
  });
  stats.transfers_without_route = transfers.unrouted();

  std::vector<int> busy;
  for (int d = 0; d < num_directions; ++d) {
    if (bytes_of[d] > 0) busy.push_back(d);
  }
  stats.directions_with_traffic = static_cast<int>(busy.size());
  if (busy.size() > static_cast<std::size_t>(kMaxLinkCounters)) {
    std::stable_sort(busy.begin(), busy.end(),
                     [&](int a, int b) { return bytes_of[a] > bytes_of[b]; });
    busy.resize(kMaxLinkCounters);
    std::sort(busy.begin(), busy.end());  // back to topology order for reading
  }
  stats.counters = static_cast<int>(busy.size());
  if (busy.empty()) return stats;

  std::vector<int> slot_of(num_directions, -1);
  for (std::size_t s = 0; s < busy.size(); ++s) slot_of[busy[s]] = static_cast<int>(s);

  struct Change {
    TimeNs at_ns;
    double gbps;
    int active;  // +1 when a transfer starts, -1 when it ends
  };
  std::vector<std::vector<Change>> changes(busy.size());
  transfers.ForEach([&](const Route& route, TimeNs start, TimeNs end, double, double gbps) {
    for (const LinkHop& hop : route.hops) {
      const int slot = slot_of[DirectionIndex(hop)];
      if (slot < 0) continue;
      changes[slot].push_back(Change{start, gbps, +1});
      changes[slot].push_back(Change{end, -gbps, -1});
    }
  });

  // Names must be unique within the process, or Perfetto merges the tracks.
  std::unordered_set<std::string> names;
  for (std::size_t s = 0; s < busy.size(); ++s) {
    std::string name = DirectionName(topology, busy[s]);
    if (!names.insert(name).second) {
      name += " #" + std::to_string(busy[s] / 2);
      names.insert(name);
    }
    std::vector<Change>& list = changes[s];
    std::sort(list.begin(), list.end(),
              [](const Change& a, const Change& b) { return a.at_ns < b.at_ns; });
    auto emit = [&](TimeNs at_ns, double gbps) {
      w.BeginObject();
      w.Field("ph", "C");
      w.Field("name", name);
      w.Field("cat", "link");
      w.Field("pid", pid);  // counters belong to the process: no tid
      w.Field("ts", Micros(at_ns));
      w.Key("args");
      w.BeginObject();
      w.Field("GB/s", gbps);
      w.EndObject();
      w.EndObject();
      out << '\n';
    };
    if (!list.empty() && list.front().at_ns > 0) emit(0, 0);
    double gbps = 0;
    int active = 0;
    double last_emitted = -1;
    for (std::size_t i = 0; i < list.size();) {
      const TimeNs at_ns = list[i].at_ns;
      for (; i < list.size() && list[i].at_ns == at_ns; ++i) {
        gbps += list[i].gbps;
        active += list[i].active;
      }
      // Rounding must not leave a ghost load on an idle link.
      if (active == 0) gbps = 0;
      const double value = std::max(gbps, 0.0);
      if (value != last_emitted) emit(at_ns, value);
      last_emitted = value;
    }
  }
  return stats;
}

// --- Events -----------------------------------------------------------------

// Process-level metadata passes kNoTid: Perfetto then takes the process's
// main thread (tid = pid) rather than creating an empty lane thread.
constexpr std::int64_t kNoTid = -1;

void WriteMetadata(JsonWriter& w, std::ostream& out, const char* name, int pid,
                   std::int64_t tid, const char* key, const std::string& value) {
  w.BeginObject();
  w.Field("ph", "M");
  w.Field("name", name);
  w.Field("pid", pid);
  if (tid != kNoTid) w.Field("tid", tid);
  w.Key("args");
  w.BeginObject();
  w.Field(key, value);
  w.EndObject();
  w.EndObject();
  out << '\n';
}

void WriteSortIndex(JsonWriter& w, std::ostream& out, const char* name, int pid,
                    std::int64_t tid, int index) {
  w.BeginObject();
  w.Field("ph", "M");
  w.Field("name", name);
  w.Field("pid", pid);
  if (tid != kNoTid) w.Field("tid", tid);
  w.Key("args");
  w.BeginObject();
  w.Field("sort_index", index);
  w.EndObject();
  w.EndObject();
  out << '\n';
}

// The host lane: one thread per rank below its GPU lanes, the CPU's
// enqueue calls as slices named after the unit they issued.
constexpr int kHostLaneSlot = kTidsPerRank - 1;

void WriteHostLane(JsonWriter& w, std::ostream& out, const Plan& plan,
                   std::span<const HostEnqueueSpan> spans, int num_ranks, ClockKind clock) {
  std::vector<char> named(static_cast<std::size_t>(std::max(num_ranks, 0)), 0);
  for (const HostEnqueueSpan& s : spans) {
    if (s.rank < 0 || s.rank >= num_ranks) continue;
    if (!named[static_cast<std::size_t>(s.rank)]) {
      named[static_cast<std::size_t>(s.rank)] = 1;
      WriteMetadata(w, out, "thread_name", Pid(s.rank), Tid(s.rank, kHostLaneSlot), "name",
                    "host (enqueue)");
      WriteSortIndex(w, out, "thread_sort_index", Pid(s.rank), Tid(s.rank, kHostLaneSlot),
                     kHostLaneSlot);
    }
    const bool unit = s.unit >= 0 && static_cast<std::size_t>(s.unit) < plan.ops.size();
    w.BeginObject();
    w.Field("ph", "X");
    std::string name = "cudaGraphLaunch (whole plan)";
    if (unit) {
      const Op& op = plan.ops[static_cast<std::size_t>(s.unit)];
      Event as_event;
      as_event.kind = op.kind;
      as_event.peer = op.peer;
      as_event.rank = op.rank;
      name = "enqueue " + SliceName(&op, as_event);
    }
    w.Field("name", name);
    w.Field("cat", "host");
    w.Field("pid", Pid(s.rank));
    w.Field("tid", Tid(s.rank, kHostLaneSlot));
    w.Field("ts", Micros(s.start_ns));
    w.Field("dur", Micros(std::max(s.end_ns - s.start_ns, 0.0)));
    w.Key("args");
    w.BeginObject();
    if (unit) w.Field("op", s.unit);
    w.Field("clock", ClockKindName(clock));
    w.EndObject();
    w.EndObject();
    out << '\n';
  }
}

// A slice: its name what the op is ("send c3 →2"), after the tag of the
// collective call it belongs to ("AG L3 fwd: send c1 →2"); its labels
// (op_label.h) and the call's note in args, so that a reader rebuilds them.
void WriteSlice(JsonWriter& w, std::ostream& out, const Plan& plan, const Op* op, const Event& event) {
  const char* category = op != nullptr && op->tags.phase != Phase::kNone
                             ? PhaseName(op->tags.phase)
                             : "op";
  const CollectiveNote* note = op != nullptr ? NoteOf(plan, *op) : nullptr;
  w.BeginObject();
  w.Field("ph", "X");
  w.Field("name", note != nullptr ? note->tag + ": " + SliceName(op, event) : SliceName(op, event));
  w.Field("cat", category);
  w.Field("pid", Pid(event.rank));
  w.Field("tid", Tid(event.rank, static_cast<int>(event.lane)));
  w.Field("ts", Micros(event.start_ns));
  w.Field("dur", Micros(std::max(event.duration_ns(), 0.0)));
  w.Key("args");
  w.BeginObject();
  w.Field("bytes", event.bytes);
  w.Field("step", event.step);
  w.Field("seq", event.collective_seq);
  w.Field("op", event.op);
  w.Field("kind", OpKindName(event.kind));  // for readers (the app's File > Open trace)
  if (event.peer >= 0) w.Field("peer", event.peer);
  if (op != nullptr) {
    if (op->tags.chunk >= 0) w.Field("chunk", op->tags.chunk);
    if (op->tags.microbatch >= 0) w.Field("microbatch", op->tags.microbatch);
    if (op->tags.layer >= 0) w.Field("layer", op->tags.layer);
    if (op->reduce != ReduceOp::kNone) w.Field("reduce", ReduceOpName(op->reduce));
    if (op->flops > 0) w.Field("flops", op->flops);
    const OpLabel label = LabelOp(plan, *op);
    w.Field("label", label.bar);
    w.Field("what", label.text);
    if (note != nullptr) {
      w.Field("call", note->tag);
      w.Field("call_what", note->what);
      if (note->two_passes) w.Field("call_passes", 2);
    }
  }
  w.Field("clock", ClockKindName(event.clock));
  if (event.status != EventStatus::kOk) w.Field("status", StatusName(event.status));
  w.EndObject();
  w.EndObject();
  out << '\n';
}

// "s" or "f" of the flow from a Send (op `send_op`) to its Recv.
void WriteFlow(JsonWriter& w, std::ostream& out, bool start, OpId send_op, const Event& on,
               TimeNs at_ns) {
  w.BeginObject();
  w.Field("ph", start ? "s" : "f");
  if (!start) w.Field("bp", "e");
  w.Field("id", send_op);
  w.Field("name", kFlowName);
  w.Field("cat", kFlowName);
  w.Field("pid", Pid(on.rank));
  w.Field("tid", Tid(on.rank, static_cast<int>(on.lane)));
  w.Field("ts", Micros(at_ns));
  w.EndObject();
  out << '\n';
}

// Flow events bind to the slice open on their track when they are read.
// Perfetto reads by timestamp, so each half sits strictly inside its slice
// where the slice has length (a tie with the slice's start would leave the
// binding to the reader's order for equal times), the end no earlier than
// the start. Both halves follow both slices in the file too, which settles
// zero-length slices for readers that keep file order.
void WriteFlowIfComplete(JsonWriter& w, std::ostream& out, const Plan& plan,
                         std::span<const Event> events, const RunIndex& index,
                         std::size_t event_index, std::int64_t* flows) {
  const Event& event = events[event_index];
  const Op* op = index.OpOf(plan, event);
  if (op == nullptr || (op->kind != OpKind::kSend && op->kind != OpKind::kRecv)) return;
  const std::int32_t other = index.MatchEvent(plan, *op);
  if (other < 0 || static_cast<std::size_t>(other) >= event_index) return;
  const bool is_send = op->kind == OpKind::kSend;
  if (plan.ops[op->match].kind != (is_send ? OpKind::kRecv : OpKind::kSend)) return;
  const Event& send = is_send ? event : events[other];
  const Event& recv = is_send ? events[other] : event;
  const OpId send_op = is_send ? event.op : op->match;

  auto mid = [](TimeNs a, TimeNs b) { return a + (std::max(a, b) - a) / 2; };
  TimeNs start_ns = mid(send.start_ns, send.end_ns);
  TimeNs from_ns = std::max(recv.start_ns, start_ns);
  if (from_ns > recv.end_ns) {  // clocks disagree: fall back to the slices' starts
    start_ns = send.start_ns;
    from_ns = std::clamp(send.start_ns, recv.start_ns, std::max(recv.start_ns, recv.end_ns));
  }
  const TimeNs end_ns = mid(from_ns, recv.end_ns);
  WriteFlow(w, out, /*start=*/true, send_op, send, start_ns);
  WriteFlow(w, out, /*start=*/false, send_op, recv, end_ns);
  ++*flows;
}

std::string ProcessName(int rank, const TraceInfo& info) {
  if (info.rank_to_gpu.empty() || static_cast<std::size_t>(rank) >= info.rank_to_gpu.size() ||
      info.rank_to_gpu[rank] == rank) {
    return "GPU " + std::to_string(rank);
  }
  return "rank " + std::to_string(rank) + " (GPU " + std::to_string(info.rank_to_gpu[rank]) + ")";
}

// "simulated", or "mixed" when a run's events came from several clocks.
std::string RunClock(std::span<const Event> events) {
  if (events.empty()) return "none";
  const ClockKind first = events.front().clock;
  for (const Event& event : events) {
    if (event.clock != first) return "mixed";
  }
  return ClockKindName(first);
}

}  // namespace

void WriteChromeTrace(std::ostream& out, const Plan& plan, const Topology& topology,
                      std::span<const Event> events, const TraceInfo& info) {
  const RunIndex index = IndexRun(plan, events);
  const int num_ranks = static_cast<int>(index.lanes_of_rank.size());
  const int links_pid = Pid(num_ranks);

  JsonWriter w(out);
  w.BeginObject();
  // displayTimeUnit must come before the events: Perfetto reads it only there.
  w.Field("displayTimeUnit", "ns");
  w.Key("traceEvents");
  w.BeginArray();
  out << '\n';

  for (int rank = 0; rank < num_ranks; ++rank) {
    std::string process = ProcessName(rank, info);
    if (static_cast<std::size_t>(rank) < info.rank_labels.size()) process += " " + info.rank_labels[rank];
    WriteMetadata(w, out, "process_name", Pid(rank), kNoTid, "name", process);
    WriteSortIndex(w, out, "process_sort_index", Pid(rank), kNoTid, rank);
    for (int lane = 0; lane < kLaneCount; ++lane) {
      if (((index.lanes_of_rank[rank] >> lane) & 1) == 0) continue;
      WriteMetadata(w, out, "thread_name", Pid(rank), Tid(rank, lane), "name",
                    LaneName(static_cast<Lane>(lane)));
      WriteSortIndex(w, out, "thread_sort_index", Pid(rank), Tid(rank, lane), lane);
    }
  }

  // The simulator's host lane is its model's issues, on its clock.
  WriteHostLane(w, out, plan, info.host_lane, num_ranks,
                BackendTraitsOrDefault(info.backend).host_lane_clock());

  std::int64_t flows = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& event = events[i];
    if (event.rank < 0) continue;  // no track to put it on
    WriteSlice(w, out, plan, index.OpOf(plan, event), event);
    WriteFlowIfComplete(w, out, plan, events, index, i, &flows);
  }

  const LinkLoadStats links =
      WriteLinkCounters(w, out, plan, topology, events, info, index, links_pid);
  std::string links_note;
  if (links.counters < links.directions_with_traffic) {
    links_note = "link load shown for the busiest " + std::to_string(links.counters) + " of " +
                 std::to_string(links.directions_with_traffic) + " link directions";
  }
  if (links.counters > 0) {
    WriteMetadata(w, out, "process_name", links_pid, kNoTid, "name", "Links");
    WriteSortIndex(w, out, "process_sort_index", links_pid, kNoTid, num_ranks);
    if (!links_note.empty()) {
      WriteMetadata(w, out, "process_labels", links_pid, kNoTid, "labels", links_note);
    }
  }
  w.EndArray();

  // Last: a reader that does not know this key stops here, after the events.
  w.Key("otherData");
  w.BeginObject();
  w.Field("title", info.title);
  w.Field("backend", info.backend);
  w.Field("plan", plan.name);
  w.Field("topology", topology.name);
  w.Field("ranks", plan.num_ranks);
  w.Field("steps", plan.num_steps);
  w.Field("ops", static_cast<std::int64_t>(plan.ops.size()));
  w.Field("events", static_cast<std::int64_t>(events.size()));
  w.Field("flows", flows);
  w.Field("clock", RunClock(events));
  w.Field("time_unit", "ts and dur in microseconds");
  w.Field("link_directions_with_traffic", links.directions_with_traffic);
  w.Field("link_counters", links.counters);
  if (!links_note.empty()) w.Field("link_counters_note", links_note);
  if (links.transfers_without_route > 0) {
    w.Field("transfers_without_route", links.transfers_without_route);
  }
  // The machine itself, as a topology file: the app rebuilds the same
  // topology view from the trace alone, on a laptop that never saw the
  // cluster's topology file (engine/io/trace_reader.h).
  w.Field("topology_file", WriteTopologyText(topology));
  if (info.machine) {
    w.Key("machine");
    WriteMachineRecord(w, *info.machine);
  }
  if (!info.plan_settings.empty()) w.Field("plan_settings", info.plan_settings);
  w.EndObject();
  w.EndObject();
  out << '\n';
}

void WriteChromeTraceFile(const std::string& path, const Plan& plan, const Topology& topology,
                          std::span<const Event> events, const TraceInfo& info) {
  const std::string tmp = path + ".tmp";
  auto fail = [&](const std::string& what, int err) {
    std::remove(tmp.c_str());
    return Error(path + ": " + what + ": " + std::strerror(err), ErrorKind::kRuntime);
  };

  {
    // A large buffer: the writer makes many small writes.
    auto buffer = std::make_unique<char[]>(1 << 20);
    std::ofstream out;
    out.rdbuf()->pubsetbuf(buffer.get(), 1 << 20);
    errno = 0;
    out.open(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw fail("cannot open " + tmp + " for writing", errno != 0 ? errno : EIO);
    try {
      WriteChromeTrace(out, plan, topology, events, info);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    errno = 0;
    out.flush();
    out.close();
    if (!out) throw fail("cannot write trace", errno != 0 ? errno : EIO);
  }
  errno = 0;
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw fail("cannot rename " + tmp + " into place", errno != 0 ? errno : EIO);
  }
}

}  // namespace shardlab
