// PlanEnqueuer: how a stream-and-event backend issues a Plan, free of CUDA
// so that tests can count its calls (device_api.h).
//
//   run mode (one call for the whole plan, Executor::RunToEnd)
//     first run:   BeginCapture · every unit's waits, stamps, work · EndCapture
//                  StartClock · LaunchGraph · read every event
//     later runs:  StartClock · LaunchGraph · read every event   (the graph replays)
//     no graph:    StartClock · every unit enqueued · read every event
//   step mode (Executor::StepOnce): per step
//                  StartClock · the step's units enqueued together · read their events
//
// Nothing waits on the host before the last unit is enqueued; dependencies
// are events on the device. Each call to RunThroughStep is one clock
// segment that starts where the last one ended, so the host's time between
// steps (reading buffers, a user clicking Step) is not run time.
//
// A unit is one op, or a Send with its Recv (named by the send): the
// transfer runs on the receiver's recv stream, timed by the recv's events,
// and the sender's send lane waits for it. A wait on an op that ran on the
// same stream is left out (a stream is in order already), and so is a
// second wait on one event. The host's own time enqueueing each unit is
// kept as a HostSpan: the host lane of the timeline.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "engine/backends/device/device_api.h"
#include "engine/core/event.h"
#include "engine/plan/plan.h"

namespace shardlab::device {

/// The host's enqueue calls for one unit (kNoOp: one graph launch), on the
/// same clock as the device's events.
using HostSpan = HostEnqueueSpan;

class PlanEnqueuer {
 public:
  /// Orders the plan's units (throws shardlab::Error when they cannot be
  /// ordered). `use_graph`: capture a whole run once and replay it; plans
  /// with library collectives never do (NCCL's groups are enqueued as the
  /// ranks' parts arrive).
  void Load(const Plan& plan, bool use_graph);
  /// Back to the start of the plan; a captured graph is kept.
  void Reset();
  /// Enqueues every unit of a step <= last_step not enqueued yet (units of
  /// later steps that come earlier in the order go too), then reports each
  /// as its end event completes. `transfer_clock`: the clock of transfers
  /// (kEmulated under link emulation), kCudaEvent for the rest.
  void RunThroughStep(int last_step, DeviceApi& device, EventSink& sink,
                      const std::atomic<bool>& cancel, ClockKind transfer_clock);

  std::size_t completed_ops() const { return completed_; }
  const EventIds& events() const { return ids_; }
  /// Units in the order they are enqueued.
  const std::vector<OpId>& order() const { return order_; }
  /// The streams the plan uses (the first is a graph's origin).
  const std::vector<StreamId>& streams() const { return streams_; }
  /// The host lane since Load or Reset.
  const std::vector<HostSpan>& host_spans() const { return host_spans_; }
  int graph_captures() const { return captures_; }
  int graph_launches() const { return launches_; }
  /// Why runs do not use a graph ("" when they do, or may).
  const std::string& graph_note() const { return graph_note_; }

 private:
  StreamId StreamOfTimed(OpId timed) const;
  void WaitFor(DeviceApi& device, StreamId stream, OpId dep, std::vector<EventId>& waited);
  void EnqueueUnit(DeviceApi& device, OpId id);
  void EnqueueLocal(DeviceApi& device, OpId id);
  void EnqueueTransfer(DeviceApi& device, OpId send_id);
  void DeferCollective(DeviceApi& device, OpId id);
  void Mark(OpId id);
  void Time(DeviceApi& device, EventId event, StreamId stream);
  void AdvanceOpenStep();
  bool OpenStepAtMost(int last_step) const;
  void EnqueueAll(DeviceApi& device);
  void Report(DeviceApi& device, OpId unit, EventSink& sink, ClockKind transfer_clock);

  const Plan* plan_ = nullptr;
  EventIds ids_;
  std::vector<OpId> order_;
  std::vector<StreamId> streams_;
  bool use_graph_ = false;
  bool capturing_ = false;
  bool captured_ = false;
  int captures_ = 0;
  int launches_ = 0;
  int capture_failures_ = 0;
  std::string graph_note_;

  std::size_t cursor_ = 0;
  std::vector<char> enqueued_;
  std::vector<OpId> last_on_lane_;
  std::vector<std::int64_t> remaining_per_step_;
  int lowest_open_step_ = 0;
  std::size_t completed_ = 0;
  TimeNs segment_base_ns_ = 0;   // where this clock segment starts on the run's clock
  TimeNs reported_end_ns_ = 0;   // the latest end reported since Reset
  std::vector<HostSpan> host_spans_;
  std::map<int, int> collective_size_;                   // ops per collective_seq
  std::map<int, std::vector<OpId>> waiting_collective_;  // arrived, not launched
};

}  // namespace shardlab::device
