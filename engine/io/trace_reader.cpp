#include "engine/io/trace_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/topology/presets.h"
#include "engine/topology/topology_file.h"

namespace shardlab {
namespace {

// The writer's track numbering (trace_writer.cpp): pid = rank + 1,
// tid = kTidBase + rank * kTidsPerRank + lane.
constexpr std::int64_t kTidBase = 1'000'000;
constexpr std::int64_t kTidsPerRank = 10;

constexpr const char* kNotOurs =
    "not a ShardLab trace: ShardLab opens the traces it writes ('shardlab-cli run --trace', the "
    "app's Export); ";

template <typename Enum, typename NameFn>
bool EnumFromName(const std::string& text, int count, NameFn name, Enum* out) {
  for (int i = 0; i < count; ++i) {
    if (text == name(static_cast<Enum>(i))) {
      *out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}

// One slice's numbers, checked: integral and in range.
class SliceReader {
 public:
  SliceReader(const JsonValue& slice, const JsonParser& parser, std::size_t offset)
      : slice_(slice), parser_(parser), offset_(offset) {}

  const JsonValue* Arg(const char* key) const {
    const JsonValue* args = slice_.Find("args");
    return args != nullptr ? args->Find(key) : nullptr;
  }
  double Number(const JsonValue* value, const char* field) const {
    if (value == nullptr || !value->is_number()) throw Fail(std::string(field) + ": missing or not a number");
    return value->number;
  }
  std::int64_t Integer(const JsonValue* value, const char* field, std::int64_t min, std::int64_t max) const {
    const double v = Number(value, field);
    if (v != std::floor(v) || v < static_cast<double>(min) || v > static_cast<double>(max)) {
      throw Fail(std::string(field) + ": " + FormatNumber(v) + " is not a whole number in " +
                 std::to_string(min) + ".." + std::to_string(max));
    }
    return static_cast<std::int64_t>(v);
  }
  std::int64_t OptionalInteger(const char* key, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
    const JsonValue* v = Arg(key);
    return v == nullptr ? fallback : Integer(v, (std::string("args.") + key).c_str(), min, max);
  }
  std::string OptionalString(const char* key) const {
    const JsonValue* v = Arg(key);
    if (v == nullptr) return "";
    if (!v->is_string()) throw Fail(std::string("args.") + key + ": not a string");
    return v->string;
  }
  Error Fail(const std::string& message) const { return parser_.ErrorAt(offset_, message); }

 private:
  static std::string FormatNumber(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }
  const JsonValue& slice_;
  const JsonParser& parser_;
  std::size_t offset_;
};

// The op kind of a slice the writer named before it wrote args.kind.
OpKind KindFromSliceName(const std::string& name, Lane lane) {
  auto starts = [&](const char* word) { return name.rfind(word, 0) == 0; };
  if (starts("send")) return OpKind::kSend;
  if (starts("recv")) return OpKind::kRecv;
  if (starts("reduce")) return OpKind::kReduce;
  if (starts("copy")) return OpKind::kCopy;
  if (starts("collective")) return OpKind::kCollective;
  return lane == Lane::kSend ? OpKind::kSend : lane == Lane::kRecv ? OpKind::kRecv : OpKind::kCompute;
}

void AddSlice(const JsonValue& slice, const JsonParser& parser, std::size_t offset, LoadedTrace& trace) {
  SliceReader r(slice, parser, offset);
  const std::int64_t pid = r.Integer(slice.Find("pid"), "pid", 1, kMaxTraceRanks);
  const std::int64_t tid = r.Integer(slice.Find("tid"), "tid", 0, INT64_MAX / 2);
  const int rank = static_cast<int>(pid - 1);
  const std::int64_t lane_number = tid - kTidBase - rank * kTidsPerRank;
  if (lane_number < 0 || lane_number >= kLaneCount) {
    throw r.Fail(std::string(kNotOurs) + "tid " + std::to_string(tid) + " is no lane of rank " +
                 std::to_string(rank));
  }
  const double ts_us = r.Number(slice.Find("ts"), "ts");
  const double dur_us = r.Number(slice.Find("dur"), "dur");
  if (dur_us < 0) throw r.Fail("dur: negative");

  Event event;
  event.rank = rank;
  event.lane = static_cast<Lane>(lane_number);
  event.start_ns = ts_us * 1000.0;
  event.end_ns = (ts_us + dur_us) * 1000.0;
  event.bytes = r.OptionalInteger("bytes", 0, 0, INT64_MAX / 2);
  event.step = static_cast<std::int32_t>(r.OptionalInteger("step", 0, 0, kMaxTraceSteps - 1));
  event.collective_seq = static_cast<std::int32_t>(r.OptionalInteger("seq", -1, -1, INT32_MAX));
  event.peer = static_cast<std::int32_t>(r.OptionalInteger("peer", -1, -1, kMaxTraceRanks - 1));
  const std::int32_t written_op = static_cast<std::int32_t>(r.OptionalInteger("op", -1, -1, INT32_MAX));

  const JsonValue* name_value = slice.Find("name");
  const std::string name = name_value != nullptr && name_value->is_string() ? name_value->string : "";
  const std::string kind = r.OptionalString("kind");
  if (kind.empty()) {
    event.kind = KindFromSliceName(name, event.lane);
  } else if (!EnumFromName(kind, static_cast<int>(OpKind::kCollective) + 1, OpKindName, &event.kind)) {
    throw r.Fail("args.kind: unknown op kind '" + kind + "'");
  }
  const std::string clock = r.OptionalString("clock");
  if (!clock.empty() &&
      !EnumFromName(clock, static_cast<int>(ClockKind::kHostMpiAligned) + 1, ClockKindName, &event.clock)) {
    throw r.Fail("args.clock: unknown clock '" + clock + "'");
  }
  const std::string status = r.OptionalString("status");
  if (status == "failed") {
    event.status = EventStatus::kFailed;
  } else if (status == "cancelled") {
    event.status = EventStatus::kCancelled;
  } else if (!status.empty() && status != "ok") {
    throw r.Fail("args.status: unknown status '" + status + "'");
  }

  Op op;
  op.kind = event.kind;
  op.lane = event.lane;
  op.rank = event.rank;
  op.peer = event.peer;
  op.step = event.step;
  op.collective_seq = event.collective_seq;
  op.bytes = event.bytes;
  const JsonValue* flops = r.Arg("flops");
  if (flops != nullptr) op.flops = std::max(r.Number(flops, "args.flops"), 0.0);
  op.tags.chunk = static_cast<std::int32_t>(r.OptionalInteger("chunk", -1, -1, INT32_MAX));
  op.tags.microbatch = static_cast<std::int32_t>(r.OptionalInteger("microbatch", -1, -1, INT32_MAX));
  op.tags.layer = static_cast<std::int32_t>(r.OptionalInteger("layer", -1, -1, INT32_MAX));
  const std::string reduce = r.OptionalString("reduce");
  if (!reduce.empty() &&
      !EnumFromName(reduce, static_cast<int>(ReduceOp::kMin) + 1, ReduceOpName, &op.reduce)) {
    throw r.Fail("args.reduce: unknown reduction '" + reduce + "'");
  }
  const JsonValue* category = slice.Find("cat");
  if (category != nullptr && category->is_string() && category->string != "op") {
    Phase phase = Phase::kNone;
    if (EnumFromName(category->string, static_cast<int>(Phase::kCombine) + 1, PhaseName, &phase)) {
      op.tags.phase = phase;
    }
  }

  // The note of the collective call, as the writer left it on each of its
  // slices: the labels (op_label.h) of the ops read back are those written.
  const std::string call = r.OptionalString("call");
  if (!call.empty() && op.collective_seq >= 0) {
    const std::size_t seq = static_cast<std::size_t>(op.collective_seq);
    if (seq >= trace.plan.collectives.size()) {
      if (seq >= kMaxTraceCalls) {
        throw r.Fail("args.seq: " + std::to_string(seq) + " is past the " + std::to_string(kMaxTraceCalls) +
                     " named calls a trace may hold");
      }
      trace.plan.collectives.resize(seq + 1);
    }
    CollectiveNote& note = trace.plan.collectives[seq];
    if (note.tag.empty()) {
      note.tag = call;
      note.what = r.OptionalString("call_what");
      note.two_passes = r.OptionalInteger("call_passes", 1, 1, 2) == 2;
    }
  }

  event.op = static_cast<std::int32_t>(trace.events.size());
  trace.events.push_back(event);
  trace.original_op.push_back(written_op);
  trace.plan.ops.push_back(op);
}

// A host lane slice (the writer's WriteHostLane): on rank's host thread,
// the last tid of the rank. unit holds the written op id until the events
// are all read.
void AddHostSlice(const JsonValue& slice, const JsonParser& parser, std::size_t offset, LoadedTrace& trace) {
  SliceReader r(slice, parser, offset);
  const std::int64_t pid = r.Integer(slice.Find("pid"), "pid", 1, kMaxTraceRanks);
  const std::int64_t tid = r.Integer(slice.Find("tid"), "tid", 0, INT64_MAX / 2);
  const int rank = static_cast<int>(pid - 1);
  if (tid != kTidBase + rank * kTidsPerRank + kTidsPerRank - 1) {
    throw r.Fail(std::string(kNotOurs) + "host slice on tid " + std::to_string(tid) +
                 ", not the host thread of rank " + std::to_string(rank));
  }
  const double ts_us = r.Number(slice.Find("ts"), "ts");
  const double dur_us = r.Number(slice.Find("dur"), "dur");
  if (dur_us < 0) throw r.Fail("dur: negative");
  HostEnqueueSpan span;
  span.rank = rank;
  span.unit = static_cast<std::int32_t>(r.OptionalInteger("op", -1, -1, INT32_MAX));
  span.start_ns = ts_us * 1000.0;
  span.end_ns = (ts_us + dur_us) * 1000.0;
  const std::string clock = r.OptionalString("clock");
  ClockKind kind = ClockKind::kHost;
  if (!clock.empty() &&
      !EnumFromName(clock, static_cast<int>(ClockKind::kHostMpiAligned) + 1, ClockKindName, &kind)) {
    throw r.Fail("args.clock: unknown clock '" + clock + "'");
  }
  const std::string name = ClockKindName(kind);
  if (trace.host_clock.empty()) trace.host_clock = name;
  else if (trace.host_clock != name) trace.host_clock = "mixed";
  const JsonValue* name_value = slice.Find("name");
  trace.host_names.push_back(name_value != nullptr && name_value->is_string() ? name_value->string : "");
  trace.host_lane.push_back(span);
}

// Host spans name the op they issued by its written id: make it the index
// of that op's event (its send's, for a transfer), or -1.
void ResolveHostUnits(LoadedTrace& trace) {
  std::unordered_map<std::int32_t, std::int32_t> event_of;
  for (std::size_t i = 0; i < trace.original_op.size(); ++i) {
    if (trace.original_op[i] >= 0) event_of.emplace(trace.original_op[i], static_cast<std::int32_t>(i));
  }
  for (HostEnqueueSpan& span : trace.host_lane) {
    if (span.unit < 0) continue;
    auto it = event_of.find(span.unit);
    span.unit = it == event_of.end() ? -1 : it->second;
  }
}

std::string StringField(const JsonValue& other, const char* key) {
  const JsonValue* v = other.Find(key);
  return v != nullptr && v->is_string() ? v->string : "";
}

int IntField(const JsonValue& other, const char* key, int max, const std::string& source) {
  const JsonValue* v = other.Find(key);
  if (v == nullptr) return 0;
  if (!v->is_number() || v->number != std::floor(v->number) || v->number < 0 || v->number > max) {
    throw Error(source + ": otherData." + key + ": not a whole number in 0.." + std::to_string(max));
  }
  return static_cast<int>(v->number);
}

}  // namespace

LoadedTrace ReadChromeTrace(std::string_view text, const std::string& source) {
  LoadedTrace trace;
  trace.source = source;
  JsonParser parser(text, source, JsonLimits{kMaxTraceFileBytes, 32, std::size_t{4} << 20,
                                             std::size_t{1} << 28});
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw Error(source + ": the file is empty");
  }
  bool saw_events = false;
  JsonValue other;
  std::string key;
  parser.BeginObject();
  while (parser.NextMember(&key)) {
    if (key == "traceEvents") {
      saw_events = true;
      parser.BeginArray();
      while (parser.NextElement()) {
        // Read one event at a time: a big trace never becomes one big tree.
        const std::size_t offset = parser.NextOffset();
        const JsonValue slice = parser.ParseValue();
        if (!slice.is_object()) throw parser.ErrorAt(offset, "a trace event must be an object");
        const JsonValue* ph = slice.Find("ph");
        if (ph == nullptr || !ph->is_string()) throw parser.ErrorAt(offset, "ph: missing or not a string");
        if (ph->string != "X") continue;  // metadata, flows, counters: the views derive them
        const JsonValue* cat = slice.Find("cat");
        if (cat != nullptr && cat->is_string() && cat->string == "host") {
          AddHostSlice(slice, parser, offset, trace);  // the host lane, beside the events
          continue;
        }
        AddSlice(slice, parser, offset, trace);
      }
    } else if (key == "otherData") {
      other = parser.ParseValue();
    } else {
      parser.SkipValue();
    }
  }
  parser.ExpectEnd();

  if (!saw_events) throw Error(source + ": " + kNotOurs + "it has no traceEvents array");
  if (!other.is_object() || other.Find("plan") == nullptr || other.Find("ranks") == nullptr ||
      other.Find("steps") == nullptr) {
    throw Error(source + ": " + kNotOurs +
                "its otherData does not name the plan, ranks and steps ShardLab records");
  }
  trace.title = StringField(other, "title");
  trace.backend = StringField(other, "backend");
  trace.clock = StringField(other, "clock");
  trace.plan.name = StringField(other, "plan");
  int ranks = IntField(other, "ranks", kMaxTraceRanks, source);
  int steps = IntField(other, "steps", kMaxTraceSteps, source);
  for (const Event& e : trace.events) {
    ranks = std::max({ranks, e.rank + 1, e.peer + 1});
    steps = std::max(steps, e.step + 1);
  }
  trace.plan.num_ranks = ranks;
  trace.plan.num_steps = steps;
  ResolveHostUnits(trace);

  const std::string topology_text = StringField(other, "topology_file");
  const std::string topology_name = StringField(other, "topology");
  if (!topology_text.empty()) {
    trace.topology = ParseTopologyText(topology_text, source + " (otherData.topology_file)");
  } else {
    try {
      trace.topology = MakeTopologyPreset(topology_name);
      trace.topology_note = "the trace names topology '" + topology_name +
                            "' without embedding it: shown as the preset of that name";
    } catch (const Error&) {
      throw Error(source + ": the trace names topology '" + topology_name +
                  "', which it does not embed and which is no preset; record it again with this "
                  "version of ShardLab, which embeds the topology");
    }
  }
  trace.plan_settings = StringField(other, "plan_settings");
  if (const JsonValue* machine = other.Find("machine"); machine != nullptr) {
    trace.machine = ReadMachineRecord(*machine, source + ": otherData.machine");
    const MachineRecord& m = *trace.machine;
    if (!m.rank_to_gpu.empty() && static_cast<int>(m.rank_to_gpu.size()) < ranks) {
      throw Error(source + ": otherData.machine.placement: places " + std::to_string(m.rank_to_gpu.size()) +
                  " ranks but the trace has " + std::to_string(ranks));
    }
  }
  const bool placed = trace.machine && !trace.machine->rank_to_gpu.empty() &&
                      trace.machine->gpus <= trace.topology.num_gpus();
  if (trace.topology.num_gpus() < ranks && !placed) {
    throw Error(source + ": the trace has " + std::to_string(ranks) + " ranks but its topology '" +
                trace.topology.name + "' only " + std::to_string(trace.topology.num_gpus()) + " GPUs");
  }
  return trace;
}

LoadedTrace ReadChromeTraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno), ErrorKind::kInvalidInput);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(path + ": cannot read its size (a directory?)");
  if (static_cast<std::uint64_t>(size) > kMaxTraceFileBytes) {
    throw Error(path + ": " + std::to_string(size) + " bytes is larger than the " +
                std::to_string(kMaxTraceFileBytes) + " a trace may have");
  }
  in.seekg(0);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (size > 0 && !in.read(text.data(), size)) {
    throw Error(path + ": cannot read: " + std::strerror(errno));
  }
  return ReadChromeTrace(text, path);
}

}  // namespace shardlab
