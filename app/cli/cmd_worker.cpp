// `shardlab-cli worker COLLECTIVE [run's flags]`: the worker process the
// app starts for runs that must not share its process (real GPUs, MPI).
//
//   app ──commands (stdin)──►  worker: hello, plan, snapshots of step 0,
//                               then per step: events, snapshots, step done;
//   app ◄──records (stdout)──   at the end: run done (metrics, the check,
//                               every timed run's span).
//                               Logs and the one error line go to stderr.
//
// Its first records say who it is (hello) and what it runs (scenario: the
// collective spec's parameters, name = value, as the flags gave them).
//
// Warm-up and timed runs as `run`'s -w/-n (engine/run/iterations.h): the
// warm-up runs and every timed run but the last run to their end before
// anything is streamed; the last is the one streamed step by step, and the
// run-done record carries every timed run's span (the metrics are their
// average), so the app reports the same iterations as an in-process run.
//
// The worker starts paused (or playing with --play) and obeys step k,
// play, pause, cancel and quit between steps. A failure becomes an error
// record and a non-zero exit. When stdin ends (the app closed the pipe or
// died) a paused worker quits; one that writes to a closed pipe dies of
// SIGPIPE, so it never outlives the app for long.
//
// --inject-fault is for tests only: it makes the worker fail after
// --fault-step steps the way a real one can, so the app's crash handling is
// tested without a GPU (see WorkerFault below).
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>

#include "app/cli/collective_run.h"
#include "app/cli/commands.h"
#include "app/cli/iterations.h"
#include "app/cli/scenario_flags.h"
#include "engine/core/error.h"
#include "engine/run/backend.h"
#include "engine/run/executor.h"
#include "engine/run/iterations.h"
#include "engine/backends/mpi/process_group.h"
#include "engine/run/vector_sink.h"
#include "engine/io/worker_protocol.h"
#include "engine/scenarios/scenario_record.h"

namespace shardlab::cli {
namespace {

/// Buffers above this many floats in all are not snapshot (the app's
/// buffer view reads chunk states from the events; values are for checks).
constexpr std::size_t kMaxSnapshotTotalFloats = 1u << 16;

enum class WorkerFault { kNone, kStickyCuda, kSignal, kKill, kExit, kHang };

WorkerFault ParseFault(const ParsedArgs& args) {
  if (!args.Has("inject-fault")) return WorkerFault::kNone;
  const std::string text = args.Get("inject-fault");
  if (text == "sticky-cuda") return WorkerFault::kStickyCuda;
  if (text == "signal") return WorkerFault::kSignal;
  if (text == "kill") return WorkerFault::kKill;
  if (text == "exit") return WorkerFault::kExit;
  if (text == "hang") return WorkerFault::kHang;
  throw UsageError(args.Spelling("inject-fault") + ": unknown fault '" + text +
                   "' (use sticky-cuda, signal, kill, exit or hang)");
}

/// Writes all of `bytes` to fd 1. A closed pipe is the app gone: Error.
void WriteAll(const std::vector<std::uint8_t>& bytes) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw Error(std::string("worker: cannot write to the app: ") + std::strerror(errno),
                  ErrorKind::kRuntime);
    }
    at += static_cast<std::size_t>(n);
  }
}

/// Records waiting to be written; flushed at each step's end and whenever
/// it grows large, so a pipe is never written one event at a time.
class RecordOut {
 public:
  /// `silent`: a rank other than 0 of an mpi job (rank 0 writes for all).
  explicit RecordOut(bool silent) : silent_(silent) {}
  void Add(const WorkerRecord& record) {
    if (silent_) return;
    EncodeRecord(record, pending_);
    if (pending_.size() > (1u << 16)) Flush();
  }
  void Flush() {
    WriteAll(pending_);
    pending_.clear();
  }

 private:
  bool silent_;
  std::vector<std::uint8_t> pending_;
};

class EventRecordSink : public EventSink {
 public:
  explicit EventRecordSink(RecordOut& out) : out_(out) { record_.type = RecordType::kEvent; }
  void OnEvent(const Event& event) override {
    record_.event = event;
    out_.Add(record_);
  }

 private:
  RecordOut& out_;
  WorkerRecord record_;
};

/// Commands from stdin, read without blocking unless asked to wait.
class CommandIn {
 public:
  /// Appends every whole command available now to `out`; with `wait`,
  /// first waits until at least one arrives or stdin ends.
  void ReadAvailable(std::deque<WorkerRecord>& out, bool wait) {
    for (;;) {
      WorkerRecord command;
      DecodeStatus status;
      while ((status = reader_.Next(&command)) == DecodeStatus::kRecord) {
        out.push_back(command);
        wait = false;
      }
      if (status == DecodeStatus::kBad) {
        throw Error("worker: bad command stream: " + reader_.error(), ErrorKind::kRuntime);
      }
      if (ended_) return;
      pollfd fd{STDIN_FILENO, POLLIN, 0};
      const int ready = ::poll(&fd, 1, wait ? -1 : 0);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return;
      std::uint8_t buffer[4096];
      const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ended_ = true;
        continue;
      }
      reader_.Feed(std::span<const std::uint8_t>(buffer, static_cast<std::size_t>(n)));
    }
  }
  bool ended() const { return ended_; }

 private:
  RecordReader reader_;
  bool ended_ = false;
};

/// Fails the way `fault` says; returns only for kNone.
void InjectFault(WorkerFault fault, RecordOut& out, int step) {
  switch (fault) {
    case WorkerFault::kNone: return;
    case WorkerFault::kStickyCuda: {
      // What the CUDA backend sends when a kernel touched a bad address:
      // the context is poisoned, so the process must exit.
      WorkerRecord record;
      record.type = RecordType::kError;
      record.error.kind = WorkerErrorKind::kStickyCuda;
      record.error.code = 700;  // cudaErrorIllegalAddress
      record.error.message =
          "rank 0: cudaErrorIllegalAddress (700): an illegal memory access was encountered, "
          "after step " + std::to_string(step) +
          "; the CUDA context is lost until the process exits (injected by --inject-fault)";
      out.Add(record);
      out.Flush();
      std::cerr << kProgram << ": error: " << record.error.message << "\n";
      std::_Exit(3);
    }
    case WorkerFault::kSignal: {
      rlimit no_core{0, 0};
      ::setrlimit(RLIMIT_CORE, &no_core);  // a test must not leave core files
      ::signal(SIGSEGV, SIG_DFL);
      ::raise(SIGSEGV);
      std::_Exit(139);
    }
    case WorkerFault::kKill: ::raise(SIGKILL); std::_Exit(137);
    case WorkerFault::kExit: out.Flush(); std::_Exit(4);
    case WorkerFault::kHang:
      out.Flush();
      for (;;) ::pause();  // answers nothing until killed
  }
}

/// The collective spec's default --size (the worker's, as `run`'s).
std::string SizeDefault() { return ScenarioSpecOf("collective").FindParam("size")->default_text; }

}  // namespace

CommandSpec WorkerSpec() {
  CommandSpec s;
  s.name = "worker";
  s.summary = "run a collective as the app's worker process (binary records on stdout)";
  s.usage = "worker COLLECTIVE [run's flags] [--play] | xxd";
  s.description =
      "Runs one collective as 'run' does, but for a program, not a person: it writes\n"
      "length-prefixed records (hello, plan, events, buffer snapshots, step done, run done,\n"
      "error) to stdout and reads commands (step k, play, pause, cancel, quit) from stdin,\n"
      "as described in engine/io/worker_protocol.h. The app starts it for the backends\n"
      "that run in a worker, so that a crashed GPU run never takes the app down.\n"
      "Under mpirun with --backend mpi every rank runs it; rank 0 reads the commands,\n"
      "shares each decision with the other ranks before each step, and writes the records\n"
      "for the job (mpirun forwards its stdin and stdout). -w/-n run the warm-up and the timed\n"
      "runs before the last, which it streams; the run-done record carries every timed run's\n"
      "span and the metrics are their average, as 'run -n' reports. --mpi-timeout passes to the\n"
      "backend, and --mpi-fault KIND is the backend's --inject-fault (see 'run --help').\n"
      "Exit code 0 when the run is done (and correct), 1 on a failure, 3 on a sticky CUDA\n"
      "error, 130 when cancelled.";
  const ParamSpec& size = *ScenarioSpecOf("collective").FindParam("size");
  s.flags = {{"size", 's', "SIZE", "bytes of one rank's buffer " + ParamDefaultText(size)}};
  AddCollectiveFlags(s.flags);
  const std::vector<FlagSpec> own = {
      {"play", 0, "", "start running at once instead of waiting for a play or step command"},
      {"inject-fault", 0, "KIND",
       "for tests: fail after --fault-step steps: sticky-cuda (error record, exit 3), signal "
       "(SIGSEGV), kill (SIGKILL), exit (exit 4, no record) or hang (stop answering)"},
      {"fault-step", 0, "N", "for tests: steps run before the injected fault (default: 1)"},
  };
  s.flags.insert(s.flags.end(), own.begin(), own.end());
  AddIterationFlags(s.flags);  // -w/--warmup, -n/--iters: the last timed run is streamed
  s.max_positionals = 1;
  s.examples =
      "  shardlab-cli worker allreduce --ranks 4 --size 1K --play < /dev/null | xxd | head\n"
      "  shardlab-cli worker allreduce --ranks 4 --size 1K --play --inject-fault sticky-cuda "
      "< /dev/null > /dev/null\n"
      "  mpirun -np 4 --oversubscribe shardlab-cli worker allreduce --ranks 4 --size 1K "
      "--backend mpi --play < /dev/null | xxd | head\n";
  return s;
}

int WorkerMain(const ParsedArgs& args) {
  const CollectiveSetup setup = SetupFromArgs(args, "worker");
  const int element_bytes = DTypeBytes(setup.dtype);
  const Bytes size_bytes =
      ParseSizeValue(args.Spelling("size"), args.Get("size", SizeDefault()), element_bytes);
  if (size_bytes % element_bytes != 0) {
    throw UsageError(args.Spelling("size") + ": " + std::to_string(size_bytes) +
                     " B is not a whole number of " + DTypeName(setup.dtype) + " elements");
  }
  // The scenario's settings as its spec names them: the flags given, the
  // spec's defaults for the rest, and the worker's own --size.
  ScenarioParams settings = ParamsFromArgs(ScenarioSpecOf("collective"), args);
  settings.Set("kind", args.positionals().front());
  settings.Set("size", args.Get("size", SizeDefault()));
  const WorkerFault fault = ParseFault(args);
  const IterationSettings iterations = IterationsFromArgs(args, setup.backend);
  const int fault_step =
      args.Has("fault-step")
          ? static_cast<int>(ParseIntValue(args.Spelling("fault-step"), args.Get("fault-step"), 0, 1 << 30))
          : 1;
  // Under mpirun rank 0's stdout is the pty mpirun's output forwarding
  // gives it (raw: no newline translation), not a person's terminal.
  if (::isatty(STDOUT_FILENO) && CurrentProcessGroup().size == 1) {
    throw UsageError("worker: stdout is a terminal; the worker writes binary records for the "
                     "app (pipe it, e.g. '| xxd', or use 'run' for a table)");
  }

  std::unique_ptr<PreparedCollective> prepared = PrepareCollectiveAtSize(*setup.checked, size_bytes);
  RunOptions options;
  options.seed = setup.seed;
  options.emulate_links = setup.emulate_links;  // as `run` (collective_run.cpp)
  Bytes host_bytes = 0;
  for (const Buffer& b : prepared->plan.buffers) host_bytes += b.count * Bytes{sizeof(float)};
  std::string not_checked_reason;
  if (setup.timing_only) {
    options.timing_only = true;
    not_checked_reason = "timing only (--timing-only)";
  } else if (host_bytes > setup.verify_max_bytes) {
    options.timing_only = true;
    not_checked_reason = "timing only: the data needs " + FormatBytes(host_bytes) +
                         " of host memory, above --verify-max " + FormatBytes(setup.verify_max_bytes);
  }
  prepared->scenario.timing_only = options.timing_only;

  // Under --backend mpi every rank runs this; only rank 0 reads commands
  // and writes records (mpirun forwards its stdin and stdout).
  const bool reporter = CurrentProcessGroup().rank == 0;
  RecordOut out(!reporter);
  CommandIn in;
  // The model of this machine, as `run` applies it (on the simulator).
  Topology run_topology = prepared->topology;
  if (setup.this_machine) ApplyThisMachine(*setup.this_machine, setup.backend, &options, &run_topology);
  try {
    Executor executor(CreateBackend(setup.backend), std::move(prepared->plan), std::move(run_topology),
                      options);
    const Plan& plan = executor.plan();
    WorkerRecord hello;
    hello.type = RecordType::kHello;
    hello.hello.backend = setup.backend;
    hello.hello.ranks = plan.num_ranks;
    out.Add(hello);
    // The settings it runs, as the spec's name = value list: the app checks
    // them against what it asked for before it shows anything.
    WorkerRecord scenario_record;
    scenario_record.type = RecordType::kScenario;
    scenario_record.scenario = ScenarioRecordOf(settings);
    out.Add(scenario_record);
    WorkerRecord plan_record;
    plan_record.type = RecordType::kPlan;
    plan_record.plan = PlanRecord{plan.name, plan.num_ranks, plan.num_steps,
                                  static_cast<std::int64_t>(plan.ops.size()),
                                  static_cast<std::int32_t>(plan.buffers.size())};
    out.Add(plan_record);

    std::size_t total_floats = 0;
    for (const Buffer& b : plan.buffers) total_floats += static_cast<std::size_t>(b.count);
    const bool snapshots = !options.timing_only && total_floats <= kMaxSnapshotTotalFloats;
    auto send_snapshots = [&](int step) {
      if (!snapshots) return;
      WorkerRecord record;
      record.type = RecordType::kBufferSnapshot;
      record.snapshot.step = step;
      for (BufferId id = 0; id < static_cast<BufferId>(plan.buffers.size()); ++id) {
        const std::span<const float> data = executor.backend().BufferData(id);
        // An mpi rank holds only its own buffers until the last step
        // gathers them all: a partial snapshot is left out.
        if (data.size() != static_cast<std::size_t>(plan.buffers[id].count)) continue;
        record.snapshot.buffer = id;
        record.snapshot.values.assign(data.begin(), data.end());
        out.Add(record);
      }
    };
    send_snapshots(0);
    out.Flush();
    // Warm-up (first launches, cuBLAS's heuristics, a CUDA graph's
    // capture) and the timed runs before the last: the plan from its
    // inputs each time, not streamed; the streamed run starts from the
    // inputs again and is the last timed one. Each finished run is said
    // at once: a long warm-up is not silence to the app.
    std::vector<TimeNs> spans = RunBeforeTheLast(executor, iterations, [&](int runs_done) {
      out.Add(MakeCommand(RecordType::kRunsDone, runs_done));
      out.Flush();
    });

    EventRecordSink to_app(out);
    CountingSink span;
    TeeSink sink(to_app, span);
    bool playing = args.Has("play");
    int budget = 0;  // steps a "step k" command still allows
    int step = 0;
    // Commands take effect in order: "step 2, quit" runs two steps, then
    // quits. Only cancel jumps the queue: it stops the run at once.
    std::deque<WorkerRecord> pending;
    // What rank 0 decided from its commands, shared with every rank of an
    // mpi job before each step (mpirun gives stdin to rank 0 alone).
    enum Action : int { kRunStep = 0, kQuitRun = 1, kCancelRun = 2, kNobodyLeft = 3 };
    auto next_action = [&]() -> Action {
      for (;;) {
        in.ReadAvailable(pending, /*wait=*/!playing && budget == 0 && pending.empty());
        for (const WorkerRecord& command : pending) {
          if (command.type == RecordType::kCancel) return kCancelRun;
        }
        while (budget == 0 && !pending.empty()) {
          const WorkerRecord command = pending.front();
          pending.pop_front();
          switch (command.type) {
            case RecordType::kStep: budget += command.step; break;
            case RecordType::kPlay: playing = true; break;
            case RecordType::kPause: playing = false; break;
            case RecordType::kQuit: return kQuitRun;
            default:
              throw Error(std::string("worker: '") + RecordTypeName(command.type) +
                              "' is not a command",
                          ErrorKind::kRuntime);
          }
        }
        if (playing || budget > 0) return kRunStep;
        if (in.ended() && pending.empty()) return kNobodyLeft;
      }
    };
    while (step < plan.num_steps) {
      const Action action =
          static_cast<Action>(ShareFromRankZero(reporter ? next_action() : kRunStep));
      if (action == kCancelRun) {
        WorkerRecord cancelled;
        cancelled.type = RecordType::kError;
        cancelled.error.kind = WorkerErrorKind::kCancelled;
        cancelled.error.message = "run cancelled after step " + std::to_string(step);
        out.Add(cancelled);
        out.Flush();
        return 130;
      }
      if (action == kQuitRun) {
        out.Flush();
        return 0;
      }
      if (action == kNobodyLeft) return 0;
      if (!executor.StepOnce(sink)) break;
      ++step;
      if (budget > 0) --budget;
      send_snapshots(step);
      WorkerRecord done;
      done.type = RecordType::kStepDone;
      done.step = step;
      out.Add(done);
      out.Flush();
      if (step == std::min(fault_step, plan.num_steps)) InjectFault(fault, out, step);
    }

    spans.push_back(span.end_ns);
    const IterationTimes times = SummarizeIterations(iterations, std::move(spans));
    // As `run` -n: the metrics are the timed runs' average.
    const CollectiveOutcomeSummary summary =
        SummarizeCollective(*prepared, times.average_ns, span.count, executor.backend(), &plan);
    WorkerRecord done;
    done.type = RecordType::kRunDone;
    done.done.steps = step;
    done.done.events = static_cast<std::int64_t>(summary.events);
    done.done.size_bytes = summary.metrics.size_bytes;
    done.done.time_ns = summary.metrics.time_ns;
    done.done.algbw_gbps = summary.metrics.algbw_gbps;
    done.done.busbw_gbps = summary.metrics.busbw_gbps;
    done.done.checked = summary.checked;
    done.done.correct = summary.verify.correct;
    done.done.max_abs_err = summary.verify.max_abs_err;
    done.done.wrong = summary.verify.wrong;
    done.done.elements_checked = summary.verify.checked;
    done.done.not_checked_reason =
        !not_checked_reason.empty() ? not_checked_reason : summary.not_checked_reason;
    done.done.warmup = iterations.warmup;
    done.done.spans_ns = times.spans_ns;
    out.Add(done);
    out.Flush();
    return summary.checked && !summary.verify.correct ? 1 : 0;
  } catch (const Error& e) {
    // The app reads why from the record; a person reads stderr (main()).
    WorkerRecord error;
    error.type = RecordType::kError;
    error.error.kind = e.kind() == ErrorKind::kCancelled ? WorkerErrorKind::kCancelled
                                                         : WorkerErrorKind::kEngine;
    error.error.message = e.what();
    try {
      out.Add(error);
      out.Flush();
    } catch (const Error&) {
      // the app is gone; stderr still gets the line
    }
    if (CurrentProcessGroup().size > 1 && reporter) {
      // The other ranks may wait in the next step's broadcast, which a
      // finalizing rank 0 never answers: leaving without MPI_Finalize makes
      // mpirun stop the whole job instead of hanging. (Other ranks end as
      // any command does: after a timeout they give rank 0 time to report.)
      std::cerr << kProgram << ": error: " << e.what() << std::endl;
      std::_Exit(1);
    }
    throw;
  }
}

}  // namespace shardlab::cli
