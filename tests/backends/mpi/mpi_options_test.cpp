// The MPI-free parts of the mpi backend: its flags, rank 0's desync verdict
// and the launcher's reading of mpirun's failure reports (no MPI needed).
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/backends/mpi/desync_report.h"
#include "engine/launch/mpi_launcher.h"
#include "engine/backends/mpi/mpi_options.h"

namespace shardlab {
namespace {

TEST(MpiOptions, TimeoutsReadSecondsMillisecondsAndMinutes) {
  EXPECT_DOUBLE_EQ(ParseMpiTimeout("--mpi-timeout", "5s"), 5e9);
  EXPECT_DOUBLE_EQ(ParseMpiTimeout("--mpi-timeout", "500ms"), 5e8);
  EXPECT_DOUBLE_EQ(ParseMpiTimeout("--mpi-timeout", "2m"), 120e9);
  EXPECT_DOUBLE_EQ(ParseMpiTimeout("--mpi-timeout", "30"), 30e9);
  for (const char* bad : {"", "0s", "-1s", "5h", "s", "fast"}) {
    try {
      ParseMpiTimeout("--mpi-timeout", bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--mpi-timeout: ", 0), 0u) << e.what();
    }
  }
}

TEST(MpiOptions, DevicesAreHostOrGpu) {
  EXPECT_EQ(MpiOptions{}.device, MpiDevice::kHost);
  EXPECT_EQ(ParseMpiDevice("--device", "host"), MpiDevice::kHost);
  EXPECT_EQ(ParseMpiDevice("--device", "gpu"), MpiDevice::kGpu);
  for (const char* bad : {"", "GPU", "cuda", "gpu0"}) {
    try {
      ParseMpiDevice("--device", bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--device: unknown device '", 0), 0u) << e.what();
    }
  }
}

TEST(MpiOptions, FaultsParseAndRoundTrip) {
  const MpiFault exit_fault = ParseMpiFault("--inject-fault", "exit:rank=1,op=7");
  EXPECT_EQ(exit_fault.kind, MpiFaultKind::kExit);
  EXPECT_EQ(exit_fault.rank, 1);
  EXPECT_EQ(exit_fault.op, 7);
  const MpiFault skip = ParseMpiFault("--inject-fault", "skip:rank=2,iter=3");
  EXPECT_EQ(skip.kind, MpiFaultKind::kSkip);
  EXPECT_EQ(skip.iter, 3);
  EXPECT_EQ(DescribeMpiFault(skip), "skip:rank=2,iter=3");
  for (const char* bad : {"exit", "boom:rank=1,op=2", "exit:rank=1", "skip:rank=1,op=2",
                          "exit:rank=1,op=0", "exit:rank=x,op=2", "exit:rank=1;op=2"}) {
    EXPECT_THROW(ParseMpiFault("--inject-fault", bad), Error) << bad;
  }
}

RankStall InOps(int rank, int waits_for, std::int64_t seq) {
  RankStall s;
  s.rank = rank;
  s.answered = true;
  s.phase = StallPhase::kOps;
  s.waiting_on = waits_for;
  s.op = 10 + rank;
  s.seq = seq;
  s.last_done_seq = seq - 1;
  s.step = 0;
  return s;
}

TEST(DesyncReport, TheRankAheadNeverJoinedTheOthersCollective) {
  const std::vector<RankStall> ranks = {InOps(0, 3, 3), InOps(1, 0, 3), InOps(2, 1, 4),
                                        InOps(3, 2, 3)};
  const std::string text = DescribeDesync(ranks);
  EXPECT_EQ(text.rfind("rank 2 never joined collective #3 (rank 2 is at #4, while ranks 0, 1 "
                       "and 3 wait in #3)",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("rank 3 waits for rank 2 in collective #3 (op 13, step 0)"),
            std::string::npos)
      << text;
}

TEST(DesyncReport, ASilentRankStoppedAnswering) {
  std::vector<RankStall> ranks = {InOps(0, 2, 1), RankStall{}, InOps(2, 1, 1)};
  ranks[1].rank = 1;
  const std::string text = DescribeDesync(ranks);
  EXPECT_EQ(text.rfind("rank 1 stopped answering (stuck or dead); ranks 0 and 2 wait in "
                       "collective #1",
                       0),
            0u)
      << text;
}

TEST(DesyncReport, AStallInTheGpuSetUpIsNamedAsSuch) {
  RankStall s;
  s.rank = 1;
  s.answered = true;
  s.phase = StallPhase::kDeviceSetUp;
  EXPECT_EQ(s.Describe(), "rank 1 waits in the device set-up");
  s.phase = StallPhase::kClockAlignment;
  EXPECT_EQ(s.Describe(), "rank 1 waits in the clock alignment");
}

TEST(DesyncReport, EveryRankInOneCollectiveIsAHangInsideIt) {
  const std::string text = DescribeDesync({InOps(0, 1, 2), InOps(1, 0, 2)});
  EXPECT_EQ(text.rfind("every rank waits in collective #2", 0), 0u) << text;
}

TEST(MpiLauncher, ReadsOpenMpisReportOfAnExitCode) {
  const std::string report =
      "--------------------------------------------------------------------------\n"
      "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
      "the job to be terminated. The first process to do so was:\n\n"
      "  Process name: [[31504,1],1]\n"
      "  Exit code:    3\n"
      "--------------------------------------------------------------------------\n";
  EXPECT_EQ(DescribeMpirunFailure(report),
            "rank 1 exited with code 3 during the run; mpirun stopped the other ranks");
}

TEST(MpiLauncher, ReadsOpenMpisReportOfASignal) {
  EXPECT_EQ(DescribeMpirunFailure("mpirun noticed that process rank 2 with PID 0 on node vm "
                                  "exited on signal 9 (Killed).\n"),
            "rank 2 was killed by signal 9 (Killed) during the run; mpirun stopped the other ranks");
  EXPECT_EQ(DescribeMpirunFailure("all fine\n"), "");
}

TEST(MpiLauncher, BuildsTheMpirunCommandLine) {
  MpiLaunch launch;
  launch.processes = 4;
  launch.timeout_s = 60;
  launch.command = {"/bin/true", "x"};
  const std::vector<std::string> argv = MpirunArgv(launch);
  const std::vector<std::string> expected = {"mpirun", "--oversubscribe", "-np", "4",
                                             "--timeout", "60", "/bin/true", "x"};
  EXPECT_EQ(argv, expected);
}

}  // namespace
}  // namespace shardlab
