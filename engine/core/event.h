// Event: what a backend reports for one executed op. Plain data, copied
// through the lock-free EventQueue to the views and into trace files.
#pragma once

#include <cstdint>

#include "engine/core/units.h"
#include "engine/core/op_kinds.h"

namespace shardlab {

/// Which clock measured an event; views label simulated and emulated times.
enum class ClockKind : std::uint8_t {
  kSimulated, kCudaEvent, kHost, kEmulated,
  kHostMpiAligned,  // host clocks of several processes, shifted onto rank 0's
};

enum class EventStatus : std::uint8_t { kOk, kFailed, kCancelled };

struct Event {
  std::int32_t op = -1;          // OpId in the Plan
  std::int32_t rank = -1;
  std::int32_t peer = -1;        // other rank of a send/recv, else -1
  std::int32_t step = 0;         // logical algorithm step
  std::int32_t collective_seq = -1;  // which collective call the op belongs to
  Lane lane = Lane::kCompute;
  OpKind kind = OpKind::kCompute;
  ClockKind clock = ClockKind::kSimulated;
  EventStatus status = EventStatus::kOk;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  Bytes bytes = 0;

  TimeNs duration_ns() const { return end_ns - start_ns; }
};

const char* ClockKindName(ClockKind clock);

/// The host lane of a real run: the CPU's calls that enqueued one unit of
/// work (an op, or a Send with its Recv; kNoOp: one CUDA graph launch for
/// the whole plan), on the run's clock (ClockKind::kHost), by rank.
struct HostEnqueueSpan {
  std::int32_t unit = -1;
  std::int32_t rank = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
};

/// Receives events as ops finish. Implementations must be cheap: they run
/// on the executor's thread, inside the backend's loop.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const Event& event) = 0;
};

}  // namespace shardlab
