// Worker protocol: the records a worker process (`shardlab-cli worker ...`)
// and the app exchange over a pair of pipes.
//
//   app ──stdin──►  worker     commands: step k, play, pause, cancel, quit
//   app ◄─stdout──  worker     hello, scenario, plan, runs done, event, buffer
//                              snapshot, step done, run done, error   (logs go to stderr)
//
// "Runs done" comes once after each warm-up or timed run before the one
// streamed (-w/-n): long warm-ups are not silence, and the app can say
// where the worker is.
//
// The scenario record is the run's settings as the worker read them: the
// scenario's name and every parameter of its spec as name = value text
// (ScenarioParams::All; engine/scenarios/scenario_record.h), so no scenario
// needs a record of its own and the app can check that the worker runs
// what it asked for.
//
// Every record is a 12-byte header and a payload, all little-endian:
//
//   offset 0  u8[4]  magic "SLW" + protocol version (kWorkerProtocolVersion)
//          4  u16    record type (RecordType)
//          6  u16    reserved, 0
//          8  u32    payload length in bytes
//         12  ...    payload: fixed-size numbers, strings as u32 length + bytes
//
// The decoder trusts nothing: each type has its own payload cap (an event
// is exactly kEventPayloadBytes; a snapshot at most kMaxSnapshotFloats
// floats; a string at most kMaxRecordString bytes), and the payload must be
// consumed exactly. A header that fails is reported before any payload is
// awaited or allocated, so garbage never makes the reader wait for, or
// reserve, a gigabyte. DecodeRecord is a pure function over bytes (it is
// fuzzed); RecordReader only buffers a stream for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/event.h"
#include "engine/core/units.h"

namespace shardlab {

// 2: the scenario record; 3: the run-done record's warm-up count and timed spans
inline constexpr std::uint8_t kWorkerProtocolVersion = 3;
inline constexpr std::size_t kRecordHeaderBytes = 12;
inline constexpr std::size_t kEventPayloadBytes = 48;
inline constexpr std::uint32_t kMaxRecordString = 4096;
inline constexpr std::uint32_t kMaxSnapshotFloats = 1u << 20;  // 4 MiB of data per record
inline constexpr std::uint32_t kMaxScenarioParams = 256;     // name = value pairs per scenario record
inline constexpr std::uint32_t kMaxScenarioText = 256;       // bytes of one name or value
inline constexpr std::uint32_t kMaxTimedRuns = 1u << 20;      // spans of one run-done record (8 MiB)

enum class RecordType : std::uint16_t {
  // worker -> app
  kHello = 1,
  kPlan = 2,
  kEvent = 3,
  kBufferSnapshot = 4,
  kStepDone = 5,
  kRunDone = 6,
  kError = 7,
  kScenario = 8,
  kRunsDone = 9,  // step = runs finished before the streamed one (warm-up and timed)
  // app -> worker
  kStep = 16,
  kPlay = 17,
  kPause = 18,
  kCancel = 19,
  kQuit = 20,
};

/// "hello", "event", ... ; "unknown" for a number that is no type.
const char* RecordTypeName(RecordType type);

/// Why a worker stopped, as its error record (or the app, from waitpid) says.
enum class WorkerErrorKind : std::uint8_t {
  kEngine = 0,      // a shardlab::Error: bad scenario, failed backend call
  kStickyCuda = 1,  // a CUDA error that poisons the process (illegal address, launch failure)
  kSignal = 2,      // the process died of a signal
  kExit = 3,        // the process exited without finishing the run
  kRankLost = 4,    // an MPI rank died or never joined a collective
  kTimeout = 5,     // the worker stopped answering
  kCancelled = 6,   // the app asked it to stop
  kProtocol = 7,    // its output was no valid record stream
};
const char* WorkerErrorKindName(WorkerErrorKind kind);

struct HelloRecord {
  std::uint32_t protocol_version = kWorkerProtocolVersion;
  std::string backend;  // "sim", "cuda", "mpi"
  std::int32_t ranks = 0;
  std::int32_t processes = 1;  // > 1 under mpirun
};

/// What the app checks the plan it built against before showing events.
struct PlanRecord {
  std::string name;
  std::int32_t ranks = 0;
  std::int32_t steps = 0;
  std::int64_t ops = 0;
  std::int32_t buffers = 0;
};

/// One buffer's contents after `step` steps (step 0: the inputs).
struct BufferSnapshotRecord {
  std::int32_t step = 0;
  std::int32_t buffer = -1;
  std::vector<float> values;
};

/// The run's end: nccl-tests metrics and the check of the result, and its
/// iterations (engine/run/iterations.h): the streamed run is the last of
/// spans_ns; time_ns (and the bandwidths) are the spans' average, so that
/// SummarizeIterations({warmup, spans_ns.size()}, spans_ns) on the app's
/// side is what an in-process run of the same settings reports.
struct RunDoneRecord {
  std::int32_t steps = 0;
  std::int64_t events = 0;
  Bytes size_bytes = 0;
  TimeNs time_ns = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  bool checked = false;
  bool correct = false;
  double max_abs_err = 0;
  std::int64_t wrong = 0;
  std::int64_t elements_checked = 0;
  std::string not_checked_reason;
  std::int32_t warmup = 0;         // untimed runs before the timed ones (protocol 3)
  std::vector<TimeNs> spans_ns;    // every timed run's span, in order: 1 to kMaxTimedRuns
};

/// The run's settings: the scenario and its parameters, name = value, in
/// the spec's order (ScenarioParams::All).
struct ScenarioRecord {
  std::string scenario;  // "collective", "pipeline", ...
  std::vector<std::pair<std::string, std::string>> params;
  bool operator==(const ScenarioRecord&) const = default;
};

struct ErrorRecord {
  WorkerErrorKind kind = WorkerErrorKind::kEngine;
  std::int32_t code = 0;  // CUDA error number, signal, exit status; 0 when none
  std::string message;
};

/// One record of either direction; only the fields of `type` are meaningful.
struct WorkerRecord {
  RecordType type = RecordType::kHello;
  HelloRecord hello;
  PlanRecord plan;
  Event event;
  BufferSnapshotRecord snapshot;
  std::int32_t step = 0;  // kStepDone: steps done; kStep: steps to run (k >= 1); kRunsDone: runs done
  RunDoneRecord done;
  ErrorRecord error;
  ScenarioRecord scenario;
};

WorkerRecord MakeCommand(RecordType type, std::int32_t steps = 0);

/// Appends `record`'s bytes to `out`. Throws shardlab::Error when a field
/// exceeds what the decoder accepts (a string over kMaxRecordString is cut
/// instead: messages must always get through).
void EncodeRecord(const WorkerRecord& record, std::vector<std::uint8_t>& out);

// A scenario's parameters to and from a record, checked against its spec:
// ScenarioRecordOf, ParamsFromScenarioRecord (engine/scenarios/scenario_record.h).

/// "" when `echoed` (what a worker says it runs) is `sent` (what it was
/// asked to run), else what differs: "size = 64M where 16M was asked",
/// "scenario pipeline where collective was asked".
std::string ScenarioRecordMismatch(const ScenarioRecord& sent, const ScenarioRecord& echoed);

enum class DecodeStatus { kRecord, kNeedMore, kBad };

struct DecodeResult {
  DecodeStatus status = DecodeStatus::kNeedMore;
  std::size_t consumed = 0;  // bytes of the record (kRecord only)
  std::string error;         // kBad: what is wrong, with the offending value
};

/// Decodes the first record of `bytes` into `*out`. kNeedMore when the
/// bytes end inside a valid record; kBad as soon as what is there cannot
/// start a valid record. Never reads past `bytes`, never allocates more
/// than the payload it has actually been given.
DecodeResult DecodeRecord(std::span<const std::uint8_t> bytes, WorkerRecord* out);

/// Buffers a byte stream and hands out its records.
class RecordReader {
 public:
  void Feed(std::span<const std::uint8_t> bytes);
  /// kRecord (one record into *out), kNeedMore, or kBad (then error(); the
  /// stream is unusable from here on).
  DecodeStatus Next(WorkerRecord* out);
  /// After the stream ended: "" when it ended between records, else a
  /// message saying that it was cut inside one.
  std::string EndOfStreamError() const;
  const std::string& error() const { return error_; }
  std::size_t buffered() const { return buffer_.size() - start_; }

 private:
  std::vector<std::uint8_t> buffer_;
  std::size_t start_ = 0;
  std::string error_;
};

}  // namespace shardlab
