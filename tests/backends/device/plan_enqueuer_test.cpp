// How the CUDA backend issues a plan, checked without a GPU: a counting
// DeviceApi stands in for the runtime (no CUDA is linked), and a small
// Backend drives PlanEnqueuer under the real Executor, as the CUDA backend
// does. What it shows: a run (Executor::RunToEnd) issues every op before
// its first wait; the whole plan is captured as a graph once and replayed
// for later runs; step mode enqueues a step's ops together, waits between
// steps and does not count the host's time between them; the host lane
// has one span per enqueued unit.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/pipeline.h"
#include "engine/backends/device/plan_enqueuer.h"
#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

using device::EventId;
using device::StreamId;

enum class Call {
  kStartClock, kRecord, kWait, kWork, kCollective, kBeginCapture, kEndCapture, kAbortCapture,
  kLaunchGraph, kSyncEvent, kSyncAll, kStamp,
};

struct Logged {
  Call call;
  std::int32_t a = -1;  // event, unit or stream
  std::int32_t b = -1;  // stream
};

// Counts every call; a recorded event "happens" at the host tick of its
// record (1 us apart), or, in a replayed graph, at the tick of the launch
// plus its position in the capture. Host time advances 1 us per call.
class CountingDevice final : public device::DeviceApi {
 public:
  std::vector<Logged> log;
  bool fail_next_capture = false;
  bool stamps = false;  // HasStamps: a graph's ops are timed by stamps

  bool HasStamps() const override { return stamps; }
  void RecordStamp(EventId event, StreamId stream) override {
    log.push_back({Call::kStamp, event, stream});
    EXPECT_TRUE(capturing_) << "a stamp outside a graph";
    captured_times_[event] = static_cast<TimeNs>(captured_times_.size() + 1) * 1000;
  }

  void StartClock() override {
    log.push_back({Call::kStartClock});
    origin_ = now_;
  }
  void RecordEvent(EventId event, StreamId stream, bool timing) override {
    log.push_back({Call::kRecord, event, stream});
    if (capturing_) {
      captured_times_[event] = static_cast<TimeNs>(captured_times_.size() + 1) * 1000;
    } else {
      time_[event] = Tick();
    }
    (void)timing;
  }
  void WaitEvent(StreamId stream, EventId event) override {
    log.push_back({Call::kWait, event, stream});
    Tick();
  }
  void LaunchWork(OpId unit, StreamId stream) override {
    if (capturing_ && fail_next_capture) {
      fail_next_capture = false;
      throw Error("cudaStreamBeginCapture: operation not permitted when stream is capturing");
    }
    log.push_back({Call::kWork, unit, stream});
    Tick();
  }
  void LaunchCollective(std::span<const OpId> parts) override {
    log.push_back({Call::kCollective, static_cast<std::int32_t>(parts.size())});
    Tick();
  }
  void BeginCapture(std::span<const StreamId> streams) override {
    log.push_back({Call::kBeginCapture, static_cast<std::int32_t>(streams.size())});
    capturing_ = true;
    captured_times_.clear();
  }
  void EndCapture() override {
    log.push_back({Call::kEndCapture});
    capturing_ = false;
  }
  void AbortCapture() override {
    log.push_back({Call::kAbortCapture});
    capturing_ = false;
    captured_times_.clear();
  }
  void LaunchGraph() override {
    log.push_back({Call::kLaunchGraph});
    const TimeNs at = Tick();
    for (const auto& [event, t] : captured_times_) time_[event] = at + t;
  }
  void SynchronizeEvent(EventId event) override {
    log.push_back({Call::kSyncEvent, event});
    EXPECT_TRUE(time_.count(event)) << "waited on event " << event << " never recorded";
    // The host waits: its clock passes the event.
    if (time_.count(event)) now_ = std::max(now_, time_[event]);
  }
  void SynchronizeAll() override { log.push_back({Call::kSyncAll}); }
  TimeNs EventTimeNs(EventId event) override {
    EXPECT_TRUE(time_.count(event)) << "event " << event << " read but never recorded";
    return time_[event] - origin_;
  }
  TimeNs HostNowNs() override { return now_ - origin_; }

  // The host is busy 5 us between runs or steps (reading buffers, a click).
  void HostIdle() { now_ += 5000; }

  std::size_t Count(Call c) const {
    return static_cast<std::size_t>(
        std::count_if(log.begin(), log.end(), [&](const Logged& l) { return l.call == c; }));
  }
  std::size_t First(Call c) const {
    for (std::size_t i = 0; i < log.size(); ++i)
      if (log[i].call == c) return i;
    return log.size();
  }
  std::size_t Last(Call c) const {
    for (std::size_t i = log.size(); i-- > 0;)
      if (log[i].call == c) return i;
    return log.size();
  }

 private:
  TimeNs Tick() {
    now_ += 1000;
    return now_;
  }
  bool capturing_ = false;
  TimeNs now_ = 0;
  TimeNs origin_ = 0;
  std::map<EventId, TimeNs> time_;
  std::map<EventId, TimeNs> captured_times_;
};

// The CUDA backend's shape without CUDA: PlanEnqueuer over the fake.
class FakeDeviceBackend final : public Backend {
 public:
  FakeDeviceBackend(CountingDevice* device, bool use_graph) : device_(device), use_graph_(use_graph) {}
  std::string name() const override { return "fake-device"; }
  void Load(const Plan& plan, const Topology&, const RunOptions&) override {
    enqueuer_.Load(plan, use_graph_);
  }
  void RunThroughStep(int last_step, EventSink& sink, const std::atomic<bool>& cancel) override {
    enqueuer_.RunThroughStep(last_step, *device_, sink, cancel, ClockKind::kCudaEvent);
  }
  void Reset() override {
    device_->SynchronizeAll();
    device_->HostIdle();
    enqueuer_.Reset();
  }
  std::span<const float> BufferData(BufferId) const override { return {}; }
  std::size_t completed_ops() const override { return enqueuer_.completed_ops(); }
  const device::PlanEnqueuer& enqueuer() const { return enqueuer_; }

 private:
  CountingDevice* device_;
  bool use_graph_;
  device::PlanEnqueuer enqueuer_;
};

Plan RingPlan(int ranks = 4, std::int64_t count = 64) {
  CollectiveParams p;
  p.ranks = ranks;
  p.count = count;
  return BuildCollective(p);
}

struct FakeRun {
  CountingDevice device;
  FakeDeviceBackend* backend = nullptr;
  std::unique_ptr<Executor> executor;
  FakeRun(Plan plan, bool use_graph) {
    auto b = std::make_unique<FakeDeviceBackend>(&device, use_graph);
    backend = b.get();
    executor = std::make_unique<Executor>(std::move(b), std::move(plan),
                                          MakeTopologyPreset("dgx-a100"));
  }
};

TEST(PlanEnqueuer, RunModeIssuesEveryOpBeforeItsFirstWait) {
  FakeRun run(RingPlan(), /*use_graph=*/false);
  VectorSink sink;
  run.executor->RunToEnd(sink);
  const Plan& plan = run.executor->plan();
  ASSERT_GT(plan.num_steps, 1);
  const CountingDevice& d = run.device;
  // One unit per op, a transfer counting once for its send and its recv.
  const std::size_t units = run.backend->enqueuer().order().size();
  EXPECT_EQ(d.Count(Call::kWork), units);
  EXPECT_LT(d.Last(Call::kWork), d.First(Call::kSyncEvent))
      << "an op was enqueued after the host first waited: the run syncs between steps";
  EXPECT_EQ(d.Count(Call::kStartClock), 1u) << "one clock for the whole run";
  EXPECT_EQ(d.Count(Call::kSyncAll), 0u);
  EXPECT_EQ(sink.events.size(), plan.ops.size());
  std::set<OpId> seen;
  for (const Event& e : sink.events) {
    EXPECT_TRUE(seen.insert(e.op).second) << "op " << e.op << " reported twice";
    EXPECT_LE(e.start_ns, e.end_ns);
    EXPECT_EQ(e.clock, ClockKind::kCudaEvent);
  }
  EXPECT_EQ(run.executor->state(), ExecutorState::kDone);
  EXPECT_EQ(run.executor->steps_done(), plan.num_steps);
}

TEST(PlanEnqueuer, WaitsOnlyAcrossStreamsAndNeverTwiceForOneEvent) {
  FakeRun run(RingPlan(8), false);
  VectorSink sink;
  run.executor->RunToEnd(sink);
  const device::EventIds& ids = run.backend->enqueuer().events();
  const Plan& plan = run.executor->plan();
  std::set<std::pair<EventId, StreamId>> waits;
  for (const Logged& l : run.device.log) {
    if (l.call != Call::kWait) continue;
    const Op& waited = plan.ops[static_cast<std::size_t>(ids.OpOf(l.a))];
    EXPECT_NE(device::StreamOf(waited.rank, waited.lane), l.b)
        << "a stream waits for an op it ran itself";
    EXPECT_TRUE(waits.insert({l.a, l.b}).second) << "event " << l.a << " waited twice on " << l.b;
  }
  EXPECT_FALSE(waits.empty());
}

TEST(PlanEnqueuer, TheGraphIsCapturedOnceAndReplayedForLaterRuns) {
  FakeRun run(RingPlan(), /*use_graph=*/true);
  const Plan& plan = run.executor->plan();
  const std::size_t units = run.backend->enqueuer().order().size();
  std::vector<TimeNs> spans;
  for (int iter = 0; iter < 3; ++iter) {
    if (iter > 0) run.executor->Reset();
    VectorSink sink;
    run.executor->RunToEnd(sink);
    ASSERT_EQ(sink.events.size(), plan.ops.size()) << "iteration " << iter;
    TimeNs end = 0;
    for (const Event& e : sink.events) end = std::max(end, e.end_ns);
    spans.push_back(end);
  }
  const CountingDevice& d = run.device;
  EXPECT_EQ(d.Count(Call::kBeginCapture), 1u);
  EXPECT_EQ(d.Count(Call::kEndCapture), 1u);
  EXPECT_EQ(d.Count(Call::kLaunchGraph), 3u);
  EXPECT_EQ(d.Count(Call::kWork), units) << "the ops were enqueued again instead of replayed";
  EXPECT_EQ(run.backend->enqueuer().graph_captures(), 1);
  EXPECT_EQ(run.backend->enqueuer().graph_launches(), 3);
  // Every launch comes before the first wait of its run, and the capture
  // before the first launch.
  EXPECT_LT(d.Last(Call::kEndCapture), d.First(Call::kLaunchGraph));
  EXPECT_LT(d.First(Call::kLaunchGraph), d.First(Call::kSyncEvent));
  // Replays time the same graph the same way, whenever the host launched it.
  EXPECT_EQ(spans[1], spans[2]);
  // One host span per run: the launch.
  EXPECT_EQ(run.backend->enqueuer().host_spans().size(), 1u);
  EXPECT_EQ(run.backend->enqueuer().host_spans()[0].unit, kNoOp);
}

// Inside a graph an event record node costs ~2 us and serialises the
// graph's streams: a device with stamps gets a stamp at each op's start and
// end instead, no timing event at all, and the times read back are the
// stamps (each op's end after its start, every op reported once).
TEST(PlanEnqueuer, AGraphIsTimedByStampsWhereTheDeviceHasThem) {
  FakeRun run(RingPlan(), /*use_graph=*/true);
  run.device.stamps = true;
  const Plan& plan = run.executor->plan();
  const std::size_t units = run.backend->enqueuer().order().size();
  VectorSink sink;
  run.executor->RunToEnd(sink);
  ASSERT_EQ(sink.events.size(), plan.ops.size());
  const CountingDevice& d = run.device;
  EXPECT_EQ(d.Count(Call::kStamp), 2 * units);
  const device::EventIds& ids = run.backend->enqueuer().events();
  for (const Logged& l : d.log) {
    if (l.call == Call::kRecord) {
      EXPECT_FALSE(ids.IsTiming(l.a)) << "timing event " << l.a;
    }
  }
  for (const Event& e : sink.events) EXPECT_GT(e.end_ns, e.start_ns) << "op " << e.op;
  // Without stamps the same capture records timing events.
  FakeRun events(RingPlan(), /*use_graph=*/true);
  VectorSink sink2;
  events.executor->RunToEnd(sink2);
  EXPECT_EQ(events.device.Count(Call::kStamp), 0u);
  std::size_t timing = 0;
  for (const Logged& l : events.device.log) timing += l.call == Call::kRecord && ids.IsTiming(l.a);
  EXPECT_EQ(timing, 2 * units);
}

TEST(PlanEnqueuer, WhileCapturingTimedEventsDoNotOrderStreams) {
  FakeRun run(RingPlan(), true);
  VectorSink sink;
  run.executor->RunToEnd(sink);
  const device::EventIds& ids = run.backend->enqueuer().events();
  const CountingDevice& d = run.device;
  const std::size_t begin = d.First(Call::kBeginCapture), end = d.First(Call::kEndCapture);
  std::size_t waits = 0;
  for (std::size_t i = begin; i < end; ++i) {
    if (d.log[i].call != Call::kWait) continue;
    ++waits;
    EXPECT_FALSE(ids.IsTiming(d.log[i].a)) << "a captured stream waits on a timing event";
  }
  EXPECT_GT(waits, 0u);
}

TEST(PlanEnqueuer, AFailedCaptureRunsEagerlyAndTriesOnceMore) {
  FakeRun run(RingPlan(), true);
  run.device.fail_next_capture = true;
  VectorSink first;
  run.executor->RunToEnd(first);
  EXPECT_EQ(first.events.size(), run.executor->plan().ops.size());
  EXPECT_EQ(run.device.Count(Call::kAbortCapture), 1u);
  EXPECT_EQ(run.device.Count(Call::kLaunchGraph), 0u);
  run.executor->Reset();
  VectorSink second;
  run.executor->RunToEnd(second);
  EXPECT_EQ(second.events.size(), run.executor->plan().ops.size());
  EXPECT_EQ(run.backend->enqueuer().graph_captures(), 1);
  EXPECT_EQ(run.device.Count(Call::kLaunchGraph), 1u);
}

TEST(PlanEnqueuer, StepModeEnqueuesAStepTogetherAndSkipsTheHostBetweenSteps) {
  FakeRun run(RingPlan(), true);
  const Plan& plan = run.executor->plan();
  VectorSink sink;
  std::vector<std::size_t> step_begin;
  while (true) {
    step_begin.push_back(run.device.log.size());
    run.device.HostIdle();  // the user looks at the buffers
    if (!run.executor->StepOnce(sink)) break;
  }
  const CountingDevice& d = run.device;
  EXPECT_EQ(d.Count(Call::kBeginCapture), 0u) << "a single step is not captured";
  EXPECT_EQ(d.Count(Call::kStartClock), static_cast<std::size_t>(plan.num_steps));
  // Within each step: every launch before the first wait.
  for (std::size_t s = 0; s + 1 < step_begin.size(); ++s) {
    std::size_t last_work = 0, first_sync = d.log.size();
    for (std::size_t i = step_begin[s]; i < step_begin[s + 1]; ++i) {
      if (d.log[i].call == Call::kWork) last_work = i;
      if (d.log[i].call == Call::kSyncEvent) first_sync = std::min(first_sync, i);
    }
    EXPECT_LT(last_work, first_sync) << "step " << s;
  }
  // Steps follow each other on the run's clock without the host's 5 us.
  TimeNs previous_end = 0;
  for (int step = 0; step < plan.num_steps; ++step) {
    TimeNs start = 1e18, end = 0;
    for (const Event& e : sink.events)
      if (e.step == step) {
        start = std::min(start, e.start_ns);
        end = std::max(end, e.end_ns);
      }
    EXPECT_GE(start, previous_end) << "step " << step;
    EXPECT_LT(start - previous_end, 5000.0) << "step " << step << " counts the host's idle time";
    previous_end = end;
  }
  EXPECT_EQ(sink.events.size(), plan.ops.size());
}

TEST(PlanEnqueuer, TheHostLaneHasOneSpanPerUnitInEnqueueOrder) {
  FakeRun run(RingPlan(), false);
  VectorSink sink;
  run.executor->RunToEnd(sink);
  const device::PlanEnqueuer& q = run.backend->enqueuer();
  const std::vector<device::HostSpan>& spans = q.host_spans();
  ASSERT_EQ(spans.size(), q.order().size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i].unit, q.order()[i]);
    EXPECT_LT(spans[i].start_ns, spans[i].end_ns);
    if (i > 0) {
      EXPECT_GE(spans[i].start_ns, spans[i - 1].end_ns);
    }
  }
}

TEST(PlanEnqueuer, LibraryCollectivesLaunchOnceAllPartsArriveAndAreNotCaptured) {
  CollectiveParams p;
  p.ranks = 4;
  p.count = 64;
  p.algo = CollectiveAlgo::kNccl;
  FakeRun run(BuildCollective(p), true);
  VectorSink sink;
  run.executor->RunToEnd(sink);
  EXPECT_EQ(run.device.Count(Call::kCollective), 1u);
  EXPECT_EQ(run.device.Count(Call::kBeginCapture), 0u);
  EXPECT_NE(run.backend->enqueuer().graph_note().find("no CUDA graph"), std::string::npos);
  EXPECT_EQ(sink.events.size(), run.executor->plan().ops.size());
}

TEST(PlanEnqueuer, APipelineRunsWholeAndEveryOpIsReportedOnce) {
  PipelineParams p;
  const PipelinePlan pipeline = BuildPipeline(p);
  FakeRun run(pipeline.plan, true);
  VectorSink sink;
  run.executor->RunToEnd(sink);
  EXPECT_EQ(sink.events.size(), run.executor->plan().ops.size());
  EXPECT_EQ(run.device.Count(Call::kLaunchGraph), 1u);
  EXPECT_LT(run.device.Last(Call::kLaunchGraph), run.device.First(Call::kSyncEvent));
}

}  // namespace
}  // namespace shardlab
