// Worker runs: the collective runs in `shardlab-cli worker`, and a worker
// that fails the way a poisoned CUDA process does (or dies of a signal,
// exits, hangs) fails the run, never the test process, which then restarts
// the worker and gets a correct run. No GPU needed: the faults are injected.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <chrono>
#include <string>
#include <thread>

#include "app/gui/model/session.h"
#include "engine/algorithms/verify.h"
#include "engine/io/trace_writer.h"
#include "tests/gui_model/ring_settings.h"
#include "tests/gui_model/poll_session.h"

namespace shardlab::gui {
namespace {

using test::PollUntilDone;

/// Polls until the finished worker has been reaped too.
bool PollUntilReaped(Session& session) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (session.worker_pid() > 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    session.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// True when `pid` is no child of ours any more: reaped, no zombie left.
bool Reaped(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == -1 && errno == ECHILD;
}

ScenarioSettings WorkerAllReduce() {
  ScenarioSettings s = test::RingAllReduce4x1K();
  s.backend = "sim";
  s.in_worker = true;
  return s;
}

void StartWorker(Session& session, const ScenarioSettings& settings) {
  session.SetWorkerProgram(SHARDLAB_CLI_PATH);
  ASSERT_TRUE(session.Start(settings)) << session.error();
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(WorkerSession, StreamsTheSameRunAsTheInProcessSimulator) {
  Session local;
  ScenarioSettings in_app = WorkerAllReduce();
  in_app.in_worker = false;
  ASSERT_TRUE(local.Start(in_app)) << local.error();
  ASSERT_TRUE(PollUntilDone(local));
  ASSERT_EQ(local.state(), SessionState::kDone) << local.error();

  Session session;
  StartWorker(session, WorkerAllReduce());
  EXPECT_TRUE(session.worker_run());
  const pid_t pid = session.worker_pid();
  EXPECT_GT(pid, 0);
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  ASSERT_TRUE(PollUntilReaped(session));
  EXPECT_TRUE(Reaped(pid));

  // Same events, op for op, at the same simulated times.
  ASSERT_EQ(session.store().event_count(), local.store().event_count());
  EXPECT_EQ(session.steps_done(), local.steps_done());
  EXPECT_EQ(session.store().steps_seen(), local.store().steps_seen());
  EXPECT_EQ(session.store().end_ns(), local.store().end_ns());
  // The buffer view's snapshots, rebuilt from the streamed events.
  ASSERT_EQ(session.buffer_snapshots().size(), local.buffer_snapshots().size());
  for (std::size_t i = 0; i < local.buffer_snapshots().size(); ++i) {
    const BufferSnapshot& a = session.buffer_snapshots()[i];
    const BufferSnapshot& b = local.buffer_snapshots()[i];
    ASSERT_EQ(a.ranks.size(), b.ranks.size());
    for (std::size_t r = 0; r < a.ranks.size(); ++r) {
      for (std::size_t c = 0; c < a.ranks[r].size(); ++c) {
        EXPECT_EQ(a.ranks[r][c].label, b.ranks[r][c].label) << "step " << i << " rank " << r;
      }
    }
  }
  // The worker's verdict and metrics.
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).checked);
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
  EXPECT_EQ(test::Outcome<CollectiveOutcomeSummary>(session).verify.checked, test::Outcome<CollectiveOutcomeSummary>(local).verify.checked);
  EXPECT_EQ(test::Outcome<CollectiveOutcomeSummary>(session).metrics.time_ns, test::Outcome<CollectiveOutcomeSummary>(local).metrics.time_ns);
  EXPECT_EQ(test::Outcome<CollectiveOutcomeSummary>(session).metrics.busbw_gbps, test::Outcome<CollectiveOutcomeSummary>(local).metrics.busbw_gbps);

  // The streamed buffer values, checked here against the single-buffer
  // reference: the data really crossed the pipe.
  const std::vector<std::vector<float>>& buffers = session.worker_buffers();
  ASSERT_EQ(buffers.size(), session.plan()->buffers.size());
  const VerifyResult verify = VerifyCollective(
      test::PreparedAs<PreparedCollective>(session, "collective")->params, *session.plan(), test::PreparedAs<PreparedCollective>(session, "collective")->scenario.seed,
      [&](BufferId id) { return std::span<const float>(buffers[static_cast<std::size_t>(id)]); });
  EXPECT_TRUE(verify.correct);
  EXPECT_EQ(verify.checked, 4 * 256);
}

// Warm-up and timed runs in the worker: the metrics panel's line, the
// spans and the metrics are those of the same settings run in process.
TEST(WorkerSession, WarmUpAndTimedRunsReportWhatAnInProcessRunReports) {
  ScenarioSettings settings = WorkerAllReduce();
  settings.warmup = 1;
  settings.iters = 3;
  Session session;
  StartWorker(session, settings);
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_EQ(session.worker_runs_done(), 3);  // the warm-up and two timed runs before the shown one

  Session local;
  settings.in_worker = false;
  ASSERT_TRUE(local.Start(settings)) << local.error();
  ASSERT_TRUE(PollUntilDone(local));
  ASSERT_EQ(local.state(), SessionState::kDone) << local.error();

  EXPECT_EQ(session.iterations().settings.warmup, 1);
  EXPECT_EQ(session.iterations().settings.iters, 3);
  ASSERT_EQ(session.iterations().spans_ns.size(), 3u);
  EXPECT_EQ(session.iterations().spans_ns, local.iterations().spans_ns);
  EXPECT_EQ(session.iterations().average_ns, local.iterations().average_ns);
  EXPECT_EQ(session.iterations().best_ns, local.iterations().best_ns);
  EXPECT_EQ(session.iterations_line(), local.iterations_line());
  EXPECT_EQ(session.iterations_line().rfind("average of 3 runs: ", 0), 0u) << session.iterations_line();
  EXPECT_NE(session.iterations_line().find("; 1 warm-up run excluded"), std::string::npos);
  EXPECT_EQ(test::Outcome<CollectiveOutcomeSummary>(session).metrics.time_ns, test::Outcome<CollectiveOutcomeSummary>(local).metrics.time_ns);
  EXPECT_EQ(test::Outcome<CollectiveOutcomeSummary>(session).metrics.busbw_gbps, test::Outcome<CollectiveOutcomeSummary>(local).metrics.busbw_gbps);
  // The timeline holds the last run only, as in process.
  EXPECT_EQ(session.store().event_count(), local.store().event_count());
  EXPECT_EQ(session.store().end_ns(), local.store().end_ns());
}

// "This machine" in the worker runs the model the app names: the worker's
// time is the in-process run's (both the simulator on the model of one H200
// holding 8 virtual ranks), and far from the same plan without the model.
TEST(WorkerSession, ThisMachineInTheWorkerRunsTheModelOfTheMachine) {
  ScenarioSettings settings = WorkerAllReduce();
  settings.topology = "this";
  settings.device_profile = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200.toml";
  settings.machine_gpus = 1;
  settings.SetParam("ranks", "8");
  settings.SetParam("size", "64M");
  settings.SetParam("timing_only", "true");
  Session session;
  StartWorker(session, settings);
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();

  Session local;
  settings.in_worker = false;
  ASSERT_TRUE(local.Start(settings)) << local.error();
  ASSERT_TRUE(PollUntilDone(local));
  ASSERT_EQ(local.state(), SessionState::kDone) << local.error();
  EXPECT_DOUBLE_EQ(test::Outcome<CollectiveOutcomeSummary>(session).metrics.time_ns, test::Outcome<CollectiveOutcomeSummary>(local).metrics.time_ns);
  EXPECT_DOUBLE_EQ(session.store().end_ns(), local.store().end_ns());
  // The model charges the host's issue cost per op: without it the 64 MiB ring is far shorter.
  EXPECT_GT(test::Outcome<CollectiveOutcomeSummary>(local).metrics.time_ns, 300e3);
}

// A worker that timed other runs than the app asked for (here one that
// ignores --iters: an older build) fails the run with one message instead of
// showing an average over the wrong runs.
TEST(WorkerSession, AWorkerThatTimedAnotherCountOfRunsFailsTheRun) {
  const std::string script = ::testing::TempDir() + "/worker_without_iters.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/bash\n"
           "args=()\n"
           "while [ $# -gt 0 ]; do\n"
           "  if [ \"$1\" = --iters ]; then shift 2; continue; fi\n"
           "  args+=(\"$1\"); shift\n"
           "done\n"
           "exec '" SHARDLAB_CLI_PATH "' \"${args[@]}\"\n";
  }
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  ScenarioSettings settings = WorkerAllReduce();
  settings.iters = 3;
  Session session;
  session.SetWorkerProgram(script);
  ASSERT_TRUE(session.Start(settings)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kFailed);
  EXPECT_EQ(session.worker_failure(),
            "the worker ran 0 warm-up and 1 timed runs where the app asked for 0 and 3 "
            "(is it the same ShardLab version?)");
  EXPECT_TRUE(session.iterations().spans_ns.empty());

  // The same wrapper with one timed run asked: nothing to drop, a good run.
  settings.iters = 1;
  ASSERT_TRUE(session.Start(settings)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
}

TEST(WorkerSession, StickyCudaErrorKillsTheWorkerNotTheAppAndARestartRuns) {
  Session session;
  session.SetWorkerFault("sticky-cuda", 2);
  StartWorker(session, WorkerAllReduce());
  const pid_t pid = session.worker_pid();
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kFailed);
  const std::string& failure = session.worker_failure();
  EXPECT_TRUE(Contains(failure, "sticky CUDA error")) << failure;
  EXPECT_TRUE(Contains(failure, "cudaErrorIllegalAddress")) << failure;
  EXPECT_TRUE(Contains(failure, "exited with code 3")) << failure;
  EXPECT_TRUE(Contains(session.error(), failure));
  EXPECT_EQ(session.worker_pid(), -1);
  EXPECT_TRUE(Reaped(pid));
  // The two steps before the fault were streamed and stay visible.
  EXPECT_EQ(session.steps_done(), 2);
  EXPECT_EQ(session.store().steps_seen(), 2);

  session.SetWorkerFault("");
  ASSERT_TRUE(session.RestartWorker()) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_TRUE(session.worker_failure().empty());
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
  EXPECT_EQ(session.store().event_count(), session.plan()->ops.size());
}

TEST(WorkerSession, AWorkerKilledByASignalIsNamedAndReaped) {
  Session session;
  session.SetWorkerFault("signal");
  StartWorker(session, WorkerAllReduce());
  const pid_t pid = session.worker_pid();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kFailed);
  EXPECT_TRUE(Contains(session.worker_failure(), "killed by SIGSEGV")) << session.worker_failure();
  EXPECT_TRUE(Reaped(pid));

  session.SetWorkerFault("");
  ASSERT_TRUE(session.RestartWorker());
  ASSERT_TRUE(PollUntilDone(session));
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
}

TEST(WorkerSession, AWorkerThatExitsEarlySaysWithWhichCode) {
  Session session;
  session.SetWorkerFault("exit");
  StartWorker(session, WorkerAllReduce());
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kFailed);
  EXPECT_TRUE(Contains(session.worker_failure(), "ended before the run was done"));
  EXPECT_TRUE(Contains(session.worker_failure(), "exited with code 4")) << session.worker_failure();
}

TEST(WorkerSession, AHangingWorkerIsKilledAfterTheTimeout) {
  Session session;
  session.SetWorkerFault("hang");
  session.SetWorkerTimeout(0.5);
  StartWorker(session, WorkerAllReduce());
  const pid_t pid = session.worker_pid();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kFailed);
  EXPECT_TRUE(Contains(session.worker_failure(), "sent nothing")) << session.worker_failure();
  EXPECT_TRUE(Contains(session.worker_failure(), "SIGKILL")) << session.worker_failure();
  EXPECT_TRUE(Reaped(pid));
}

TEST(WorkerSession, CancelKillsAndReapsARunningWorker) {
  Session session;
  session.SetWorkerFault("hang");  // so that it is surely still running
  StartWorker(session, WorkerAllReduce());
  const pid_t pid = session.worker_pid();
  session.Poll();
  session.Cancel();
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_EQ(session.error(), "run cancelled");
  EXPECT_TRUE(Reaped(pid));
}

TEST(WorkerSession, ABackendTheWorkerLacksFailsWithItsMessage) {
  Session session;
  ScenarioSettings settings = WorkerAllReduce();
  settings.backend = "no-such-backend";
  EXPECT_EQ(session.Check(settings), "");  // the app cannot know the worker's backends
  StartWorker(session, settings);
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kFailed);
  EXPECT_TRUE(Contains(session.worker_failure(), "unknown backend 'no-such-backend'"))
      << session.worker_failure();
  EXPECT_TRUE(Contains(session.worker_failure(), "exited with code 2")) << session.worker_failure();
}

TEST(WorkerSession, RunsUnderALauncherAsMpirunWould) {
  Session session;
  session.SetWorkerLauncher({"/usr/bin/env", "SHARDLAB_UNDER_LAUNCHER=1"});  // stands in for mpirun -np N
  StartWorker(session, WorkerAllReduce());
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
}

TEST(WorkerSession, AMissingWorkerProgramIsOneClearMessage) {
  Session session;
  session.SetWorkerProgram("/nonexistent/shardlab-cli");
  EXPECT_FALSE(session.Start(WorkerAllReduce()));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_TRUE(Contains(session.worker_failure(), "cannot start /nonexistent/shardlab-cli"))
      << session.worker_failure();
}

}  // namespace
}  // namespace shardlab::gui

namespace shardlab::gui {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name;
}

TEST(TraceSession, OpensATraceTheWorkerRunWroteAndShowsTheSameEvents) {
  Session run;
  run.SetWorkerProgram(SHARDLAB_CLI_PATH);
  ASSERT_TRUE(run.Start(WorkerAllReduce())) << run.error();
  ASSERT_TRUE(PollUntilDone(run));
  ASSERT_EQ(run.state(), SessionState::kDone) << run.error();
  std::vector<Event> events;
  for (const TimelineRow& row : run.store().rows()) events.insert(events.end(), row.events.begin(), row.events.end());
  const std::string path = TempPath("worker_run.json");
  TraceInfo info;
  info.backend = "sim (worker process)";
  WriteChromeTraceFile(path, *run.plan(), *run.topology(), events, info);

  Session viewer;
  std::string message;
  ASSERT_TRUE(viewer.OpenTrace(path, &message)) << message;
  EXPECT_EQ(message, "");
  ASSERT_NE(viewer.trace(), nullptr);
  EXPECT_EQ(viewer.state(), SessionState::kDone);
  ASSERT_NE(viewer.plan(), nullptr);
  ASSERT_NE(viewer.topology(), nullptr);
  EXPECT_EQ(viewer.topology()->name, "dgx-a100");
  EXPECT_EQ(viewer.backend(), "sim (worker process)");
  EXPECT_EQ(viewer.num_steps(), run.num_steps());
  EXPECT_EQ(viewer.store().event_count(), run.store().event_count());
  EXPECT_EQ(viewer.store().steps_seen(), run.store().steps_seen());
  EXPECT_NEAR(viewer.store().end_ns(), run.store().end_ns(), 1e-3);
  for (int k = 0; k < run.store().steps_seen(); ++k) {
    EXPECT_NEAR(viewer.store().StepEndNs(k), run.store().StepEndNs(k), 1e-3) << "step " << k;
  }
}

TEST(TraceSession, ABrokenTraceIsOneMessageAndTheRunOnScreenStays) {
  Session session;
  ScenarioSettings settings = WorkerAllReduce();
  settings.in_worker = false;
  ASSERT_TRUE(session.Start(settings));
  ASSERT_TRUE(PollUntilDone(session));
  const std::size_t events = session.store().event_count();

  const std::string path = TempPath("broken.json");
  {
    std::ofstream out(path);
    out << R"({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1000000, "ts": 0, "dur": 1})";
  }
  std::string message;
  EXPECT_FALSE(session.OpenTrace(path, &message));
  EXPECT_TRUE(Contains(message, path + ":1:")) << message;
  EXPECT_EQ(session.trace(), nullptr);
  EXPECT_EQ(session.state(), SessionState::kDone);
  EXPECT_EQ(session.store().event_count(), events);
  EXPECT_NE(session.prepared(), nullptr);

  EXPECT_FALSE(session.OpenTrace("/nonexistent/trace.json", &message));
  EXPECT_TRUE(Contains(message, "cannot open")) << message;
}

}  // namespace
}  // namespace shardlab::gui
