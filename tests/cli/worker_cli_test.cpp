// `shardlab-cli worker`: the record stream a real process writes, the
// commands it obeys from stdin, and the faults it injects for the app's tests.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "engine/io/worker_protocol.h"
#include "engine/scenarios/scenario_record.h"
#include "engine/scenarios/scenario_spec.h"
#include "tests/common/run_program.h"

extern char** environ;

namespace shardlab {
namespace {

struct WorkerResult {
  test_util::ProgramResult process;
  std::vector<WorkerRecord> records;
  std::string stream_error;  // "" when stdout was whole records
};

/// Runs the worker with `commands` as its stdin and decodes its stdout.
WorkerResult RunWorker(const std::vector<std::string>& args, const std::vector<WorkerRecord>& commands) {
  test_util::TempDir dir;
  const std::string in_path = (dir.path() / "commands.bin").string();
  const std::string out_path = (dir.path() / "records.bin").string();
  const std::string err_path = (dir.path() / "stderr.txt").string();
  {
    std::vector<std::uint8_t> bytes;
    for (const WorkerRecord& c : commands) EncodeRecord(c, bytes);
    std::ofstream in(in_path, std::ios::binary);
    in.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  std::vector<std::string> words = {SHARDLAB_CLI_PATH, "worker"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(spawned, 0);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  WorkerResult result;
  if (WIFEXITED(status)) result.process.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.process.signal = WTERMSIG(status);
  result.process.err = test_util::ReadWholeFile(err_path);
  const std::string out = test_util::ReadWholeFile(out_path);
  RecordReader reader;
  reader.Feed(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(out.data()), out.size()));
  WorkerRecord record;
  while (reader.Next(&record) == DecodeStatus::kRecord) result.records.push_back(record);
  result.stream_error = reader.EndOfStreamError();
  return result;
}

int Count(const WorkerResult& r, RecordType type) {
  int n = 0;
  for (const WorkerRecord& record : r.records) n += record.type == type ? 1 : 0;
  return n;
}

const std::vector<std::string> kAllReduce4 = {"allreduce", "--ranks", "4", "--size", "1K", "--ring-order", "rank"};

TEST(WorkerCli, PlaysARunAsHelloPlanSnapshotsEventsAndACheckedEnd) {
  const WorkerResult r = RunWorker(kAllReduce4, {MakeCommand(RecordType::kPlay)});
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  ASSERT_EQ(r.stream_error, "");
  ASSERT_GE(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].type, RecordType::kHello);
  EXPECT_EQ(r.records[0].hello.backend, "sim");
  EXPECT_EQ(r.records[0].hello.ranks, 4);
  // Then the settings it runs, as the collective spec's name = value list
  // (protocol 2): the flags given, the spec's defaults for the rest.
  ASSERT_EQ(r.records[1].type, RecordType::kScenario);
  const ScenarioParams settings = ParamsFromScenarioRecord(r.records[1].scenario);
  EXPECT_EQ(settings.Text("kind"), "allreduce");
  EXPECT_EQ(settings.Text("ranks"), "4");
  EXPECT_EQ(settings.Text("algo"), "auto");
  EXPECT_EQ(settings.All().size(), FindScenario("collective")->params.size());
  ASSERT_EQ(r.records[2].type, RecordType::kPlan);
  EXPECT_EQ(r.records[2].plan.steps, 6);
  EXPECT_EQ(r.records[2].plan.ops, 48);
  EXPECT_EQ(Count(r, RecordType::kEvent), 48);
  EXPECT_EQ(Count(r, RecordType::kStepDone), 6);
  // Every buffer after every step, and the inputs.
  EXPECT_EQ(Count(r, RecordType::kBufferSnapshot), 7 * r.records[2].plan.buffers);
  const WorkerRecord& done = r.records.back();
  ASSERT_EQ(done.type, RecordType::kRunDone);
  EXPECT_TRUE(done.done.checked);
  EXPECT_TRUE(done.done.correct);
  EXPECT_EQ(done.done.elements_checked, 4 * 256);
  EXPECT_GT(done.done.busbw_gbps, 0);
}

TEST(WorkerCli, StepsOnlyAsFarAsItIsToldThenQuits) {
  const WorkerResult r = RunWorker(kAllReduce4, {MakeCommand(RecordType::kStep, 2), MakeCommand(RecordType::kQuit)});
  EXPECT_EQ(r.process.exit_code, 0) << r.process.err;
  EXPECT_EQ(Count(r, RecordType::kStepDone), 2);
  EXPECT_EQ(Count(r, RecordType::kRunDone), 0);
  EXPECT_EQ(Count(r, RecordType::kEvent), 16);  // 2 steps x 4 ranks x (send + recv)
}

TEST(WorkerCli, CancelEndsWithACancelledRecordAndCode130) {
  const WorkerResult r = RunWorker(kAllReduce4, {MakeCommand(RecordType::kStep, 1), MakeCommand(RecordType::kCancel)});
  EXPECT_EQ(r.process.exit_code, 130);
  ASSERT_FALSE(r.records.empty());
  EXPECT_EQ(r.records.back().type, RecordType::kError);
  EXPECT_EQ(r.records.back().error.kind, WorkerErrorKind::kCancelled);
}

TEST(WorkerCli, AStickyCudaFaultSendsTheErrorRecordAndExitsNonZero) {
  std::vector<std::string> args = kAllReduce4;
  args.insert(args.end(), {"--play", "--inject-fault", "sticky-cuda", "--fault-step", "3"});
  const WorkerResult r = RunWorker(args, {});
  EXPECT_EQ(r.process.exit_code, 3);
  EXPECT_EQ(Count(r, RecordType::kStepDone), 3);
  ASSERT_FALSE(r.records.empty());
  const WorkerRecord& error = r.records.back();
  ASSERT_EQ(error.type, RecordType::kError);
  EXPECT_EQ(error.error.kind, WorkerErrorKind::kStickyCuda);
  EXPECT_EQ(error.error.code, 700);
  EXPECT_NE(error.error.message.find("cudaErrorIllegalAddress"), std::string::npos);
  EXPECT_NE(r.process.err.find("cudaErrorIllegalAddress"), std::string::npos);
}

TEST(WorkerCli, ASignalFaultKillsTheProcess) {
  std::vector<std::string> args = kAllReduce4;
  args.insert(args.end(), {"--play", "--inject-fault", "signal"});
  const WorkerResult r = RunWorker(args, {});
  EXPECT_EQ(r.process.signal, SIGSEGV);
  EXPECT_EQ(Count(r, RecordType::kStepDone), 1);
}

TEST(WorkerCli, GarbageOnStdinIsAnErrorRecordNotAHang) {
  WorkerRecord not_a_command;
  not_a_command.type = RecordType::kHello;  // a worker->app record sent the wrong way
  const WorkerResult r = RunWorker(kAllReduce4, {not_a_command});
  EXPECT_EQ(r.process.exit_code, 1);
  ASSERT_FALSE(r.records.empty());
  EXPECT_EQ(r.records.back().type, RecordType::kError);
  EXPECT_NE(r.records.back().error.message.find("'hello' is not a command"), std::string::npos);
}

// -w/-n as `run`'s: the warm-up and the timed runs before the last run to
// their end unseen, the last is streamed, and the run-done record carries
// every timed run's span; the metrics are their average.
TEST(WorkerCli, WarmUpAndItersStreamTheLastRunAndSendEveryTimedSpan) {
  std::vector<std::string> args = kAllReduce4;
  args.insert(args.end(), {"--play", "--warmup", "1", "--iters", "3"});
  const WorkerResult r = RunWorker(args, {});
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  ASSERT_EQ(r.stream_error, "");
  // One run's events and steps: the last.
  EXPECT_EQ(Count(r, RecordType::kEvent), 48);
  EXPECT_EQ(Count(r, RecordType::kStepDone), 6);
  // Each run before the streamed one says it is done, in order, before any event.
  std::vector<int> runs_done;
  for (const WorkerRecord& record : r.records) {
    if (record.type == RecordType::kEvent) break;
    if (record.type == RecordType::kRunsDone) runs_done.push_back(record.step);
  }
  EXPECT_EQ(runs_done, (std::vector<int>{1, 2, 3}));  // 1 warm-up + 3 timed, the last streamed
  EXPECT_EQ(Count(r, RecordType::kRunsDone), 3);
  TimeNs streamed_end = 0;
  for (const WorkerRecord& record : r.records) {
    if (record.type == RecordType::kEvent) streamed_end = std::max(streamed_end, record.event.end_ns);
  }
  ASSERT_EQ(r.records.back().type, RecordType::kRunDone);
  const RunDoneRecord& done = r.records.back().done;
  EXPECT_EQ(done.warmup, 1);
  ASSERT_EQ(done.spans_ns.size(), 3u);
  // The simulator's runs are the same run: each span is the streamed one's end.
  for (TimeNs span : done.spans_ns) EXPECT_EQ(span, streamed_end);
  EXPECT_EQ(done.time_ns, streamed_end);
  EXPECT_TRUE(done.correct);

  // Without -w/-n: no warm-up on the simulator and one timed run, as `run`.
  const WorkerResult plain = RunWorker(kAllReduce4, {MakeCommand(RecordType::kPlay)});
  ASSERT_EQ(plain.records.back().type, RecordType::kRunDone);
  EXPECT_EQ(plain.records.back().done.warmup, 0);
  EXPECT_EQ(plain.records.back().done.spans_ns, std::vector<TimeNs>{streamed_end});
  EXPECT_EQ(Count(plain, RecordType::kRunsDone), 0);  // nothing runs before the streamed run
}

TEST(WorkerCli, ANegativeWarmUpOrNoTimedRunIsOneLineAndCode2) {
  for (const auto& [flag, value, says] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--warmup", "-1", "--warmup: must be at least 0 (got -1)"},
           {"-w", "-1", "-w: must be at least 0 (got -1)"},
           {"--iters", "0", "--iters: must be at least 1 (got 0)"},
           {"-n", "0", "-n: must be at least 1 (got 0)"}}) {
    std::vector<std::string> args = kAllReduce4;
    args.insert(args.end(), {"--play", flag, value});
    const WorkerResult r = RunWorker(args, {});
    EXPECT_EQ(r.process.exit_code, 2) << flag;
    EXPECT_EQ(r.process.err, "shardlab-cli: error: " + says + "\n");
    EXPECT_TRUE(r.records.empty()) << flag << ": records before the error";
  }
}

TEST(WorkerCli, BadFlagsAreOneLineAndCode2) {
  const WorkerResult r = RunWorker({"allreduce", "--inject-fault", "meteor"}, {});
  EXPECT_EQ(r.process.exit_code, 2);
  EXPECT_NE(r.process.err.find("--inject-fault: unknown fault 'meteor'"), std::string::npos) << r.process.err;
}

TEST(WorkerCli, MpiFaultNeedsTheMpiBackend) {
  // The worker's own --inject-fault stays its own; the mpi backend's fault
  // is --mpi-fault, and only with --backend mpi.
  const WorkerResult r = RunWorker({"allreduce", "--mpi-fault", "kill:rank=1,op=3"}, {});
  EXPECT_EQ(r.process.exit_code, 2);
  EXPECT_NE(r.process.err.find("--mpi-fault: only for --backend mpi (the backend is 'sim')"),
            std::string::npos)
      << r.process.err;
}

}  // namespace
}  // namespace shardlab
