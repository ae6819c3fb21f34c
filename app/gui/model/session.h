// Session: one scenario run for the app, from the scenario panel's settings
// to the events the views replay. It is a small run controller: whatever the
// scenario, it holds one Prepared and one Summary (engine/scenarios/scenario.h)
// and one run thread.
//
//   ScenarioSettings ──ParamsOf──► ScenarioParams ──PrepareScenario──► Prepared
//          │ Check (session_check.cpp)     (the spec's)   (session_check.cpp)  │
//          ▼                                                                   ▼
//   message shown in place (or "")          run thread: Executor::StepOnce, paced by the
//                                            queue; Play / Pause / Step / Cancel
//                                              ├─► QueueSink ─► EventQueue ─┐
//                                              └─► ChunkState ─► snapshots  │ (collectives)
//   Poll() each frame on the UI thread ◄────────────────────────────────────┘
//          └─► TimelineStore, BufferSnapshots; SummarizeScenario ─► summary() when done
//
// The run thread paces itself: it starts the next step only while the queue
// has room, so the run never drops events and the executor never blocks.
// Every engine error becomes error(); the app stays usable.
//
// Other sources feed the same store and views, each in a file of its own: a
// collective run in a worker process (session_worker.cpp: the events arrive
// over a pipe from `shardlab-cli worker`, and a dead worker becomes
// worker_failure() with a restart), a trace file and the scenarios the app
// shows as a finished run (session_traces.cpp), the event flood
// (session_flood.cpp). What the settings may be is session_check.cpp's.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "app/gui/model/buffer_snapshots.h"
#include "app/gui/model/compare_overlay.h"
#include "app/gui/model/event_flood.h"
#include "app/gui/model/run_iterations.h"
#include "app/gui/model/scenario_settings.h"
#include "app/gui/model/timeline_store.h"
#include "app/gui/model/worker_client.h"
#include "engine/core/event_queue.h"
#include "engine/io/trace_reader.h"
#include "engine/run/executor.h"
#include "engine/run/machine_model.h"
#include "engine/scenarios/inference_scenario.h"
#include "engine/scenarios/scenario.h"

namespace shardlab::gui {

enum class SessionState { kEmpty, kRunning, kDone, kFailed };

class Session {
 public:
  Session();
  ~Session();  // cancels and joins the run thread
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// "" when the settings make a valid run; otherwise one sentence saying
  /// what is wrong and how to fix it ("dgx-a100 has 8 GPUs; choose 1-8
  /// ranks"). Cheap enough to call every frame (topologies are cached, and
  /// only This machine builds a plan). session_check.cpp.
  std::string Check(const ScenarioSettings& settings);
  /// True for a scenario that measures itself and that the app shows as
  /// the finished run it leaves (session_traces.cpp); Start runs these and
  /// every scenario with a plan (a spec's `prepare`).
  static bool ShowsAsFinishedRun(std::string_view spec_name);

  /// Cancels any run, prepares the new one and starts it in the background
  /// (`paused`: held before its first step, for Step and Play). Returns
  /// false (and sets error()) when the settings are rejected.
  bool Start(const ScenarioSettings& settings, bool paused = false);

  // --- Run control: the Executor's, on the one run thread.
  /// Stops the run inside its current step (Executor::Cancel) and joins it.
  void Cancel();
  /// Holds the run at the next step boundary (state() stays kRunning).
  void Pause();
  /// Lets a paused run go on to the end.
  void Play();
  /// A paused run runs one more logical step, then holds again.
  void Step();
  bool paused() const { return paused_.load(); }

  /// UI thread, once per frame: moves new events into the store and new
  /// snapshots into buffer_snapshots(); takes the summary when the run ends.
  void Poll();

  SessionState state() const { return state_; }
  const std::string& error() const { return error_; }
  /// Steps the run has finished (for a progress bar) and the total.
  int steps_done() const { return steps_done_.load(); }
  int num_steps() const;

  /// What every view needs, whatever the scenario: valid after a successful
  /// Start (until the next one), else null.
  const Plan* plan() const;
  const Topology* topology() const;
  /// The run as prepared, or null (no run, a trace, or a scenario the app
  /// shows as a finished run). Its Detail<T>() is the scenario's own state
  /// (PreparedPipeline, PreparedTp, ...), for that scenario's views (whose
  /// plan is this one's `plan`: the detail's was moved here).
  const Prepared* prepared() const { return prepared_.get(); }
  /// The parameters the run was started from (the spec's), or null.
  const ScenarioParams* run_params() const { return run_params_ ? &*run_params_ : nullptr; }
  /// What the run measured, when state() == kDone after Start: the spec's
  /// quantities, its line and verdict, and Detail<T>() the scenario's own
  /// summary (PipelineOutcomeSummary, TpSummary, ...; null before the end).
  const Summary& summary() const { return summary_; }
  /// The machine the current run models, in words (MachineRecord::Describe:
  /// "1 NVIDIA H200 (...), 8 ranks as virtual devices on GPU 0 sharing its
  /// HBM") for a run on "This machine"; "" otherwise.
  std::string machine_description() const;
  /// As above for the settings Check last saw (the panel shows it before Run).
  const std::string& checked_machine() const { return last_check_machine_; }
  /// Changes with every Start: views that cache per-run state compare it.
  std::uint64_t run_id() const { return run_id_; }
  /// The plan's name on its machine ("1F1B (PipeDream-Flush), 4 stages, ...
  /// on dgx-a100"), or an opened trace's title.
  std::string Title() const;
  /// An estimate of the run's span: the busiest rank's compute at the
  /// machine's speed (a collective: its formula); 0 without a run. Paces
  /// the replay.
  TimeNs expected_ns() const;

  /// The spec name of the scenario the current run was started from
  /// ("collective", "pipeline", "tp", ...; engine/scenarios/): the views
  /// pick its panels by it (app/gui/views/scenario_panels.h). "" without a
  /// run and for an opened trace.
  const std::string& run_scenario() const { return run_scenario_; }
  /// The run's stragglers and failures, resolved against its machine; the
  /// views mark them.
  const Faults& faults() const;
  /// The backend the current run uses ("sim"); "" without a run.
  std::string backend() const;
  /// The finished run's warm-up and timed runs (run_iterations.h), and the
  /// metrics panel's line about them ("" for one run without warm-up).
  const IterationTimes& iterations() const { return iterations_; }
  std::string iterations_line() const { return DescribeRunIterations(iterations_); }
  /// Why the run was not checked, as a view shows it: the app's reason when
  /// it chose timing-only (timing_only_reason()), else the scenario's own.
  std::string NotCheckedReason(const std::string& scenario_reason) const {
    return timing_only_reason_.empty() ? scenario_reason : timing_only_reason_;
  }

  // --- Opened traces and finished runs (session_traces.cpp).
  /// Shows the Chrome trace at `path` (one ShardLab wrote, from any
  /// backend) instead of a run. On a bad file returns false with one
  /// message in *message and leaves the current run as it was.
  bool OpenTrace(const std::string& path, std::string* message);
  /// Shows a run that finished outside the session (elastic, inference's
  /// real run) as an opened trace of it. Throws Error.
  void ShowFinishedRun(const Plan& plan, const Topology& topology, const std::vector<Event>& events,
                       const std::string& title);
  /// The inference run shown, or null.
  const InferenceRun* inference() const { return inference_.get(); }
  /// The opened trace, or null (no trace: a run or nothing).
  const LoadedTrace* trace() const { return trace_.get(); }
  /// The host lane of the run shown (host_lane_rows.h): an opened trace's,
  /// or the finished in-app run's backend's (the simulator's when its model
  /// charges a host issue cost per op); empty when it has none.
  const std::vector<HostEnqueueSpan>& host_lane() const { return host_lane_; }
  ClockKind host_clock() const { return host_clock_; }
  /// File > Open trace to compare...: lays a second run of the same plan
  /// (a trace at `path`) over the one shown (an opened trace or a finished
  /// run). A trace of another plan, or nothing to compare with, returns
  /// false with the reason in *message; the screen stays as it was.
  bool OpenCompareTrace(const std::string& path, std::string* message);
  /// The overlay, or null; cleared when another run or trace is shown.
  const CompareOverlay* compare() const { return compare_.get(); }
  /// Where the replay ends: the run shown, or the added run where it ends
  /// later, so the cursor that reveals the bars reveals every outline too.
  TimeNs replay_end_ns() const;

  // --- Worker runs (a collective with settings.in_worker; session_worker.cpp).
  /// The program started as the worker (default: DefaultWorkerProgram()).
  void SetWorkerProgram(std::string path) { worker_program_ = std::move(path); }
  /// Words put before the worker's command line, e.g. {"mpirun", "-np", "4"}
  /// for an MPI run (the worker's process group, launcher included, is
  /// what Cancel and a timeout kill). Empty (the default): a plain child.
  void SetWorkerLauncher(std::vector<std::string> words) { worker_launcher_ = std::move(words); }
  /// Test hook: every worker run is started with --inject-fault `kind`
  /// after `step` steps ("" for none); see `shardlab-cli worker --help`.
  void SetWorkerFault(std::string kind, int step = 1) {
    worker_fault_ = std::move(kind);
    worker_fault_step_ = step;
  }
  /// Test hooks for mpi worker runs: the worker's --mpi-timeout (e.g. "2s")
  /// and the mpi backend's fault as --mpi-fault ("kill:rank=1,op=3",
  /// "skip:rank=2,iter=1"); "" for the defaults.
  void SetWorkerMpiOptions(std::string timeout, std::string fault) {
    worker_mpi_timeout_ = std::move(timeout);
    worker_mpi_fault_ = std::move(fault);
  }
  /// A running worker that sends nothing for this long is killed.
  void SetWorkerTimeout(double seconds) { worker_timeout_s_ = seconds; }
  /// The current run goes through a worker process.
  bool worker_run() const { return worker_run_; }
  /// A worker run's settings as sent (the spec's name = value list) and as
  /// the worker's scenario record said it runs them (empty until it did).
  const ScenarioRecord& worker_sent() const { return worker_sent_; }
  const ScenarioRecord& worker_echo() const { return worker_echo_; }
  /// What happened to a worker that died ("" otherwise): the signal or exit
  /// code and its error record. The app offers "Restart worker" with it.
  const std::string& worker_failure() const { return worker_failure_; }
  /// The worker's warm-up and timed runs finished before the one it
  /// streams, as its "runs done" records say (0 before the first).
  int worker_runs_done() const { return worker_runs_done_; }
  /// Starts the last worker run again with the same settings.
  bool RestartWorker();
  /// The worker's process id while one is started and not reaped, else -1.
  pid_t worker_pid() const;
  /// The latest values of each buffer the worker sent (empty when it sent
  /// none: timing-only or large runs).
  const std::vector<std::vector<float>>& worker_buffers() const { return worker_buffers_; }
  /// Why the run was not checked when the app chose timing-only ("" when
  /// it was checked, or was asked to be timed only).
  const std::string& timing_only_reason() const { return timing_only_reason_; }
  const TimelineStore& store() const { return store_; }
  const std::vector<BufferSnapshot>& buffer_snapshots() const { return snapshots_; }
  std::uint64_t dropped_events() const;

  // --- The event flood of `shardlab --event-flood` (session_flood.cpp).
  /// Once a run is recorded, a producer re-emits its events as fast as it
  /// can and Poll ingests them, kMaxEventsPerFrame at a time, into a store
  /// window of kFloodWindow events. False (and *why) when no run is recorded.
  bool StartEventFlood(std::string* why);
  /// Stops the producer and takes what is left in the queue (counted, not
  /// stored). Cancel and Start stop a flood too. A flood is a diagnostic that
  /// ends the run's display: afterwards the store holds the flood's last
  /// window and dropped_events() counts the flood's drops.
  void StopEventFlood();
  bool flooding() const { return flood_ != nullptr; }
  /// Counters of the running flood, or of the last one after it stopped.
  FloodCounters flood_counters() const;

  /// Buffer snapshots are kept only up to this many ranks (a 1,024-rank
  /// run has nothing a student could read per chunk).
  static constexpr int kMaxBufferViewRanks = 64;
  /// Above this much host data (all ranks' buffers) a run is timed only and
  /// its result not checked, as the CLI's default --verify-max.
  static constexpr Bytes kMaxCheckedHostBytes = Bytes{1} << 30;
  /// Events the queue holds; the run thread waits while it is more than half full.
  static constexpr std::size_t kQueueCapacity = std::size_t{1} << 18;
  /// Poll moves at most this many events into the store per frame, so a
  /// frame's ingest stays a few milliseconds however full the queue is (the
  /// rest waits for the next frame; the producer is paced by the queue).
  static constexpr std::size_t kMaxEventsPerFrame = 16384;
  /// A flood keeps at most this many events in the store.
  static constexpr std::size_t kFloodWindow = kQueueCapacity;
  /// Above this much host arithmetic (one pipeline training step) a run is
  /// timed only: about a second of a laptop's core.
  static constexpr double kMaxCheckedHostFlops = 2e9;

 private:
  /// Resets everything a run leaves behind (UI thread, run thread joined).
  void ResetRun();
  /// Cancel, ResetRun and a new run id: what every new run or trace starts with.
  void BeginNewRun();
  /// A run as the app prepares it (session_check.cpp).
  struct AppRun {
    std::unique_ptr<Prepared> prepared;
    std::optional<ScenarioParams> params;    // as run: timing_only set where the app chose it
    std::optional<MachineModel> machine;     // This machine's model, else none
    std::string timing_only_reason;          // why the app chose timing-only ("" when it did not)
  };
  /// `params` prepared for this app: on This machine's model or the cached
  /// topology, timing-only (and why) where the real run cannot be or is more
  /// host work than the app checks, within the app's own limits. Throws Error.
  AppRun PrepareRun(const ScenarioSettings& settings, const ScenarioParams& params);
  /// session_traces.cpp: shows a scenario the app shows as a finished run
  /// (one that measures itself: elastic, inference, trace-compare); false
  /// when `params` is not one of them. Throws Error.
  bool ShowMeasuredScenario(const ScenarioParams& params);
  /// session_traces.cpp: checks such a scenario's parameters; false when
  /// `params` is not one of them. Throws Error.
  static bool CheckMeasuredScenario(const ScenarioParams& params);
  friend struct MeasuredScenarioViews;
  /// Puts an opened trace on screen (the run is reset already).
  void ShowLoadedTrace(std::unique_ptr<LoadedTrace> loaded);
  /// Starts prepared_ in a worker process (UI thread).
  void StartWorkerRun(const ScenarioSettings& settings);
  /// Poll() for a worker run: records into the store, snapshots, summary.
  void PollWorker();
  /// Ends a worker run as failed, with what happened.
  void FailWorker(const std::string& what);
  /// The run thread: runs prepared_ to the end and summarizes it.
  void RunThread();
  /// Steps `executor` to the end into `sink`, paced by the queue and held
  /// while paused; calls after_step(step) after each. False when cancelled.
  bool StepToEnd(Executor& executor, EventSink& sink, const std::function<void(int)>& after_step);
  /// The warm-up and timed runs before the shown one; false when cancelled.
  bool RunIterationsFirst(Executor& executor, std::vector<TimeNs>& spans);
  /// Publishes an executor as the one Cancel() reaches, and takes it back
  /// however the scope is left (a run that throws included).
  class PublishedExecutor;
  /// The scenario's topology, loaded once per name (throws "topology: ...").
  const Topology& CachedTopology(const std::string& name);
  /// Moves up to max_count queued events into the store (UI thread).
  void DrainEvents(std::size_t max_count = SIZE_MAX);
  /// Moves the run thread's snapshots into snapshots_ (UI thread).
  void TakeSnapshots();
  /// Poll() while a flood runs.
  void PollFlood();

  std::uint64_t run_id_ = 0;
  std::string run_scenario_;                // see run_scenario()
  std::optional<ScenarioParams> run_params_;
  std::unique_ptr<Prepared> prepared_;
  Summary summary_;
  std::string backend_;                     // the run's (the app's side of a worker run: "sim")
  std::optional<MachineModel> machine_model_;  // the run on "This machine" (session_check.cpp)
  std::unique_ptr<InferenceRun> inference_; // see inference()
  std::unique_ptr<LoadedTrace> trace_;
  std::vector<HostEnqueueSpan> host_lane_;
  ClockKind host_clock_ = ClockKind::kHost;
  std::unique_ptr<CompareOverlay> compare_;
  std::unique_ptr<EventQueue> queue_;
  TimelineStore store_;
  std::vector<BufferSnapshot> snapshots_;
  SessionState state_ = SessionState::kEmpty;
  std::string error_;
  std::string timing_only_reason_;          // set by Start when it chose timing-only
  std::vector<Event> batch_;                // reused by DrainEvents
  IterationSettings iteration_settings_;    // the run's warm-up and timed runs (Start)
  IterationTimes iterations_;               // the finished run's (Poll)

  // The run thread and its controls.
  std::thread run_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> paused_{false};
  std::atomic<int> steps_allowed_{0};       // Step() while paused
  std::atomic<int> steps_done_{0};
  std::atomic<bool> run_finished_{false};

  // Settings checks (UI thread only; session_check.cpp).
  std::map<std::string, std::unique_ptr<const Topology>> topologies_;
  bool has_last_check_ = false;             // Check's answer for the settings it last saw
  ScenarioSettings last_check_settings_;
  std::string last_check_message_;
  std::string last_check_machine_;          // checked_machine()

  // Worker runs (UI thread only; session_worker.cpp).
  bool worker_run_ = false;
  std::unique_ptr<WorkerClient> worker_client_;
  std::unique_ptr<ChunkState> worker_chunks_;
  std::vector<std::vector<float>> worker_buffers_;
  std::string worker_failure_;
  std::string worker_program_;
  std::vector<std::string> worker_launcher_;
  std::string worker_fault_;
  int worker_fault_step_ = 1;
  std::string worker_mpi_timeout_;
  std::string worker_mpi_fault_;
  double worker_timeout_s_ = 60;
  bool worker_error_record_seen_ = false;
  ErrorRecord worker_error_record_;
  double worker_last_record_s_ = 0;         // steady clock, seconds
  int worker_runs_done_ = 0;                // warm-up and timed runs before the shown one, as the worker said
  ScenarioSettings worker_settings_;        // for RestartWorker
  ScenarioRecord worker_sent_;              // the settings the worker was asked to run
  ScenarioRecord worker_echo_;              // what its scenario record said

  // Event flood (UI thread only; session_flood.cpp).
  std::unique_ptr<EventFlood> flood_;
  FloodCounters flood_counters_;            // ingested and the final counts
  TimeNs flood_base_ns_ = -1;               // shift taken off the store window's events

  std::mutex mutex_;                        // guards the fields below
  std::vector<BufferSnapshot> pending_snapshots_;
  std::string run_error_;
  IterationTimes run_iterations_;
  Summary run_summary_;
  std::vector<HostEnqueueSpan> run_host_lane_;  // the run's backend's, once it finished
  ClockKind run_host_clock_ = ClockKind::kHost;
  Executor* running_executor_ = nullptr;    // the run thread's, while it exists (for Cancel)
};

}  // namespace shardlab::gui
