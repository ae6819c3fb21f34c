// Session's worker runs: a collective run by `shardlab-cli worker` in a
// child process (WorkerClient), its records turned into what the views read
// (the store, buffer snapshots, the outcome), and its death into a message.
//
//   Start ─► PrepareScenario here (the views' plan) ─► StartWorkerRun: spawn, "play"
//   Poll  ─► PollWorker: records ─► store, ChunkState ─► snapshots; run done ─► summary,
//            its timed runs' spans ─► iterations (checked against the settings)
//            worker ended early / timed out ─► FailWorker (what happened, Restart)
#include <chrono>
#include <cstdio>

#include <regex>

#include "app/gui/model/session.h"
#include "app/gui/model/link_emulation.h"
#include "app/gui/model/scenario_fields.h"
#include "app/gui/model/this_machine_choice.h"
#include "engine/core/backend_traits.h"
#include "engine/core/error.h"
#include "engine/launch/mpi_launcher.h"
#include "engine/scenarios/scenario_record.h"

namespace shardlab::gui {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The last non-empty line of a worker's stderr ("shardlab-cli: error: ...").
std::string LastLine(const std::string& text) {
  std::size_t end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "";
  const std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

/// What starts an mpi worker: `env` with what OpenMPI needs in a container
/// (as RunMpiJob sets it), then `mpirun --oversubscribe -np RANKS`; the
/// worker's command line follows. mpirun forwards its stdin to rank 0 and
/// rank 0's stdout to its own, which are the worker client's pipes.
std::vector<std::string> MpiWorkerLauncher(int ranks) {
  MpiLaunch launch;
  launch.processes = ranks;
  std::vector<std::string> words = MpirunArgv(launch);
  const std::vector<std::string> env = MpiJobEnvironmentDefaults();
  if (!env.empty()) {
    words.insert(words.begin(), env.begin(), env.end());
    words.insert(words.begin(), "env");
  }
  return words;
}

/// mpirun's report of a dead rank in `stderr_text` ("rank 1 was killed by
/// signal 9 ..."), or "" when it names none or the rank ended on
/// ShardLab's own terms (an error it reported, a desync abort): the error
/// record says more then.
std::string MpiRankFailure(const std::string& stderr_text) {
  const std::string failure = DescribeMpirunFailure(stderr_text);
  static const std::regex own(R"(^rank \d+ (exited with code (1|2|130) |aborted the job))");
  return std::regex_search(failure, own) ? "" : failure;
}

/// The summary of a worker's "run done" record: the collective's own
/// (CollectiveOutcomeSummary, for its metrics view) and its verdict.
Summary WorkerSummary(const CollectiveOutcomeSummary& o) {
  Summary summary;
  summary.detail = std::make_shared<CollectiveOutcomeSummary>(o);
  summary.values = {{"time_ns", static_cast<double>(o.metrics.time_ns)},
                    {"algbw_gbps", o.metrics.algbw_gbps},
                    {"busbw_gbps", o.metrics.busbw_gbps},
                    {"steps", static_cast<double>(o.steps)}};
  if (!o.checked) {
    summary.verdict = NotChecked(o.not_checked_reason);
  } else {
    summary.verdict.kind = o.verify.correct ? VerdictKind::kCorrect : VerdictKind::kWrong;
    summary.verdict.elements = o.verify.checked;
  }
  return summary;
}

}  // namespace

pid_t Session::worker_pid() const {
  return worker_client_ && !worker_client_->ended() ? worker_client_->pid() : -1;
}

bool Session::RestartWorker() {
  if (!worker_settings_.in_worker) return false;  // no worker run yet
  const ScenarioSettings settings = worker_settings_;
  return Start(settings);
}

void Session::StartWorkerRun(const ScenarioSettings& settings) {
  worker_run_ = true;
  worker_settings_ = settings;
  const PreparedCollective& p = *CollectiveOf(prepared_.get());
  // The settings travel as the spec's parameters: each one a flag of
  // `shardlab-cli worker` (the CLI reads the same spec), and the worker's
  // scenario record must say it runs exactly these.
  const ScenarioParams& sent = *run_params_;  // timing_only where the app chose it, too
  worker_sent_ = ScenarioRecordOf(sent);
  std::vector<std::string> argv = {worker_program_.empty() ? DefaultWorkerProgram() : worker_program_, "worker",
                                   sent.Text(kCollectiveKindParam)};
  for (const ParamSpec& param : sent.spec().params) {
    if (!param.cli && param.name != "size") continue;  // the kind is the command word
    const std::string& value = sent.Text(param.name);
    if (param.type != ParamType::kBool) {
      argv.insert(argv.end(), {param.Flag(), value});
    } else if (value != param.default_text) {
      argv.push_back(value == "true" ? param.Flag() : "--no-" + param.Flag().substr(2));
    }
  }
  argv.insert(argv.end(), {"--backend", settings.backend, "--seed", std::to_string(p.scenario.seed),
                           // The app's host-memory limit, so the worker checks what the app would.
                           "--verify-max", std::to_string(kMaxCheckedHostBytes)});
  // "Emulate links" (link_emulation.h) and "This machine" (this_machine_choice.h) as the CLI takes them.
  if (LinkEmulationOptions(settings).emulate_links) argv.push_back("--emulate-links");
  if (IsThisMachine(settings.topology) && !settings.device_profile.empty()) {
    argv.insert(argv.end(), {"--device-profile", settings.device_profile, "--gpus",
                             std::to_string(settings.machine_gpus)});
  }
  // Untimed runs first, then the timed ones; the worker streams the last
  // (run_iterations.h). Both always given: the worker's own default warm-up
  // is the backend's, as `run`'s, and the app has chosen already.
  argv.insert(argv.end(), {"--warmup", std::to_string(iteration_settings_.warmup), "--iters",
                           std::to_string(iteration_settings_.iters)});
  if (!worker_fault_.empty()) {
    argv.insert(argv.end(), {"--inject-fault", worker_fault_, "--fault-step",
                             std::to_string(worker_fault_step_)});
  }
  const bool under_mpirun = BackendTraitsOrDefault(settings.backend).under_mpirun;
  if (under_mpirun) {
    if (!worker_mpi_timeout_.empty()) argv.insert(argv.end(), {"--mpi-timeout", worker_mpi_timeout_});
    if (!worker_mpi_fault_.empty()) argv.insert(argv.end(), {"--mpi-fault", worker_mpi_fault_});
  }
  // An mpi run is an MPI job of one process per rank; a launcher set by
  // the caller wins.
  const std::vector<std::string> launcher =
      under_mpirun && worker_launcher_.empty() ? MpiWorkerLauncher(p.params.ranks) : worker_launcher_;
  argv.insert(argv.begin(), launcher.begin(), launcher.end());
  if (p.params.ranks <= kMaxBufferViewRanks) {
    worker_chunks_ = ChunkStateOf(*prepared_, kMaxBufferViewRanks);
    snapshots_.push_back(SnapshotOf(*prepared_, 0, *worker_chunks_));
  }
  state_ = SessionState::kRunning;
  worker_client_ = std::make_unique<WorkerClient>();
  try {
    worker_client_->Start(argv);
  } catch (const std::exception& e) {
    FailWorker(e.what());
    return;
  }
  worker_client_->Send(MakeCommand(RecordType::kPlay));
  worker_last_record_s_ = NowSeconds();
  worker_runs_done_ = 0;
}

void Session::FailWorker(const std::string& what) {
  worker_failure_ = what;
  error_ = "the worker failed: " + what;
  state_ = SessionState::kFailed;
}

void Session::PollWorker() {
  if (!worker_client_ || worker_client_->ended()) return;
  std::vector<WorkerRecord> records;
  worker_client_->Poll(records);
  const Plan& plan = prepared_->plan;
  batch_.clear();
  bool done = false;
  for (WorkerRecord& r : records) {
    if (state_ != SessionState::kRunning) break;
    switch (r.type) {
      case RecordType::kPlan:
        // The app shows its own plan: the worker must have built the same.
        if (r.plan.steps != plan.num_steps || r.plan.ops != static_cast<std::int64_t>(plan.ops.size()) ||
            r.plan.ranks != plan.num_ranks) {
          worker_client_->Kill();
          FailWorker("the worker built another plan (" + std::to_string(r.plan.ops) + " ops in " +
                     std::to_string(r.plan.steps) + " steps; the app has " +
                     std::to_string(plan.ops.size()) + " in " + std::to_string(plan.num_steps) +
                     "): is it the same ShardLab version?");
        }
        break;
      case RecordType::kEvent:
        batch_.push_back(r.event);
        if (worker_chunks_) worker_chunks_->OnEvent(r.event);
        break;
      case RecordType::kBufferSnapshot:
        if (r.snapshot.buffer < 0 || static_cast<std::size_t>(r.snapshot.buffer) >= plan.buffers.size()) {
          worker_client_->Kill();
          FailWorker("the worker sent a snapshot of buffer " + std::to_string(r.snapshot.buffer) +
                     ", which the plan does not have");
          break;
        }
        worker_buffers_.resize(plan.buffers.size());
        worker_buffers_[static_cast<std::size_t>(r.snapshot.buffer)] = std::move(r.snapshot.values);
        break;
      case RecordType::kRunsDone:
        worker_runs_done_ = r.step;  // a warm-up or timed run before the shown one
        break;
      case RecordType::kStepDone:
        store_.Add(batch_);  // the step's events first: the views read them with the step
        batch_.clear();
        steps_done_ = r.step;
        if (worker_chunks_) snapshots_.push_back(SnapshotOf(*prepared_, r.step, *worker_chunks_));
        break;
      case RecordType::kRunDone: {
        // The worker must have run the warm-up and timed runs asked for:
        // the average shown is over exactly these.
        if (r.done.warmup != iteration_settings_.warmup ||
            r.done.spans_ns.size() != static_cast<std::size_t>(iteration_settings_.iters)) {
          worker_client_->Kill();
          FailWorker("the worker ran " + std::to_string(r.done.warmup) + " warm-up and " +
                     std::to_string(r.done.spans_ns.size()) + " timed runs where the app asked for " +
                     std::to_string(iteration_settings_.warmup) + " and " +
                     std::to_string(iteration_settings_.iters) + " (is it the same ShardLab version?)");
          break;
        }
        CollectiveOutcomeSummary o;
        o.metrics.size_bytes = r.done.size_bytes;
        o.metrics.time_ns = r.done.time_ns;
        o.metrics.algbw_gbps = r.done.algbw_gbps;
        o.metrics.busbw_gbps = r.done.busbw_gbps;
        o.steps = r.done.steps;
        o.events = static_cast<std::size_t>(r.done.events);
        o.checked = r.done.checked;
        // The app's own reason when it chose timing-only (as for in-process runs).
        o.not_checked_reason = timing_only_reason_.empty() ? r.done.not_checked_reason : timing_only_reason_;
        o.verify.correct = r.done.correct;
        o.verify.max_abs_err = r.done.max_abs_err;
        o.verify.wrong = r.done.wrong;
        o.verify.checked = r.done.elements_checked;
        // Every timed run's span: the same summary as an in-process run's
        // (the metrics above are already their average).
        iterations_ = SummarizeIterations(iteration_settings_, std::move(r.done.spans_ns));
        summary_ = WorkerSummary(o);
        done = true;
        break;
      }
      case RecordType::kError:
        worker_error_record_seen_ = true;
        worker_error_record_ = r.error;
        break;
      case RecordType::kScenario: {
        // The worker must run what the app asked for (and shows).
        std::string mismatch;
        try {
          ParamsFromScenarioRecord(r.scenario);  // its spec's names and ranges
          mismatch = ScenarioRecordMismatch(worker_sent_, r.scenario);
        } catch (const Error& e) {
          mismatch = e.what();
        }
        worker_echo_ = r.scenario;
        if (!mismatch.empty()) {
          worker_client_->Kill();
          FailWorker("the worker runs other settings than the app asked for: " + mismatch +
                     " (is it the same ShardLab version?)");
        }
        break;
      }
      default: break;  // hello: nothing to show yet
    }
  }
  store_.Add(batch_);
  batch_.clear();
  if (!records.empty()) worker_last_record_s_ = NowSeconds();
  if (state_ != SessionState::kRunning) return;
  if (done) {
    state_ = SessionState::kDone;
    return;  // later polls reap the worker as it exits
  }
  if (worker_client_->ended()) {
    std::string what;
    const std::string rank_failure = BackendTraitsOrDefault(worker_settings_.backend).under_mpirun
                                         ? MpiRankFailure(worker_client_->stderr_tail())
                                         : "";
    if (!rank_failure.empty()) {
      what = rank_failure;
    } else if (worker_error_record_seen_) {
      what = std::string(WorkerErrorKindName(worker_error_record_.kind)) + ": " +
             worker_error_record_.message;
    } else if (!worker_client_->protocol_error().empty()) {
      what = "its output broke off: " + worker_client_->protocol_error();
    } else {
      what = "it ended before the run was done";
      const std::string line = LastLine(worker_client_->stderr_tail());
      if (!line.empty()) what += ": " + line;
    }
    FailWorker(what + " (the worker " + worker_client_->DescribeEnd() + ")");
    return;
  }
  if (NowSeconds() - worker_last_record_s_ > worker_timeout_s_) {
    worker_client_->Kill();
    char text[120];
    std::snprintf(text, sizeof text, "it sent nothing for %.0f s and was stopped (%s)",
                  worker_timeout_s_, worker_client_->DescribeEnd().c_str());
    FailWorker(text);
  }
}

}  // namespace shardlab::gui
