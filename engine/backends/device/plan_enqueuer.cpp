#include "engine/backends/device/plan_enqueuer.h"

#include <algorithm>
#include <queue>
#include <tuple>

#include "engine/core/error.h"
#include "engine/plan/op_graph.h"
#include "engine/plan/validate.h"

namespace shardlab::device {

void PlanEnqueuer::Load(const Plan& plan, bool use_graph) {
  plan_ = &plan;
  ids_.ops = static_cast<std::int32_t>(plan.ops.size());
  captured_ = false;
  captures_ = 0;
  launches_ = 0;
  capture_failures_ = 0;
  collective_size_.clear();
  for (const Op& op : plan.ops)
    if (op.kind == OpKind::kCollective) ++collective_size_[op.collective_seq];
  use_graph_ = use_graph && collective_size_.empty();
  graph_note_ = use_graph && !collective_size_.empty()
                    ? "no CUDA graph: library collectives are launched as the ranks' parts arrive"
                    : "";

  // Topological order over the op graph (explicit deps + lane order), a
  // Send and its Recv as one unit once both are ready, lowest step first.
  const OpGraph graph = BuildOpGraph(plan);
  std::vector<std::int32_t> pending = graph.pred_count;
  const std::size_t n = plan.ops.size();
  std::vector<char> ready(n, 0);
  using Key = std::tuple<int, OpId>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> queue;
  auto mark_ready = [&](OpId id) {
    ready[static_cast<std::size_t>(id)] = 1;
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv) {
      queue.emplace(op.step, id);
    } else if (ready[static_cast<std::size_t>(op.match)]) {
      const OpId send = op.kind == OpKind::kSend ? id : op.match;
      queue.emplace(op.step, send);
    }
  };
  for (OpId id = 0; id < static_cast<OpId>(n); ++id)
    if (pending[static_cast<std::size_t>(id)] == 0) mark_ready(id);
  order_.clear();
  std::size_t finished = 0;
  auto finish = [&](OpId id) {
    ++finished;
    for (const OpId* w = graph.successors_begin(id); w != graph.successors_end(id); ++w)
      if (--pending[static_cast<std::size_t>(*w)] == 0) mark_ready(*w);
  };
  while (!queue.empty()) {
    const OpId id = std::get<1>(queue.top());
    queue.pop();
    order_.push_back(id);
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    finish(id);
    if (op.kind == OpKind::kSend) finish(op.match);
  }
  if (finished != n) throw Error("plan deadlocks (the device backend could not order its ops)");

  // Streams in first-use order: the first unit's stream is a graph's origin.
  std::vector<char> used(static_cast<std::size_t>(plan.num_ranks) * kLaneCount, 0);
  streams_.clear();
  auto use = [&](StreamId s) {
    if (!used[static_cast<std::size_t>(s)]) {
      used[static_cast<std::size_t>(s)] = 1;
      streams_.push_back(s);
    }
  };
  for (OpId id : order_) {
    const Op& op = plan.ops[static_cast<std::size_t>(id)];
    if (op.kind == OpKind::kSend) {
      const Op& recv = plan.ops[static_cast<std::size_t>(op.match)];
      use(StreamOf(recv.rank, recv.lane));
      use(StreamOf(op.rank, op.lane));
    } else {
      use(StreamOf(op.rank, op.lane));
    }
  }
  Reset();
}

void PlanEnqueuer::Reset() {
  const Plan& plan = *plan_;
  cursor_ = 0;
  completed_ = 0;
  enqueued_.assign(plan.ops.size(), 0);
  last_on_lane_.assign(static_cast<std::size_t>(plan.num_ranks) * kLaneCount, kNoOp);
  remaining_per_step_.assign(static_cast<std::size_t>(std::max(plan.num_steps, 0)), 0);
  for (const Op& op : plan.ops) ++remaining_per_step_[static_cast<std::size_t>(op.step)];
  lowest_open_step_ = 0;
  AdvanceOpenStep();
  waiting_collective_.clear();
  segment_base_ns_ = 0;
  reported_end_ns_ = 0;
  host_spans_.clear();
  capturing_ = false;
}

bool PlanEnqueuer::OpenStepAtMost(int last_step) const {
  return lowest_open_step_ <= std::min(last_step, plan_->num_steps - 1);
}

void PlanEnqueuer::AdvanceOpenStep() {
  while (lowest_open_step_ < static_cast<int>(remaining_per_step_.size()) &&
         remaining_per_step_[static_cast<std::size_t>(lowest_open_step_)] == 0)
    ++lowest_open_step_;
}

StreamId PlanEnqueuer::StreamOfTimed(OpId timed) const {
  const Op& op = plan_->ops[static_cast<std::size_t>(timed)];
  return StreamOf(op.rank, op.lane);
}

void PlanEnqueuer::WaitFor(DeviceApi& device, StreamId stream, OpId dep,
                           std::vector<EventId>& waited) {
  if (dep == kNoOp) return;
  const Op& d = plan_->ops[static_cast<std::size_t>(dep)];
  if (!enqueued_[static_cast<std::size_t>(dep)])
    throw Error(DescribeOp(*plan_, dep) + ": needed before every rank joined collective #" +
                std::to_string(d.collective_seq) + " (NCCL launches all ranks' parts together)");
  const OpId timed = d.kind == OpKind::kSend ? d.match : dep;
  // Ran on this stream already: the stream's order is the wait.
  if (StreamOfTimed(timed) == stream) return;
  const EventId event = capturing_ ? ids_.Dependency(timed) : ids_.End(timed);
  if (std::find(waited.begin(), waited.end(), event) != waited.end()) return;
  waited.push_back(event);
  device.WaitEvent(stream, event);
}

void PlanEnqueuer::EnqueueUnit(DeviceApi& device, OpId id) {
  const Op& op = plan_->ops[static_cast<std::size_t>(id)];
  HostSpan span;
  span.unit = id;
  span.rank = op.kind == OpKind::kSend ? plan_->ops[static_cast<std::size_t>(op.match)].rank : op.rank;
  span.start_ns = segment_base_ns_ + device.HostNowNs();
  if (op.kind == OpKind::kSend) {
    EnqueueTransfer(device, id);
  } else {
    EnqueueLocal(device, id);
  }
  span.end_ns = segment_base_ns_ + device.HostNowNs();
  if (!capturing_) host_spans_.push_back(span);
}

void PlanEnqueuer::EnqueueLocal(DeviceApi& device, OpId id) {
  const Op& op = plan_->ops[static_cast<std::size_t>(id)];
  const StreamId stream = StreamOf(op.rank, op.lane);
  std::vector<EventId> waited;
  for (const OpId* d = plan_->deps_begin(op); d != plan_->deps_end(op); ++d)
    WaitFor(device, stream, *d, waited);
  Time(device, ids_.Start(id), stream);
  if (op.kind == OpKind::kCollective) {
    DeferCollective(device, id);
    return;
  }
  device.LaunchWork(id, stream);
  Time(device, ids_.End(id), stream);
  if (capturing_) device.RecordEvent(ids_.Dependency(id), stream, false);
  Mark(id);
}

// A collective op's start is recorded; the library call waits until every
// rank's op of the same collective_seq has arrived, then all go as one group.
void PlanEnqueuer::DeferCollective(DeviceApi& device, OpId id) {
  const Op& op = plan_->ops[static_cast<std::size_t>(id)];
  std::vector<OpId>& parts = waiting_collective_[op.collective_seq];
  parts.push_back(id);
  if (static_cast<int>(parts.size()) < collective_size_[op.collective_seq]) return;
  device.LaunchCollective(parts);
  for (OpId part : parts) {
    const Op& o = plan_->ops[static_cast<std::size_t>(part)];
    device.RecordEvent(ids_.End(part), StreamOf(o.rank, o.lane), true);
    Mark(part);
  }
  waiting_collective_.erase(op.collective_seq);
}

void PlanEnqueuer::EnqueueTransfer(DeviceApi& device, OpId send_id) {
  const Op& send = plan_->ops[static_cast<std::size_t>(send_id)];
  const OpId recv_id = send.match;
  const Op& recv = plan_->ops[static_cast<std::size_t>(recv_id)];
  const StreamId stream = StreamOf(recv.rank, recv.lane);
  std::vector<EventId> waited;
  for (const OpId* d = plan_->deps_begin(recv); d != plan_->deps_end(recv); ++d)
    WaitFor(device, stream, *d, waited);
  for (const OpId* d = plan_->deps_begin(send); d != plan_->deps_end(send); ++d)
    WaitFor(device, stream, *d, waited);
  // The send lane is an in-order queue too: after whatever it ran last.
  WaitFor(device, stream, last_on_lane_[static_cast<std::size_t>(StreamOf(send.rank, send.lane))],
          waited);
  Time(device, ids_.Start(recv_id), stream);
  device.LaunchWork(send_id, stream);
  Time(device, ids_.End(recv_id), stream);
  if (capturing_) device.RecordEvent(ids_.Dependency(recv_id), stream, false);
  // Later ops on the sender's send lane wait for this transfer.
  const StreamId send_stream = StreamOf(send.rank, send.lane);
  if (send_stream != stream)
    device.WaitEvent(send_stream, capturing_ ? ids_.Dependency(recv_id) : ids_.End(recv_id));
  Mark(send_id);
  Mark(recv_id);
}

// A timing point: a stamp inside a graph where the device has them (an
// event record node there costs ~2 us and orders the graph's streams),
// else a timed event.
void PlanEnqueuer::Time(DeviceApi& device, EventId event, StreamId stream) {
  if (capturing_ && device.HasStamps()) {
    device.RecordStamp(event, stream);
  } else {
    device.RecordEvent(event, stream, true);
  }
}

void PlanEnqueuer::Mark(OpId id) {
  const Op& op = plan_->ops[static_cast<std::size_t>(id)];
  enqueued_[static_cast<std::size_t>(id)] = 1;
  last_on_lane_[static_cast<std::size_t>(StreamOf(op.rank, op.lane))] = id;
  if (--remaining_per_step_[static_cast<std::size_t>(op.step)] == 0) AdvanceOpenStep();
}

void PlanEnqueuer::EnqueueAll(DeviceApi& device) {
  while (cursor_ < order_.size()) {
    EnqueueUnit(device, order_[cursor_]);
    ++cursor_;
  }
}

void PlanEnqueuer::RunThroughStep(int last_step, DeviceApi& device, EventSink& sink,
                                  const std::atomic<bool>& cancel, ClockKind transfer_clock) {
  const std::size_t first = cursor_;
  const bool whole_plan = cursor_ == 0 && last_step >= plan_->num_steps - 1 && !order_.empty();
  segment_base_ns_ = reported_end_ns_;

  if (whole_plan && use_graph_ && !captured_) {
    // Capture the whole plan once. A failed capture (a call the runtime
    // cannot capture) leaves the plan as it was; the run goes on eagerly,
    // and after two failures runs stop trying.
    capturing_ = true;
    try {
      device.BeginCapture(streams_);
      EnqueueAll(device);
      device.EndCapture();
      captured_ = true;
      ++captures_;
    } catch (const Error& e) {
      device.AbortCapture();
      if (++capture_failures_ >= 2) {
        use_graph_ = false;
        graph_note_ = std::string("no CUDA graph: capture failed (") + e.what() + ")";
      }
    }
    capturing_ = false;
    if (!captured_) Reset();
  }

  if (whole_plan && captured_) {
    // The graph holds every unit: the bookkeeping is that of a run enqueued.
    std::fill(enqueued_.begin(), enqueued_.end(), 1);
    std::fill(remaining_per_step_.begin(), remaining_per_step_.end(), 0);
    lowest_open_step_ = plan_->num_steps;
    cursor_ = order_.size();
    device.StartClock();
    HostSpan span;
    span.start_ns = segment_base_ns_ + device.HostNowNs();
    device.LaunchGraph();
    span.end_ns = segment_base_ns_ + device.HostNowNs();
    host_spans_.push_back(span);
    ++launches_;
    // Every node of the graph is in: wait for all of it before reading.
    device.SynchronizeAll();
  } else {
    device.StartClock();
    // Enqueue in topological order while an op of a step <= last_step is
    // left; nothing waits on the host until all of them are in.
    while (cursor_ < order_.size() && OpenStepAtMost(last_step)) {
      EnqueueUnit(device, order_[cursor_]);
      ++cursor_;
      if ((cursor_ & 255) == 0 && cancel.load(std::memory_order_relaxed)) break;
    }
  }
  // Report in enqueue order as each unit's end event completes.
  for (std::size_t i = first; i < cursor_; ++i) {
    if (cancel.load(std::memory_order_relaxed)) {
      device.SynchronizeAll();
      throw Error("run cancelled", ErrorKind::kCancelled);
    }
    Report(device, order_[i], sink, transfer_clock);
  }
  if (cancel.load(std::memory_order_relaxed)) {
    device.SynchronizeAll();
    throw Error("run cancelled", ErrorKind::kCancelled);
  }
}

void PlanEnqueuer::Report(DeviceApi& device, OpId unit, EventSink& sink, ClockKind transfer_clock) {
  const Op& op = plan_->ops[static_cast<std::size_t>(unit)];
  const bool transfer = op.kind == OpKind::kSend;
  const OpId timed = transfer ? op.match : unit;
  device.SynchronizeEvent(ids_.End(timed));
  const TimeNs start = segment_base_ns_ + device.EventTimeNs(ids_.Start(timed));
  const TimeNs end = std::max(start, segment_base_ns_ + device.EventTimeNs(ids_.End(timed)));
  reported_end_ns_ = std::max(reported_end_ns_, end);
  const ClockKind clock = transfer ? transfer_clock : ClockKind::kCudaEvent;
  auto emit = [&](OpId id) {
    const Op& o = plan_->ops[static_cast<std::size_t>(id)];
    Event e;
    e.op = id;
    e.rank = o.rank;
    e.peer = o.peer;
    e.step = o.step;
    e.collective_seq = o.collective_seq;
    e.lane = o.lane;
    e.kind = o.kind;
    e.clock = clock;
    e.start_ns = start;
    e.end_ns = end;
    e.bytes = o.bytes;
    sink.OnEvent(e);
    ++completed_;
  };
  if (transfer) emit(unit);  // the send, then its recv, as the simulator does
  emit(timed);
}

}  // namespace shardlab::device
