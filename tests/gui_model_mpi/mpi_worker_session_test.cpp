// The app's MPI runs: a session whose backend is "mpi (worker process)"
// starts `mpirun -np 4 shardlab-cli worker ... --backend mpi` and streams
// rank 0's records back as for the sim worker. Checked against the
// in-process simulator (same ops, ranks, steps and bytes; buffer values
// equal the single-buffer reference), and a rank killed mid-run fails the
// run with mpirun's report naming the rank, leaves no process of the job
// behind, and a restart runs. Label mpi: needs mpirun.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "app/gui/model/session.h"
#include "engine/algorithms/verify.h"
#include "tests/gui_model/ring_settings.h"
#include "tests/gui_model/poll_session.h"

namespace shardlab::gui {
namespace {

bool PollUntil(Session& session, bool (*done)(Session&)) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!done(session)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    session.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}
bool NotRunning(Session& s) { return s.state() != SessionState::kRunning; }
bool Reaped(Session& s) { return s.worker_pid() <= 0; }

/// The CLI under a name no other process on the machine has: a link in
/// /tmp named after this test process and `tag`. Every process of the job
/// (mpirun, the ranks) has it on its command line, so pgrep finds what is
/// left of the job.
class MarkedCli {
 public:
  explicit MarkedCli(const std::string& tag)
      : path_("/tmp/shardlab-cli-mpitest-" + std::to_string(getpid()) + "-" + tag) {
    std::error_code error;
    std::filesystem::remove(path_, error);
    std::filesystem::create_symlink(SHARDLAB_CLI_PATH, path_);
  }
  ~MarkedCli() {
    std::error_code error;
    std::filesystem::remove(path_, error);
  }
  operator const std::string&() const { return path_; }

 private:
  std::string path_;
};

bool NoProcessWith(const std::string& marked_cli) {
  const std::string name = std::filesystem::path(marked_cli).filename().string();
  // "[s]hardlab..." matches "shardlab..." but not the shell running pgrep.
  const std::string command = "pgrep -f -- '[" + name.substr(0, 1) + "]" + name.substr(1) + "' >/dev/null";
  return std::system(command.c_str()) != 0;
}

ScenarioSettings MpiAllReduce() {
  ScenarioSettings s = test::RingAllReduce4x1K();
  s.backend = "mpi";
  s.in_worker = true;
  return s;
}

/// (op, rank, step, bytes) of every event, sorted: what must not depend on
/// the backend (times do: MPI runs on the host clock).
std::vector<std::tuple<int, int, int, Bytes>> EventKeys(const TimelineStore& store) {
  std::vector<std::tuple<int, int, int, Bytes>> keys;
  for (const TimelineRow& row : store.rows())
    for (const Event& e : row.events) keys.emplace_back(e.op, e.rank, e.step, e.bytes);
  std::sort(keys.begin(), keys.end());
  return keys;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(MpiWorkerSession, RunsThroughMpirunWithTheSimulatorsEventsAndCorrectValues) {
  const MarkedCli cli("same");
  Session local;
  ScenarioSettings in_app = MpiAllReduce();
  in_app.backend = "sim";
  in_app.in_worker = false;
  ASSERT_TRUE(local.Start(in_app)) << local.error();
  ASSERT_TRUE(PollUntil(local, NotRunning));
  ASSERT_EQ(local.state(), SessionState::kDone) << local.error();

  Session session;
  session.SetWorkerProgram(cli);
  ASSERT_TRUE(session.Start(MpiAllReduce())) << session.error();
  ASSERT_TRUE(PollUntil(session, NotRunning));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  ASSERT_TRUE(PollUntil(session, Reaped));
  EXPECT_TRUE(NoProcessWith(cli));

  EXPECT_EQ(session.steps_done(), local.steps_done());
  ASSERT_EQ(session.store().event_count(), local.store().event_count());
  EXPECT_EQ(EventKeys(session.store()), EventKeys(local.store()));
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).checked);
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
  EXPECT_EQ(test::Outcome<CollectiveOutcomeSummary>(session).verify.checked, test::Outcome<CollectiveOutcomeSummary>(local).verify.checked);

  // The values rank 0 gathered from every rank crossed mpirun's stdout
  // forwarding intact: checked here against the reference.
  const std::vector<std::vector<float>>& buffers = session.worker_buffers();
  ASSERT_EQ(buffers.size(), session.plan()->buffers.size());
  const VerifyResult verify = VerifyCollective(
      test::PreparedAs<PreparedCollective>(session, "collective")->params, *session.plan(), test::PreparedAs<PreparedCollective>(session, "collective")->scenario.seed,
      [&](BufferId id) { return std::span<const float>(buffers[static_cast<std::size_t>(id)]); });
  EXPECT_TRUE(verify.correct);
  EXPECT_EQ(verify.checked, 4 * 256);
}

TEST(MpiWorkerSession, AKilledRankFailsTheRunByNameLeavesNoProcessAndARestartRuns) {
  const MarkedCli cli("kill");
  Session session;
  session.SetWorkerProgram(cli);
  session.SetWorkerMpiOptions("", "kill:rank=1,op=3");
  ASSERT_TRUE(session.Start(MpiAllReduce())) << session.error();
  ASSERT_TRUE(PollUntil(session, NotRunning));
  ASSERT_EQ(session.state(), SessionState::kFailed);
  const std::string& failure = session.worker_failure();
  EXPECT_TRUE(Contains(failure, "rank 1 was killed by signal 9")) << failure;
  EXPECT_EQ(session.worker_pid(), -1);
  EXPECT_TRUE(NoProcessWith(cli));

  session.SetWorkerMpiOptions("", "");
  ASSERT_TRUE(session.RestartWorker()) << session.error();
  ASSERT_TRUE(PollUntil(session, NotRunning));
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_TRUE(test::Outcome<CollectiveOutcomeSummary>(session).verify.correct);
  ASSERT_TRUE(PollUntil(session, Reaped));
  EXPECT_TRUE(NoProcessWith(cli));
}

TEST(MpiWorkerSession, ARankThatSkipsTheCollectiveShowsTheDesyncReport) {
  const MarkedCli cli("skip");
  Session session;
  session.SetWorkerProgram(cli);
  session.SetWorkerMpiOptions("1s", "skip:rank=2,iter=1");
  ASSERT_TRUE(session.Start(MpiAllReduce())) << session.error();
  ASSERT_TRUE(PollUntil(session, NotRunning));
  ASSERT_EQ(session.state(), SessionState::kFailed);
  const std::string& failure = session.worker_failure();
  EXPECT_TRUE(Contains(failure, "--mpi-timeout")) << failure;
  EXPECT_TRUE(Contains(failure, "rank 2")) << failure;
  ASSERT_TRUE(PollUntil(session, Reaped));
  EXPECT_TRUE(NoProcessWith(cli));
}

}  // namespace
}  // namespace shardlab::gui
