// Session: one scenario run for the app, from the scenario panel's settings
// to the events the views replay.
//
//   ScenarioSettings ──Check──► message shown in place (or "")
//          │ Start
//          ▼
//   PreparedCollective, PreparedPipeline, PreparedTp or PreparedZero (engine)
//          └──────────────────────► worker thread: Executor::StepOnce
//          │                          ├─► QueueSink ─► EventQueue ─┐
//          │                          └─► ChunkState ─► snapshot per step
//          ▼                                                       │
//   Poll() each frame on the UI thread ◄───────────────────────────┘
//          └─► TimelineStore, BufferSnapshots, metrics when done
//
// The worker paces itself: it starts the next step only while the queue
// has room, so the run never drops events and the executor never blocks.
// Every engine error becomes error(); the app stays usable.
//
// Two other sources feed the same store and views: a collective run in a
// worker process (settings.in_worker; session_worker.cpp: the events arrive
// over a pipe from `shardlab-cli worker`, and a dead worker becomes
// worker_failure() with a restart), and a trace file (OpenTrace).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/gui/model/compare_overlay.h"
#include "app/gui/model/event_flood.h"
#include "app/gui/model/run_iterations.h"
#include "app/gui/model/timeline_store.h"
#include "app/gui/model/worker_client.h"
#include "engine/core/event_queue.h"
#include "engine/run/chunk_state.h"
#include "engine/run/machine_model.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/dp_train_scenario.h"
#include "engine/scenarios/inference_scenario.h"
#include "engine/run/executor.h"
#include "engine/scenarios/moe_scenario.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/three_d_scenario.h"
#include "engine/io/trace_reader.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab::gui {

/// The scenario panel's names for pipeline training, for one
/// tensor-parallel (Megatron) layer and for data-parallel / ZeRO training;
/// every other scenario is a collective kind.
inline constexpr const char* kPipelineScenario = "pipeline";
inline constexpr const char* kTensorParallelScenario = "tp";
inline constexpr const char* kZeroScenario = "zero";
/// DP x PP x TP training of the small MLP, and one expert-parallel MoE layer.
inline constexpr const char* kThreeDScenario = "3d";
inline constexpr const char* kMoeScenario = "moe";
/// Multi-step data-parallel SGD with the training techniques.
inline constexpr const char* kDpTrainScenario = "dp-train";

/// What the scenario panel edits; text fields stay text until Check.
/// Every field bound to a scenario spec's parameter (scenario_fields.cpp)
/// takes its default from the spec, in the constructor; the comments say
/// what a field is, the spec says its default, range and unit.
struct ScenarioSettings {
  ScenarioSettings();  // the spec defaults, ring all-reduce (scenario_fields.cpp)

  std::string scenario = "allreduce";  // a collective kind (CLI spelling), "pipeline", "tp", ...
  std::string topology;               // preset name, file path, or "this" (this_machine_choice.h)
  /// topology "this" without a GPU here: the modelled machine is
  /// machine_gpus GPUs of this device profile (calibrate's TOML).
  std::string device_profile;
  int machine_gpus = 1;
  /// Real hardware (cuda): hold each transfer for the modelled link's time
  /// (link_emulation.h; RunOptions::emulate_links). Ignored on the simulator.
  bool emulate_links = false;
  std::string backend = "sim";
  /// Collectives only: run in a worker process (`shardlab-cli worker`)
  /// instead of in the app, as real hardware (cuda, mpi) always does.
  bool in_worker = false;
  bool timing_only = false;
  /// Untimed runs first and timed runs, as the CLI's -w/-n (run_iterations.h):
  /// warmup -1 is the backend's default (1 on cuda, 0 on the simulator).
  int warmup = -1;
  int iters = 1;
  // Collectives.
  std::string algo;
  int ranks = 0;
  std::string size;                   // ParseSize syntax
  std::string ring_order;             // auto | rank | "0,3,2,1"
  // Pipeline training of the small MLP (as `shardlab-cli run pipeline`).
  std::string schedule;               // gpipe | 1f1b | interleaved | zb-h1
  int stages = 0;
  int microbatches = 0;
  int chunks = 0;                     // model chunks per stage; interleaved only
  int layers = 0;
  int width = 0;
  int batch = 0;
  std::string optimizer;
  // One tensor-parallel layer (as `shardlab-cli run tp`).
  std::string tp_layer;               // column | row | mlp | attention | transformer
  int tp = 0;                         // ranks the layer is split over, one per GPU
  int tp_batch = 0;                   // B
  int tp_seq = 0;                     // S: the layer sees T = B x S tokens
  int tp_hidden = 0;                  // H
  int tp_ffn = 0;                     // F; 0: the engine's default (4H for the MLP)
  int tp_heads = 0;                   // attention heads (attention, transformer)
  bool sequence_parallel = false;     // Megatron's SP: each all-reduce becomes RS + AG
  // Data-parallel / ZeRO training of the small MLP with Adam (the engine's
  // ZeroScenario).
  int zero_stage = 0;                 // 0 (plain data parallel), 1, 2, 3
  int zero_ranks = 0;                 // N, one rank per GPU
  int zero_layers = 0;
  int zero_width = 0;
  int zero_batch = 0;                 // the global batch; each rank takes B/N rows
  int zero_steps = 0;                 // Adam steps
  std::string zero_bucket;            // fp16 gradient per bucket (ParseSize syntax)
  bool zero_overlap = true;           // a bucket's collective starts when its gradient is ready
  int zero_k = 12;                    // optimizer bytes per parameter in the formula: 12 or 8
  // DP x PP x TP training of the small MLP (as `shardlab-cli run 3d`).
  int dp = 0, pp = 0, tp3 = 0;        // the grid; rank = pp*(dp*tp) + dp*tp + tp
  int td_zero = 0;                    // 0: DP all-reduce, 1: ZeRO-1 over each DP group
  std::string td_schedule;
  int td_microbatches = 0;            // per replica
  int td_layers = 0;
  int td_width = 0;
  int td_batch = 0;
  std::string td_optimizer;
  // One expert-parallel MoE layer (as `shardlab-cli run moe`).
  int moe_ranks = 0;                  // N
  int moe_experts = 0;                // E, divisible by N
  int moe_top_k = 0;                  // k
  int moe_tokens = 0;                 // T over all ranks
  int moe_hidden = 0;                 // H
  int moe_ffn = 0;                    // F of every expert
  double moe_capacity = 0;            // capacity factor
  std::string moe_skew;               // router | uniform | hot | zipf | ...
  /// Parameters the app has no field of its own for (a collective's dtype,
  /// every parameter of a scenario only a test registered): "spec.param"
  /// -> text, as typed; absent means the spec's default.
  std::map<std::string, std::string> other_params;

  bool is_pipeline() const { return scenario == kPipelineScenario; }
  bool is_tp() const { return scenario == kTensorParallelScenario; }
  bool is_zero() const { return scenario == kZeroScenario; }
  bool is_three_d() const { return scenario == kThreeDScenario; }
  bool is_moe() const { return scenario == kMoeScenario; }
  /// A collective kind: none of the scenarios the app knows by name, nor
  /// another registered scenario.
  bool is_collective() const;
  bool operator==(const ScenarioSettings&) const = default;
};

/// One cell of the buffer view: whose contributions a chunk holds.
struct ChunkCell {
  std::vector<int> contributors;  // empty: nothing yet, or mixed (see label)
  std::string label;              // "A0+A1", "A0..7", "_", "C(5 ranks)*"
  bool complete = false;          // holds every rank it should at the end
};

/// The buffer view after one logical step (step 0: the inputs).
struct BufferSnapshot {
  int step = 0;
  std::vector<std::vector<ChunkCell>> ranks;  // [rank][chunk]
};

enum class SessionState { kEmpty, kRunning, kDone, kFailed };

class Session {
 public:
  Session();
  ~Session();  // cancels and joins the worker
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// "" when the settings make a valid run; otherwise one sentence saying
  /// what is wrong and how to fix it ("dgx-a100 has 8 GPUs; choose 1-8
  /// ranks"). Cheap enough to call every frame (topologies are cached).
  std::string Check(const ScenarioSettings& settings);

  /// Cancels any run, prepares the new one and starts it in the background.
  /// Returns false (and sets error()) when the settings are rejected.
  bool Start(const ScenarioSettings& settings);
  void Cancel();

  /// UI thread, once per frame: moves new events into the store and new
  /// snapshots into buffer_snapshots(); finishes metrics when the run ends.
  void Poll();

  SessionState state() const { return state_; }
  const std::string& error() const { return error_; }
  /// Steps the worker has finished (for a progress bar) and the total.
  int steps_done() const { return steps_done_.load(); }
  int num_steps() const;

  /// What every view needs, whatever the scenario: valid after a successful
  /// Start (until the next one), else null.
  const Plan* plan() const;
  const Topology* topology() const;
  /// The machine the current run models, in words (MachineRecord::Describe:
  /// "1 NVIDIA H200 (...), 8 ranks as virtual devices on GPU 0 sharing its
  /// HBM") for a run on "This machine"; "" otherwise.
  std::string machine_description() const;
  /// As above for the settings Check last saw (the panel shows it before Run).
  const std::string& checked_machine() const { return last_check_machine_; }
  /// Changes with every Start: views that cache per-run state compare it.
  std::uint64_t run_id() const { return run_id_; }
  /// "ring all-reduce, 8 ranks, 64 MiB on dgx-a100", "1F1B (PipeDream-Flush),
  /// 4 stages, 8 micro-batches, MLP 8x256 (batch 64) on dgx-a100", or the
  /// tensor-parallel layer's or ZeRO run's plan name on its machine.
  std::string Title() const;
  /// The formula's time for the run (collectives), else an estimate from
  /// the plan's compute ops (and a tensor-parallel layer's all-reduce
  /// formula); 0 without a run. Paces the replay.
  TimeNs expected_ns() const;

  /// The spec name of the scenario the current run was started from
  /// ("collective", "pipeline", "tp", ...; engine/scenarios/): the views
  /// pick its panels by it (app/gui/views/scenario_panels.h). "" without a
  /// run and for an opened trace.
  const std::string& run_scenario() const { return run_scenario_; }
  /// The collective run's stragglers and failures, resolved against its
  /// machine (empty for other scenarios); the views mark them.
  const Faults& faults() const { return faults_; }
  /// The collective run, or null (no run, or a pipeline).
  const PreparedCollective* prepared() const { return prepared_.get(); }
  /// The pipeline run, or null (no run, or a collective).
  const PreparedPipeline* pipeline() const { return pipeline_.get(); }
  /// Bubble, in-flight peaks and the check, when state() == kDone on a pipeline.
  const PipelineOutcomeSummary& pipeline_outcome() const { return pipeline_outcome_; }
  /// The tensor-parallel layer run, or null (no run, or another scenario).
  const PreparedTp* tp() const { return tp_.get(); }
  /// Compute/communication split, all-reduces and the check, when
  /// state() == kDone on a tensor-parallel layer.
  const TpSummary& tp_outcome() const { return tp_outcome_; }
  /// The data-parallel / ZeRO run, or null (no run, or another scenario).
  const PreparedZero* zero() const { return zero_.get(); }
  /// Memory per rank by category as the backend allocated it, traffic per
  /// step beside 2Ψ/3Ψ, and the check, when state() == kDone on a ZeRO run.
  const ZeroSummary& zero_outcome() const { return zero_outcome_; }
  /// The DP x PP x TP run, or null; its summary when state() == kDone.
  const PreparedThreeD* three_d() const { return three_d_.get(); }
  const ThreeDSummary& three_d_outcome() const { return three_d_outcome_; }
  /// The MoE layer run, or null; its summary when state() == kDone.
  const PreparedMoe* moe() const { return moe_.get(); }
  const MoeSummary& moe_outcome() const { return moe_outcome_; }
  /// The data-parallel training-techniques run (always timing only on the
  /// simulator: the arithmetic ran in Prepare), or null; its summary when
  /// state() == kDone.
  const PreparedDpTrain* dp_train() const { return dp_train_.get(); }
  const DpTrainSummary& dp_train_outcome() const { return dp_train_outcome_; }
  /// The K (optimizer bytes per parameter) the views draw the memory
  /// formula with: 12 (the ZeRO paper) or 8 (the seed texts); set by Start.
  int zero_k() const { return zero_k_; }
  /// The backend the current run uses ("sim"); "" without a run.
  std::string backend() const;
  /// The finished run's warm-up and timed runs (run_iterations.h), and the
  /// metrics panel's line about them ("" for one run without warm-up).
  const IterationTimes& iterations() const { return iterations_; }
  std::string iterations_line() const { return DescribeRunIterations(iterations_); }
  // --- Opened traces (File > Open trace).
  /// Shows the Chrome trace at `path` (one ShardLab wrote, from any
  /// backend) instead of a run. On a bad file returns false with one
  /// message in *message and leaves the current run as it was.
  bool OpenTrace(const std::string& path, std::string* message);
  /// Runs the elastic job of `params` whole (it writes and reads real
  /// checkpoint files) and shows the trace it writes. Throws Error.
  bool ShowElasticJob(const ScenarioParams& params);
  /// Shows a run that finished outside the session (elastic, inference's
  /// real run) as an opened trace of it. Throws Error.
  void ShowFinishedRun(const Plan& plan, const Topology& topology, const std::vector<Event>& events,
                       const std::string& title);
  /// Serves the inference scenario of `params` with every batching policy
  /// on the same arrivals (timing only, milliseconds) after its real run
  /// (the first requests, every logit checked), shows the real run's trace
  /// and keeps the served runs for the serving view. Throws Error.
  bool ShowInferenceRun(const ScenarioParams& params);
  /// Shows the trace-compare scenario's measured trace with the model of
  /// its machine laid over it (compare()). Throws Error.
  bool ShowTraceCompare(const ScenarioParams& params);
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

  // --- Worker runs (a collective with settings.in_worker).
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
  /// Why a pipeline, tensor-parallel or ZeRO run was not checked ("" when it was,
  /// or was asked to be timed only).
  const std::string& timing_only_reason() const { return timing_only_reason_; }
  const TimelineStore& store() const { return store_; }
  const std::vector<BufferSnapshot>& buffer_snapshots() const { return snapshots_; }
  /// Measured metrics and the check of the result, when state() == kDone.
  const CollectiveOutcomeSummary& outcome() const { return outcome_; }
  std::uint64_t dropped_events() const;

  /// The event flood of `shardlab --event-flood` (event_flood.h): once a
  /// run is recorded, a producer re-emits its events as fast as it can and
  /// Poll ingests them, kMaxEventsPerFrame at a time, into a store window of
  /// kFloodWindow events. False (and *why) when no run is recorded.
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
  /// Events the queue holds; the worker waits while it is more than half full.
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
  /// Resets everything a run leaves behind (UI thread, worker joined).
  void ResetRun();
  /// Puts an opened trace on screen (the run is reset already).
  void ShowLoadedTrace(std::unique_ptr<LoadedTrace> loaded);
  /// Starts prepared_ in a worker process (UI thread).
  void StartWorkerRun(const ScenarioSettings& settings);
  /// Poll() for a worker run: records into the store, snapshots, outcome.
  void PollWorker();
  /// Ends a worker run as failed, with what happened.
  void FailWorker(const std::string& what);
  /// Steps `executor` to the end into `sink`, paced by the queue; calls
  /// after_step(step) after each. False when cancelled.
  bool StepToEnd(Executor& executor, EventSink& sink, const std::function<void(int)>& after_step);
  /// Publishes an executor as the one Cancel() reaches, and takes it back
  /// however the scope is left (a run that throws included).
  class PublishedExecutor;
  void RunCollectiveWorker();
  void RunPipelineWorker();
  void RunTpWorker();
  void RunZeroWorker();
  void RunThreeDWorker();
  void RunMoeWorker();
  void RunDpTrainWorker();
  template <class Prepared, class Summary, class Summarize>
  void RunTrainingWorker(const Prepared& prepared, const Plan& plan, Summary& slot, Summarize summarize);
  /// Runs `body` on the worker thread, turning its errors into worker_error_.
  void WorkerGuard(const std::function<void()>& body);
  /// The finished run's host lane, for Poll to show (worker thread, mutex_ held).
  void KeepHostLane(const Backend& backend);
  /// The scenario's topology, loaded once per name (throws "topology: ...";
  /// "this" only the scenarios MachineTopology serves model).
  const Topology& CachedTopology(const std::string& name);
  /// The one place "This machine" is special: the machine of a collective,
  /// pipeline, tp or zero run is the settings' preset or file
  /// (CachedTopology), or for "this" the model of this machine for `ranks`
  /// ranks (0: one per GPU), as the CLI's `--topology this` builds it; its
  /// plan topology is returned and the model put in *model (reset otherwise).
  Topology MachineTopology(const ScenarioSettings& settings, int ranks, std::optional<MachineModel>* model);
  /// A collective's: MachineTopology for the settings' ranks ("all": 0).
  Topology CollectiveTopology(const ScenarioSettings& settings, const ScenarioParams& params,
                              std::optional<MachineModel>* model);
  /// Moves up to max_count queued events into the store (UI thread).
  void DrainEvents(std::size_t max_count = SIZE_MAX);
  /// Poll() while a flood runs.
  void PollFlood();
  /// The buffer view after `step`, from the worker's ChunkState.
  BufferSnapshot Snapshot(int step, const ChunkState& chunks) const;

  std::uint64_t run_id_ = 0;
  std::unique_ptr<PreparedCollective> prepared_;
  std::optional<MachineModel> machine_model_;  // the run on "This machine" (MachineTopology)
  Faults faults_;  // the run's stragglers and failures (every scenario; PrepareRunFaults)
  std::unique_ptr<PreparedPipeline> pipeline_;
  PipelineOutcomeSummary pipeline_outcome_;
  std::unique_ptr<PreparedTp> tp_;
  TpSummary tp_outcome_;
  std::unique_ptr<PreparedZero> zero_;
  ZeroSummary zero_outcome_;
  int zero_k_ = 12;
  std::unique_ptr<PreparedThreeD> three_d_;
  ThreeDSummary three_d_outcome_;
  std::unique_ptr<PreparedMoe> moe_;
  MoeSummary moe_outcome_;
  std::unique_ptr<PreparedDpTrain> dp_train_;
  DpTrainSummary dp_train_outcome_;
  std::unique_ptr<LoadedTrace> trace_;
  std::vector<HostEnqueueSpan> host_lane_;
  ClockKind host_clock_ = ClockKind::kHost;
  std::unique_ptr<CompareOverlay> compare_;
  std::unique_ptr<EventQueue> queue_;
  TimelineStore store_;
  std::vector<BufferSnapshot> snapshots_;
  CollectiveOutcomeSummary outcome_;
  SessionState state_ = SessionState::kEmpty;
  std::string error_;

  std::thread worker_;
  std::atomic<bool> cancel_{false};
  IterationSettings iteration_settings_;    // the run's warm-up and timed runs (Start)
  IterationTimes iterations_;               // the finished run's (Poll)
  /// The warm-up and timed runs before the shown one (published for
  /// Cancel); false when cancelled. A run that fails throws, as in
  /// StepToEnd, for WorkerGuard to report.
  bool RunIterationsFirst(Executor& executor, std::vector<TimeNs>& spans);
  std::atomic<int> steps_done_{0};
  std::atomic<bool> worker_finished_{false};
  std::string timing_only_reason_;          // set by Start when it chose timing-only
  std::vector<Event> batch_;                // reused by DrainEvents
  std::map<std::string, std::unique_ptr<const Topology>> topologies_;  // UI thread only
  bool has_last_check_ = false;             // Check's answer for the settings it last saw
  std::string run_scenario_;                // see run_scenario()
  std::unique_ptr<InferenceRun> inference_; // see inference()
  ScenarioSettings last_check_settings_;
  std::string last_check_message_;
  std::string last_check_machine_;          // checked_machine()

  // Worker runs (UI thread only).
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

  // Event flood (UI thread only).
  std::unique_ptr<EventFlood> flood_;
  FloodCounters flood_counters_;            // ingested and the final counts
  TimeNs flood_base_ns_ = -1;               // shift taken off the store window's events

  std::mutex mutex_;                        // guards the fields below
  std::vector<BufferSnapshot> pending_snapshots_;
  std::string worker_error_;
  IterationTimes worker_iterations_;
  CollectiveOutcomeSummary worker_outcome_;
  PipelineOutcomeSummary worker_pipeline_outcome_;
  TpSummary worker_tp_outcome_;
  ZeroSummary worker_zero_outcome_;
  ThreeDSummary worker_three_d_outcome_;
  MoeSummary worker_moe_outcome_;
  DpTrainSummary worker_dp_train_outcome_;
  std::vector<HostEnqueueSpan> worker_host_lane_;  // the worker's backend's, once it finished
  ClockKind worker_host_clock_ = ClockKind::kHost;
  Executor* running_executor_ = nullptr;    // the worker's, while it exists (for Cancel)
};

}  // namespace shardlab::gui
