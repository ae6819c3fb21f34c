#include "engine/io/worker_protocol.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "engine/core/error.h"

namespace shardlab {
namespace {

constexpr std::uint8_t kMagic[3] = {'S', 'L', 'W'};

// Largest payload a record of `type` may have; 0 for an unknown type.
std::uint32_t MaxPayload(RecordType type) {
  constexpr std::uint32_t kString = 4 + kMaxRecordString;
  switch (type) {
    case RecordType::kHello: return 4 + kString + 4 + 4;
    case RecordType::kPlan: return kString + 4 + 4 + 8 + 4;
    case RecordType::kEvent: return kEventPayloadBytes;
    case RecordType::kBufferSnapshot: return 4 + 4 + 4 + 4 * kMaxSnapshotFloats;
    case RecordType::kStepDone: return 4;
    case RecordType::kRunsDone: return 4;
    case RecordType::kRunDone: return 4 + 8 * 5 + 1 + 1 + 8 + 8 + 8 + kString + 4 + 4 + 8 * kMaxTimedRuns;
    case RecordType::kError: return 1 + 4 + kString;
    case RecordType::kScenario: return 4 + kMaxScenarioText + 4 + kMaxScenarioParams * 2 * (4 + kMaxScenarioText);
    case RecordType::kStep: return 4;
    case RecordType::kPlay:
    case RecordType::kPause:
    case RecordType::kCancel:
    case RecordType::kQuit: return 0;
  }
  return 0;
}

bool KnownType(std::uint16_t value) {
  switch (static_cast<RecordType>(value)) {
    case RecordType::kHello:
    case RecordType::kPlan:
    case RecordType::kEvent:
    case RecordType::kBufferSnapshot:
    case RecordType::kStepDone:
    case RecordType::kRunsDone:
    case RecordType::kRunDone:
    case RecordType::kError:
    case RecordType::kScenario:
    case RecordType::kStep:
    case RecordType::kPlay:
    case RecordType::kPause:
    case RecordType::kCancel:
    case RecordType::kQuit: return true;
  }
  return false;
}

// --- Writing ----------------------------------------------------------------

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  void U8(std::uint8_t v) { out_.push_back(v); }
  void U16(std::uint16_t v) { Raw(v, 2); }
  void U32(std::uint32_t v) { Raw(v, 4); }
  void I32(std::int32_t v) { Raw(static_cast<std::uint32_t>(v), 4); }
  void I64(std::int64_t v) { Raw(static_cast<std::uint64_t>(v), 8); }
  void F64(double v) { Raw(std::bit_cast<std::uint64_t>(v), 8); }
  void F32(float v) { Raw(std::bit_cast<std::uint32_t>(v), 4); }
  void String(const std::string& s) {
    const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::size_t>(s.size(), kMaxRecordString));
    U32(n);
    out_.insert(out_.end(), s.begin(), s.begin() + n);
  }

 private:
  void Raw(std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>& out_;
};

void EncodePayload(const WorkerRecord& r, Writer& w) {
  switch (r.type) {
    case RecordType::kHello:
      w.U32(r.hello.protocol_version);
      w.String(r.hello.backend);
      w.I32(r.hello.ranks);
      w.I32(r.hello.processes);
      return;
    case RecordType::kPlan:
      w.String(r.plan.name);
      w.I32(r.plan.ranks);
      w.I32(r.plan.steps);
      w.I64(r.plan.ops);
      w.I32(r.plan.buffers);
      return;
    case RecordType::kEvent: {
      const Event& e = r.event;
      w.I32(e.op);
      w.I32(e.rank);
      w.I32(e.peer);
      w.I32(e.step);
      w.I32(e.collective_seq);
      w.U8(static_cast<std::uint8_t>(e.lane));
      w.U8(static_cast<std::uint8_t>(e.kind));
      w.U8(static_cast<std::uint8_t>(e.clock));
      w.U8(static_cast<std::uint8_t>(e.status));
      w.F64(e.start_ns);
      w.F64(e.end_ns);
      w.I64(e.bytes);
      return;
    }
    case RecordType::kBufferSnapshot:
      if (r.snapshot.values.size() > kMaxSnapshotFloats) {
        throw Error("worker protocol: buffer " + std::to_string(r.snapshot.buffer) + " has " +
                        std::to_string(r.snapshot.values.size()) + " floats, above the " +
                        std::to_string(kMaxSnapshotFloats) + " a snapshot record holds",
                    ErrorKind::kRuntime);
      }
      w.I32(r.snapshot.step);
      w.I32(r.snapshot.buffer);
      w.U32(static_cast<std::uint32_t>(r.snapshot.values.size()));
      for (float v : r.snapshot.values) w.F32(v);
      return;
    case RecordType::kStepDone:
    case RecordType::kRunsDone:
    case RecordType::kStep:
      w.I32(r.step);
      return;
    case RecordType::kRunDone: {
      const RunDoneRecord& d = r.done;
      w.I32(d.steps);
      w.I64(d.events);
      w.I64(d.size_bytes);
      w.F64(d.time_ns);
      w.F64(d.algbw_gbps);
      w.F64(d.busbw_gbps);
      w.U8(d.checked ? 1 : 0);
      w.U8(d.correct ? 1 : 0);
      w.F64(d.max_abs_err);
      w.I64(d.wrong);
      w.I64(d.elements_checked);
      w.String(d.not_checked_reason);
      // The spans last: the decoder checks their count against the bytes left.
      if (d.spans_ns.empty() || d.spans_ns.size() > kMaxTimedRuns) {
        throw Error("worker protocol: a run-done record carries 1 to " + std::to_string(kMaxTimedRuns) +
                        " timed runs, not " + std::to_string(d.spans_ns.size()),
                    ErrorKind::kRuntime);
      }
      w.I32(d.warmup);
      w.U32(static_cast<std::uint32_t>(d.spans_ns.size()));
      for (TimeNs span : d.spans_ns) w.F64(span);
      return;
    }
    case RecordType::kError:
      w.U8(static_cast<std::uint8_t>(r.error.kind));
      w.I32(r.error.code);
      w.String(r.error.message);
      return;
    case RecordType::kScenario: {
      // Settings must arrive whole: a cut value would run another scenario.
      const ScenarioRecord& s = r.scenario;
      auto check = [](const std::string& text, const char* what) {
        if (text.size() > kMaxScenarioText) {
          throw Error(std::string("worker protocol: scenario ") + what + " of " + std::to_string(text.size()) +
                          " bytes exceeds " + std::to_string(kMaxScenarioText),
                      ErrorKind::kRuntime);
        }
      };
      check(s.scenario, "name");
      if (s.params.size() > kMaxScenarioParams) {
        throw Error("worker protocol: " + std::to_string(s.params.size()) + " scenario parameters exceed " +
                        std::to_string(kMaxScenarioParams),
                    ErrorKind::kRuntime);
      }
      w.String(s.scenario);
      w.U32(static_cast<std::uint32_t>(s.params.size()));
      for (const auto& [name, value] : s.params) {
        check(name, "parameter name");
        check(value, "value");
        w.String(name);
        w.String(value);
      }
      return;
    }
    case RecordType::kPlay:
    case RecordType::kPause:
    case RecordType::kCancel:
    case RecordType::kQuit: return;
  }
  throw Error("worker protocol: cannot encode record type " +
                  std::to_string(static_cast<int>(r.type)),
              ErrorKind::kRuntime);
}

// --- Reading ----------------------------------------------------------------

// Reads a payload front to back; any read past its end sets failed().
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::uint8_t U8() { return static_cast<std::uint8_t>(Raw(1)); }
  std::uint16_t U16() { return static_cast<std::uint16_t>(Raw(2)); }
  std::uint32_t U32() { return static_cast<std::uint32_t>(Raw(4)); }
  std::int32_t I32() { return static_cast<std::int32_t>(U32()); }
  std::int64_t I64() { return static_cast<std::int64_t>(Raw(8)); }
  double F64() { return std::bit_cast<double>(Raw(8)); }
  float F32() { return std::bit_cast<float>(U32()); }
  std::string String(const char* field) {
    const std::uint32_t n = U32();
    if (failed_) return {};
    if (n > kMaxRecordString) {
      Fail(std::string(field) + ": string of " + std::to_string(n) + " bytes exceeds " +
           std::to_string(kMaxRecordString));
      return {};
    }
    if (n > left()) {
      Fail(std::string(field) + ": string of " + std::to_string(n) + " bytes runs past the payload");
      return {};
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + at_), n);
    at_ += n;
    return s;
  }
  std::size_t left() const { return bytes_.size() - at_; }
  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }
  void Fail(const std::string& why) {
    if (!failed_) error_ = why;
    failed_ = true;
  }

 private:
  std::uint64_t Raw(int bytes) {
    if (failed_) return 0;
    if (left() < static_cast<std::size_t>(bytes)) {
      Fail("payload ends early");
      return 0;
    }
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t{bytes_[at_ + i]} << (8 * i);
    at_ += static_cast<std::size_t>(bytes);
    return v;
  }
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
  bool failed_ = false;
  std::string error_;
};

void DecodeEvent(Reader& r, Event& e) {
  e.op = r.I32();
  e.rank = r.I32();
  e.peer = r.I32();
  e.step = r.I32();
  e.collective_seq = r.I32();
  const std::uint8_t lane = r.U8();
  const std::uint8_t kind = r.U8();
  const std::uint8_t clock = r.U8();
  const std::uint8_t status = r.U8();
  e.start_ns = r.F64();
  e.end_ns = r.F64();
  e.bytes = r.I64();
  if (r.failed()) return;
  if (lane >= kLaneCount) return r.Fail("event lane " + std::to_string(lane) + " is no lane");
  if (kind > static_cast<std::uint8_t>(OpKind::kCollective)) {
    return r.Fail("event kind " + std::to_string(kind) + " is no op kind");
  }
  if (clock > static_cast<std::uint8_t>(ClockKind::kHostMpiAligned)) {
    return r.Fail("event clock " + std::to_string(clock) + " is no clock");
  }
  if (status > static_cast<std::uint8_t>(EventStatus::kCancelled)) {
    return r.Fail("event status " + std::to_string(status) + " is no status");
  }
  if (!std::isfinite(e.start_ns) || !std::isfinite(e.end_ns)) {
    return r.Fail("event times are not finite");
  }
  e.lane = static_cast<Lane>(lane);
  e.kind = static_cast<OpKind>(kind);
  e.clock = static_cast<ClockKind>(clock);
  e.status = static_cast<EventStatus>(status);
}

void DecodePayload(Reader& r, WorkerRecord& out) {
  switch (out.type) {
    case RecordType::kHello:
      out.hello.protocol_version = r.U32();
      out.hello.backend = r.String("hello.backend");
      out.hello.ranks = r.I32();
      out.hello.processes = r.I32();
      return;
    case RecordType::kPlan:
      out.plan.name = r.String("plan.name");
      out.plan.ranks = r.I32();
      out.plan.steps = r.I32();
      out.plan.ops = r.I64();
      out.plan.buffers = r.I32();
      return;
    case RecordType::kEvent: DecodeEvent(r, out.event); return;
    case RecordType::kBufferSnapshot: {
      out.snapshot.step = r.I32();
      out.snapshot.buffer = r.I32();
      const std::uint32_t count = r.U32();
      if (r.failed()) return;
      if (count > kMaxSnapshotFloats) {
        return r.Fail("snapshot of " + std::to_string(count) + " floats exceeds " +
                      std::to_string(kMaxSnapshotFloats));
      }
      if (std::size_t{count} * 4 != r.left()) {
        return r.Fail("snapshot says " + std::to_string(count) + " floats but carries " +
                      std::to_string(r.left()) + " bytes");
      }
      out.snapshot.values.resize(count);
      for (float& v : out.snapshot.values) v = r.F32();
      return;
    }
    case RecordType::kStepDone:
    case RecordType::kRunsDone:
    case RecordType::kStep:
      out.step = r.I32();
      if (!r.failed() && out.step < 0) r.Fail("step " + std::to_string(out.step) + " is negative");
      if (!r.failed() && out.type == RecordType::kRunsDone && out.step == 0) {
        r.Fail("runs done 0: the record comes after a run");
      }
      return;
    case RecordType::kRunDone: {
      RunDoneRecord& d = out.done;
      d.steps = r.I32();
      d.events = r.I64();
      d.size_bytes = r.I64();
      d.time_ns = r.F64();
      d.algbw_gbps = r.F64();
      d.busbw_gbps = r.F64();
      d.checked = r.U8() != 0;
      d.correct = r.U8() != 0;
      d.max_abs_err = r.F64();
      d.wrong = r.I64();
      d.elements_checked = r.I64();
      d.not_checked_reason = r.String("run_done.not_checked_reason");
      d.warmup = r.I32();
      const std::uint32_t count = r.U32();
      if (r.failed()) return;
      if (d.warmup < 0) return r.Fail("warm-up count " + std::to_string(d.warmup) + " is negative");
      if (count < 1 || count > kMaxTimedRuns) {
        return r.Fail(std::to_string(count) + " timed runs (a run has 1 to " + std::to_string(kMaxTimedRuns) + ")");
      }
      if (std::size_t{count} * 8 != r.left()) {
        return r.Fail("says " + std::to_string(count) + " timed runs but carries " + std::to_string(r.left()) +
                      " bytes of spans");
      }
      d.spans_ns.resize(count);
      for (TimeNs& span : d.spans_ns) {
        span = r.F64();
        if (!std::isfinite(span) || span < 0) return r.Fail("a timed run's span is not a finite time >= 0");
      }
      return;
    }
    case RecordType::kError: {
      const std::uint8_t kind = r.U8();
      out.error.code = r.I32();
      out.error.message = r.String("error.message");
      if (r.failed()) return;
      if (kind > static_cast<std::uint8_t>(WorkerErrorKind::kProtocol)) {
        return r.Fail("error kind " + std::to_string(kind) + " is no kind");
      }
      out.error.kind = static_cast<WorkerErrorKind>(kind);
      return;
    }
    case RecordType::kScenario: {
      out.scenario.scenario = r.String("scenario.name");
      const std::uint32_t count = r.U32();
      if (r.failed()) return;
      if (count > kMaxScenarioParams) {
        return r.Fail(std::to_string(count) + " parameters exceed " + std::to_string(kMaxScenarioParams));
      }
      // Each pair takes at least 8 bytes: a count the payload cannot hold
      // is refused before anything is reserved.
      if (std::size_t{count} * 8 > r.left()) {
        return r.Fail(std::to_string(count) + " parameters cannot fit in " + std::to_string(r.left()) + " bytes");
      }
      out.scenario.params.reserve(count);
      for (std::uint32_t i = 0; i < count && !r.failed(); ++i) {
        std::string name = r.String("scenario.param");
        std::string value = r.String("scenario.value");
        out.scenario.params.emplace_back(std::move(name), std::move(value));
      }
      return;
    }
    case RecordType::kPlay:
    case RecordType::kPause:
    case RecordType::kCancel:
    case RecordType::kQuit: return;
  }
}

}  // namespace

const char* RecordTypeName(RecordType type) {
  switch (type) {
    case RecordType::kHello: return "hello";
    case RecordType::kPlan: return "plan";
    case RecordType::kEvent: return "event";
    case RecordType::kBufferSnapshot: return "buffer snapshot";
    case RecordType::kStepDone: return "step done";
    case RecordType::kRunsDone: return "runs done";
    case RecordType::kRunDone: return "run done";
    case RecordType::kError: return "error";
    case RecordType::kScenario: return "scenario";
    case RecordType::kStep: return "step";
    case RecordType::kPlay: return "play";
    case RecordType::kPause: return "pause";
    case RecordType::kCancel: return "cancel";
    case RecordType::kQuit: return "quit";
  }
  return "unknown";
}

const char* WorkerErrorKindName(WorkerErrorKind kind) {
  switch (kind) {
    case WorkerErrorKind::kEngine: return "engine error";
    case WorkerErrorKind::kStickyCuda: return "sticky CUDA error";
    case WorkerErrorKind::kSignal: return "killed by a signal";
    case WorkerErrorKind::kExit: return "exited early";
    case WorkerErrorKind::kRankLost: return "MPI rank lost";
    case WorkerErrorKind::kTimeout: return "not answering";
    case WorkerErrorKind::kCancelled: return "cancelled";
    case WorkerErrorKind::kProtocol: return "protocol error";
  }
  return "unknown";
}

std::string ScenarioRecordMismatch(const ScenarioRecord& sent, const ScenarioRecord& echoed) {
  if (sent.scenario != echoed.scenario) {
    return "scenario " + echoed.scenario + " where " + sent.scenario + " was asked";
  }
  std::string differences;
  // Plain loops: a lambda may not capture a structured binding before C++20
  // (clang, which builds the fuzz targets, refuses it).
  for (const auto& asked_param : sent.params) {
    const std::string& name = asked_param.first;
    const std::string& value = asked_param.second;
    const auto it = std::find_if(echoed.params.begin(), echoed.params.end(),
                                 [&name](const auto& p) { return p.first == name; });
    const std::string got = it == echoed.params.end() ? "(missing)" : it->second;
    if (got != value) differences += (differences.empty() ? "" : ", ") + name + " = " + got + " where " + value + " was asked";
  }
  for (const auto& echoed_param : echoed.params) {
    const std::string& name = echoed_param.first;
    const bool asked = std::any_of(sent.params.begin(), sent.params.end(),
                                   [&name](const auto& p) { return p.first == name; });
    if (!asked) differences += (differences.empty() ? "" : ", ") + name + " = " + echoed_param.second + " (not asked)";
  }
  return differences;
}

WorkerRecord MakeCommand(RecordType type, std::int32_t steps) {
  WorkerRecord r;
  r.type = type;
  r.step = steps;
  return r;
}

void EncodeRecord(const WorkerRecord& record, std::vector<std::uint8_t>& out) {
  const std::size_t header_at = out.size();
  Writer w(out);
  w.U8(kMagic[0]);
  w.U8(kMagic[1]);
  w.U8(kMagic[2]);
  w.U8(kWorkerProtocolVersion);
  w.U16(static_cast<std::uint16_t>(record.type));
  w.U16(0);
  w.U32(0);  // length, patched below
  try {
    EncodePayload(record, w);
  } catch (...) {
    out.resize(header_at);
    throw;
  }
  const std::size_t length = out.size() - header_at - kRecordHeaderBytes;
  for (int i = 0; i < 4; ++i) {
    out[header_at + 8 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(length >> (8 * i));
  }
}

DecodeResult DecodeRecord(std::span<const std::uint8_t> bytes, WorkerRecord* out) {
  DecodeResult result;
  auto bad = [&](std::string why) {
    result.status = DecodeStatus::kBad;
    result.error = std::move(why);
    return result;
  };
  // Check each header byte as soon as it is there: garbage is rejected
  // without waiting for a full header.
  for (std::size_t i = 0; i < 3 && i < bytes.size(); ++i) {
    if (bytes[i] != kMagic[i]) {
      return bad("not a ShardLab worker record (bad magic byte " + std::to_string(bytes[i]) +
                 " at offset " + std::to_string(i) + ")");
    }
  }
  if (bytes.size() > 3 && bytes[3] != kWorkerProtocolVersion) {
    return bad("worker protocol version " + std::to_string(bytes[3]) + ", this app speaks " +
               std::to_string(kWorkerProtocolVersion) + " (rebuild the worker and the app together)");
  }
  if (bytes.size() < kRecordHeaderBytes) return result;  // kNeedMore
  const std::uint16_t type = static_cast<std::uint16_t>(bytes[4] | (bytes[5] << 8));
  const std::uint16_t reserved = static_cast<std::uint16_t>(bytes[6] | (bytes[7] << 8));
  std::uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= std::uint32_t{bytes[8 + static_cast<std::size_t>(i)]} << (8 * i);
  if (!KnownType(type)) return bad("unknown record type " + std::to_string(type));
  if (reserved != 0) return bad("reserved header field is " + std::to_string(reserved) + ", not 0");
  const RecordType record_type = static_cast<RecordType>(type);
  const std::uint32_t cap = MaxPayload(record_type);
  if (length > cap) {
    return bad(std::string(RecordTypeName(record_type)) + " record of " + std::to_string(length) +
               " bytes exceeds its limit of " + std::to_string(cap));
  }
  if (record_type == RecordType::kEvent && length != kEventPayloadBytes) {
    return bad("event record of " + std::to_string(length) + " bytes, not " +
               std::to_string(kEventPayloadBytes));
  }
  if (bytes.size() - kRecordHeaderBytes < length) return result;  // kNeedMore

  WorkerRecord record;
  record.type = record_type;
  Reader reader(bytes.subspan(kRecordHeaderBytes, length));
  DecodePayload(reader, record);
  if (!reader.failed() && reader.left() != 0) {
    reader.Fail(std::to_string(reader.left()) + " bytes left over");
  }
  if (reader.failed()) {
    return bad(std::string(RecordTypeName(record_type)) + " record: " + reader.error());
  }
  *out = std::move(record);
  result.status = DecodeStatus::kRecord;
  result.consumed = kRecordHeaderBytes + length;
  return result;
}

void RecordReader::Feed(std::span<const std::uint8_t> bytes) {
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  } else if (start_ > (1u << 16) && start_ * 2 > buffer_.size()) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

DecodeStatus RecordReader::Next(WorkerRecord* out) {
  if (!error_.empty()) return DecodeStatus::kBad;
  const DecodeResult r =
      DecodeRecord(std::span<const std::uint8_t>(buffer_).subspan(start_), out);
  if (r.status == DecodeStatus::kBad) {
    error_ = r.error;
  } else if (r.status == DecodeStatus::kRecord) {
    start_ += r.consumed;
  }
  return r.status;
}

std::string RecordReader::EndOfStreamError() const {
  if (!error_.empty()) return error_;
  if (buffered() == 0) return "";
  return "the stream ended inside a record (" + std::to_string(buffered()) + " bytes of it)";
}

}  // namespace shardlab
