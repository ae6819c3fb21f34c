// DeviceApi: the stream-and-event calls a GPU backend makes, one method
// each, so that the order of enqueues, waits and synchronizations can be
// checked without a GPU. The CUDA backend implements it with the runtime
// (cuda_backend.cpp); host-only tests implement it with a counting fake.
//
//   PlanEnqueuer (plan_enqueuer.h)            DeviceApi            CUDA
//   ─────────────────────────────             ─────────            ──────────────────────
//   a new clock segment                       StartClock           origin event per GPU
//   op start / end, dependency event          RecordEvent          cudaEventRecord(WithFlags)
//   "after op d" on another stream            WaitEvent            cudaStreamWaitEvent
//   the op's own work                         LaunchWork           kernels, cuBLAS, memcpy
//   one NCCL group                            LaunchCollective     ncclGroupStart ... End
//   the whole plan, once                      BeginCapture         cudaStreamBeginCapture + fork
//                                             EndCapture           join + EndCapture + Instantiate
//   every repeated run                        LaunchGraph          cudaGraphLaunch
//   op start / end inside a graph             RecordStamp          a one-thread kernel writing
//                                                                  %globaltimer (HasStamps)
//   reading the times                         SynchronizeEvent     cudaEventSynchronize
//                                             EventTimeNs          cudaEventElapsedTime, or the
//                                                                  stamp less the origin's
//
// Streams and events are small integers that the backend maps to its
// handles: stream rank * kLaneCount + lane; events as EventIds says.
#pragma once

#include <cstdint>
#include <span>

#include "engine/core/units.h"
#include "engine/core/op_kinds.h"
#include "engine/plan/plan.h"

namespace shardlab::device {

using StreamId = std::int32_t;
using EventId = std::int32_t;

/// The stream of a rank's lane.
inline StreamId StreamOf(int rank, Lane lane) {
  return rank * kLaneCount + static_cast<int>(lane);
}
inline int RankOfStream(StreamId stream) { return stream / kLaneCount; }

/// The events of a plan of `ops` ops: op i's start and end (timed), and its
/// dependency event (recorded while capturing a graph, where a timed
/// event is an external record node and cannot order other streams).
struct EventIds {
  std::int32_t ops = 0;
  EventId Start(OpId op) const { return 2 * op; }
  EventId End(OpId op) const { return 2 * op + 1; }
  EventId Dependency(OpId op) const { return 2 * ops + op; }
  std::int32_t count() const { return 3 * ops; }
  /// The op an event belongs to.
  OpId OpOf(EventId event) const { return event < 2 * ops ? event / 2 : event - 2 * ops; }
  bool IsTiming(EventId event) const { return event < 2 * ops; }
};

class DeviceApi {
 public:
  virtual ~DeviceApi() = default;
  /// Starts a clock segment: waits until every GPU is idle, then records
  /// each GPU's origin. EventTimeNs and HostNowNs count from here.
  virtual void StartClock() = 0;
  /// Records `event` on `stream`. While capturing, a timing event becomes
  /// an external record node of the graph (so it still reads a time).
  virtual void RecordEvent(EventId event, StreamId stream, bool timing) = 0;
  /// True when the backend can time ops inside a graph with stamps: an
  /// event record node in a CUDA graph costs about 2 us and serialises the
  /// graph's streams (bench/results/2026-11-26-h200-graph-timing/), a
  /// timestamp kernel costs a launch. While capturing, the enqueuer then
  /// calls RecordStamp where it would record a timing event.
  virtual bool HasStamps() const { return false; }
  /// Writes the device's clock into `event`'s slot on `stream`; EventTimeNs
  /// reads it like an event once the graph has run.
  virtual void RecordStamp(EventId event, StreamId stream) { RecordEvent(event, stream, true); }
  /// `stream` waits until `event` (recorded earlier) has happened.
  virtual void WaitEvent(StreamId stream, EventId event) = 0;
  /// The work of one unit on `stream`: a local op's kernels, copy or
  /// reduction, or for a Send the whole transfer into its Recv.
  virtual void LaunchWork(OpId unit, StreamId stream) = 0;
  /// The ranks' parts of one collective, as one library call group.
  virtual void LaunchCollective(std::span<const OpId> parts) = 0;
  /// Starts capturing every stream in `streams` (the first is the origin).
  virtual void BeginCapture(std::span<const StreamId> streams) = 0;
  /// Ends the capture and instantiates the graph.
  virtual void EndCapture() = 0;
  /// Ends a capture that failed half way, dropping what was captured.
  virtual void AbortCapture() = 0;
  /// Runs the instantiated graph once.
  virtual void LaunchGraph() = 0;
  /// Blocks the host until `event` has happened.
  virtual void SynchronizeEvent(EventId event) = 0;
  /// Blocks the host until every GPU is idle.
  virtual void SynchronizeAll() = 0;
  /// When a timed event happened, in ns since this segment's origin.
  virtual TimeNs EventTimeNs(EventId event) = 0;
  /// The host's clock, in ns since this segment's origin.
  virtual TimeNs HostNowNs() = 0;
};

}  // namespace shardlab::device
