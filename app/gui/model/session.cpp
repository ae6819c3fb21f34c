// Session, the run controller: Start prepares one scenario through the
// registry (session_check.cpp), one run thread steps its Executor, Poll
// moves what it made to the UI thread, SummarizeScenario ends it. No
// scenario is named here: a scenario's own state travels in Prepared's and
// Summary's detail, for its views.
#include "app/gui/model/session.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "app/gui/model/scenario_fields.h"
#include "engine/core/backend_traits.h"
#include "engine/core/error.h"
#include "engine/plan/kernel.h"
#include "engine/run/faults.h"
#include "engine/run/vector_sink.h"

namespace shardlab::gui {
namespace {

/// GPU 0's float32 rate in TFLOP/s, 0 when the topology has no GPU figure.
double Fp32Tflops(const Topology& topology) {
  return topology.num_gpus() > 0
             ? topology.nodes[static_cast<std::size_t>(topology.gpus[0])].device.fp32_tflops
             : 0;
}

/// The floating-point work of the busiest rank's compute ops.
double BusiestRankFlops(const Plan& plan) {
  std::vector<double> flops(static_cast<std::size_t>(std::max(plan.num_ranks, 0)), 0.0);
  for (const Op& op : plan.ops) {
    if (op.kind != OpKind::kCompute || op.rank < 0 || op.rank >= plan.num_ranks) continue;
    for (int k = 0; k < op.kernel_count; ++k) {
      flops[static_cast<std::size_t>(op.rank)] +=
          KernelFlops(plan.kernels[static_cast<std::size_t>(op.kernel_begin + k)]);
    }
  }
  return flops.empty() ? 0 : *std::max_element(flops.begin(), flops.end());
}

TimeNs LastEventEnd(std::span<const Event> events) {
  TimeNs end = 0;
  for (const Event& e : events) end = std::max(end, e.end_ns);
  return end;
}

}  // namespace

Session::Session() = default;

Session::~Session() { Cancel(); }

int Session::num_steps() const {
  const Plan* p = plan();
  return p != nullptr ? p->num_steps : 0;
}

const Plan* Session::plan() const {
  if (prepared_) return &prepared_->plan;
  if (trace_) return &trace_->plan;
  return nullptr;
}

const Topology* Session::topology() const {
  if (prepared_) return &prepared_->topology;
  if (trace_) return &trace_->topology;
  return nullptr;
}

const Faults& Session::faults() const {
  static const Faults none;
  return prepared_ ? prepared_->options.faults : none;
}

std::string Session::backend() const {
  if (prepared_ && worker_run_) return worker_settings_.backend + " (worker process)";
  if (prepared_) return backend_;
  if (trace_) return trace_->backend;
  return "";
}

std::string Session::Title() const {
  if (prepared_) return prepared_->plan.name + " on " + prepared_->topology.name;
  if (trace_) return "trace " + trace_->source + ": " + (trace_->title.empty() ? trace_->plan.name : trace_->title);
  return "";
}

TimeNs Session::expected_ns() const {
  if (trace_) return store_.end_ns();  // recorded: the trace's own span
  if (!prepared_) return 0;
  if (const PreparedCollective* c = CollectiveOf(prepared_.get())) return c->predicted_ns;
  // The busiest rank's compute at the machine's speed: enough to pace the
  // replay until the run is recorded (then its own span does).
  const double tflops = Fp32Tflops(prepared_->topology);
  return tflops > 0 ? BusiestRankFlops(prepared_->plan) / (tflops * 1e3) : 0;
}

std::string Session::machine_description() const {
  return machine_model_ && prepared_ ? machine_model_->record.Describe() : "";
}

std::uint64_t Session::dropped_events() const { return queue_ ? queue_->dropped() : 0; }

void Session::BeginNewRun() {
  Cancel();
  ResetRun();
  ++run_id_;
}

void Session::ResetRun() {
  if (worker_client_) worker_client_->Kill();
  worker_client_.reset();
  worker_run_ = false;
  worker_chunks_.reset();
  worker_buffers_.clear();
  worker_failure_.clear();
  worker_error_record_seen_ = false;
  worker_runs_done_ = 0;
  worker_error_record_ = ErrorRecord{};
  worker_sent_ = ScenarioRecord{};
  worker_echo_ = ScenarioRecord{};
  run_scenario_.clear();
  run_params_.reset();
  prepared_.reset();
  summary_ = Summary{};
  backend_.clear();
  machine_model_.reset();
  inference_.reset();
  trace_.reset();
  compare_.reset();
  store_.Clear();
  snapshots_.clear();
  host_lane_.clear();
  iterations_ = IterationTimes{};
  error_.clear();
  timing_only_reason_.clear();
  {
    std::lock_guard lock(mutex_);
    pending_snapshots_.clear();
    run_error_.clear();
    run_iterations_ = IterationTimes{};
    run_summary_ = Summary{};
    run_host_lane_.clear();
  }
  steps_done_ = 0;
  run_finished_ = false;
  cancel_ = false;
  paused_ = false;
  steps_allowed_ = 0;
}

bool Session::Start(const ScenarioSettings& settings, bool paused) {
  BeginNewRun();
  try {
    const ScenarioParams params = ParamsOf(settings);
    iteration_settings_ = RunIterationsOf(settings);  // "warmup: ..." / "iters: ..." as any bad field
    run_scenario_ = params.spec().name;
    if (ShowMeasuredScenario(params)) return true;
    AppRun run = PrepareRun(settings, params);
    // A worker run is planned here on the simulator (the app may not have
    // the worker's backend); the worker checks its backend itself.
    backend_ = settings.in_worker ? "sim" : settings.backend;
    const std::string refusal = FaultRefusal(run.prepared->options.faults, backend_);
    if (!refusal.empty()) throw Error(refusal, ErrorKind::kInvalidInput);
    prepared_ = std::move(run.prepared);
    run_params_ = std::move(run.params);
    machine_model_ = std::move(run.machine);
    timing_only_reason_ = std::move(run.timing_only_reason);
  } catch (const std::exception& e) {
    prepared_.reset();
    run_params_.reset();
    machine_model_.reset();
    timing_only_reason_.clear();
    error_ = e.what();
    state_ = SessionState::kFailed;
    return false;
  }
  if (settings.in_worker && CollectiveOf(prepared_.get()) != nullptr) {
    StartWorkerRun(settings);
    return state_ != SessionState::kFailed;
  }
  queue_ = std::make_unique<EventQueue>(kQueueCapacity);
  state_ = SessionState::kRunning;
  paused_ = paused;
  run_ = std::thread([this] { RunThread(); });
  return true;
}

void Session::Cancel() {
  StopEventFlood();
  paused_ = false;
  if (worker_run_) {
    if (worker_client_ && !worker_client_->ended()) {
      worker_client_->Send(MakeCommand(RecordType::kCancel));
      worker_client_->Kill();  // and reaped: a cancelled worker never lingers
    }
    if (state_ == SessionState::kRunning) {
      error_ = "run cancelled";
      state_ = SessionState::kFailed;
    }
    return;
  }
  cancel_ = true;
  {
    std::lock_guard lock(mutex_);
    if (running_executor_ != nullptr) running_executor_->Cancel();
  }
  if (run_.joinable()) run_.join();
  if (state_ == SessionState::kRunning) {
    DrainEvents();
    TakeSnapshots();
    error_ = "run cancelled";
    state_ = SessionState::kFailed;
  }
}

void Session::Pause() {
  if (state_ == SessionState::kRunning && !worker_run_) paused_ = true;
}

void Session::Play() { paused_ = false; }

void Session::Step() {
  if (paused_) ++steps_allowed_;
}

void Session::DrainEvents(std::size_t max_count) {
  if (!queue_) return;
  batch_.clear();
  queue_->PopBatch(batch_, max_count);
  store_.Add(batch_);
}

void Session::TakeSnapshots() {
  std::lock_guard lock(mutex_);
  for (BufferSnapshot& s : pending_snapshots_) snapshots_.push_back(std::move(s));
  pending_snapshots_.clear();
}

void Session::Poll() {
  if (flood_) {
    PollFlood();
    return;
  }
  if (worker_run_) {
    PollWorker();
    return;
  }
  if (state_ != SessionState::kRunning) return;
  // Read the flag first: everything the run thread queued before setting
  // it is then drained below.
  const bool finished = run_finished_.load();
  DrainEvents(kMaxEventsPerFrame);
  TakeSnapshots();
  // Everything was queued before `finished` was set: the run is recorded
  // once the queue is empty.
  if (!finished || queue_->size_approx() > 0) return;
  if (run_.joinable()) run_.join();
  std::lock_guard lock(mutex_);
  if (run_error_.empty()) {
    summary_ = std::move(run_summary_);
    iterations_ = std::move(run_iterations_);
    host_lane_ = run_host_lane_;
    host_clock_ = run_host_clock_;
    state_ = SessionState::kDone;
  } else {
    error_ = run_error_;
    state_ = SessionState::kFailed;
  }
}

class Session::PublishedExecutor {
 public:
  PublishedExecutor(Session* session, Executor* executor) : session_(session) {
    std::lock_guard lock(session_->mutex_);
    session_->running_executor_ = executor;
  }
  ~PublishedExecutor() {
    std::lock_guard lock(session_->mutex_);
    session_->running_executor_ = nullptr;
  }
  PublishedExecutor(const PublishedExecutor&) = delete;
  PublishedExecutor& operator=(const PublishedExecutor&) = delete;

 private:
  Session* session_;
};

bool Session::StepToEnd(Executor& executor, EventSink& sink, const std::function<void(int)>& after_step) {
  const PublishedExecutor published(this, &executor);
  int step = 0;
  while (!cancel_) {
    // Pace: start a step only while the queue has room for it, and while
    // the run is not held (Pause), unless Step let one more go.
    while (!cancel_ && (queue_->size_approx() > queue_->capacity() / 2 ||
                        (paused_ && steps_allowed_.load() == 0))) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (cancel_) break;
    if (paused_ && steps_allowed_.load() > 0) --steps_allowed_;
    if (!executor.StepOnce(sink)) break;
    steps_done_ = ++step;
    after_step(step);
  }
  if (!cancel_) return true;
  std::lock_guard lock(mutex_);
  run_error_ = "run cancelled";
  return false;
}

bool Session::RunIterationsFirst(Executor& executor, std::vector<TimeNs>& spans) {
  {
    // A run that fails or is cancelled throws out of here: the executor is
    // taken back before the run thread's scope destroys it.
    const PublishedExecutor published(this, &executor);
    spans = RunBeforeTheShownRun(executor, iteration_settings_, cancel_);
  }
  if (!cancel_) return true;
  std::lock_guard lock(mutex_);
  run_error_ = "run cancelled";
  return false;
}

// The run thread: the executor runs a copy of the plan (the views keep
// reading the prepared one), every event goes to the queue and to a vector
// for the summary, a collective's chunks to the buffer view after each
// step; once the run is over it is summarized here, on the run thread: the
// UI thread never touches the backend while it runs.
void Session::RunThread() {
  try {
    const Prepared& prepared = *prepared_;
    RunOptions options = prepared.options;
    // "This machine" on the simulator: the model's GPUs, placement, shared HBM and issue cost.
    Topology run_topology = prepared.topology;
    if (machine_model_) ApplyMachineModelOn(backend_, *machine_model_, &options, &run_topology);
    Executor executor(CreateBackend(backend_), prepared.plan, std::move(run_topology), options);
    QueueSink to_queue(*queue_);
    VectorSink events;
    std::unique_ptr<ChunkState> chunks = ChunkStateOf(prepared, kMaxBufferViewRanks);
    std::unique_ptr<TeeSink> events_and_chunks;
    EventSink* tail = &events;
    if (chunks) {
      events_and_chunks = std::make_unique<TeeSink>(events, *chunks);
      tail = events_and_chunks.get();
    }
    TeeSink sink(to_queue, *tail);
    auto publish = [&](int step) {
      if (!chunks) return;
      BufferSnapshot snapshot = SnapshotOf(prepared, step, *chunks);
      std::lock_guard lock(mutex_);
      pending_snapshots_.push_back(std::move(snapshot));
    };
    std::vector<TimeNs> spans;
    if (RunIterationsFirst(executor, spans)) {
      publish(0);
      if (StepToEnd(executor, sink, publish)) {
        spans.push_back(LastEventEnd(events.events));
        Summary summary = SummarizeScenario(
            prepared, FinishedRun{executor.plan(), events.events, executor.backend(), true, ""});
        if (!timing_only_reason_.empty() && !summary.verdict.checked()) summary.verdict.reason = timing_only_reason_;
        std::lock_guard lock(mutex_);
        run_summary_ = std::move(summary);
        run_iterations_ = SummarizeIterations(iteration_settings_, std::move(spans));
        run_host_lane_ = executor.backend().host_lane();
        run_host_clock_ = BackendTraitsOrDefault(executor.backend().name()).host_lane_clock();
      }
    }
  } catch (const Error& e) {
    std::lock_guard lock(mutex_);
    run_error_ = e.kind() == ErrorKind::kCancelled ? "run cancelled" : e.what();
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    run_error_ = std::string("the run failed: ") + e.what();
  }
  run_finished_ = true;
}

}  // namespace shardlab::gui
