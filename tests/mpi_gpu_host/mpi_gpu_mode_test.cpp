// The mpi backend's GPU mode without a GPU: mpirun runs tests/helpers'
// fake_gpu_rank, whose RankDevice keeps the rank's buffers in host memory
// and finishes work only after a few polls. What it checks is the mpi
// backend's side of --device gpu: sends staged through blocks before
// MPI_Isend, receives finished on the device after MPI_Irecv, local ops
// timed by the device's events, every staging block given back, NCCL's
// unique id broadcast intact, and a collective that never ends named by
// its sequence number after --mpi-timeout, its communicator aborted.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/launch/mpi_launcher.h"

namespace shardlab {
namespace {

MpiLaunchResult RunFake(int processes, const std::vector<std::string>& args,
                        const std::vector<std::string>& env = {}) {
  MpiLaunch launch;
  launch.processes = processes;
  launch.timeout_s = 120;
  launch.echo_stderr = false;
  launch.capture_stdout = true;
  for (const std::string& e : env) launch.extra_args.insert(launch.extra_args.end(), {"-x", e});
  launch.command = {SHARDLAB_FAKE_GPU_RANK_PATH};
  launch.command.insert(launch.command.end(), args.begin(), args.end());
  return RunMpiJob(launch);
}

std::string Describe(const MpiLaunchResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.stdout_text.substr(0, 3000) +
         "\nstderr:\n" + r.stderr_text.substr(0, 3000);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Field(const std::string& line, const std::string& name) {
  const std::size_t at = line.find(" " + name + "=");
  if (at == std::string::npos) return "";
  const std::size_t from = at + name.size() + 2;
  const std::size_t end = name == "placement" ? line.find('\n', from) : line.find(' ', from);
  return line.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

struct ModeCase {
  int processes;
  std::string collective;
  std::string algo;
};

void PrintTo(const ModeCase& c, std::ostream* os) {
  *os << c.collective << " " << c.algo << " on " << c.processes;
}

class MpiGpuMode : public ::testing::TestWithParam<ModeCase> {};

TEST_P(MpiGpuMode, StagedTransfersGiveTheReferenceResultAndEveryBlockBack) {
  const ModeCase& c = GetParam();
  const MpiLaunchResult r = RunFake(c.processes, {c.collective, c.algo, "65536"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string& out = r.stdout_text;
  ASSERT_TRUE(Contains(out, "ok ")) << Describe(r);
  EXPECT_EQ(Field(out, "correct"), "1") << out;
  EXPECT_EQ(Field(out, "events"), Field(out, "ops")) << out;
  EXPECT_EQ(Field(out, "held"), "0") << "staging blocks not given back: " << out;
  EXPECT_EQ(Field(out, "order"), "0") << "an op started before its dependency ended: " << out;
  EXPECT_EQ(Field(out, "placement"),
            "rank 0 on GPU 0 of " + std::to_string(c.processes) +
                " (host stand-in); transfers staged through pinned host memory (the MPI library "
                "is not CUDA-aware)")
      << out;
}

INSTANTIATE_TEST_SUITE_P(
    Collectives, MpiGpuMode,
    ::testing::Values(ModeCase{2, "allreduce", "ring"}, ModeCase{4, "allreduce", "ring"},
                      ModeCase{3, "allreduce", "tree"}, ModeCase{4, "allreduce", "tree"},
                      ModeCase{3, "reducescatter", "ring"}, ModeCase{3, "allgather", "ring"},
                      ModeCase{3, "broadcast", "ring"},
                      ModeCase{3, "alltoall", "direct"}),
    [](const ::testing::TestParamInfo<ModeCase>& p) {
      return p.param.collective + "_" + p.param.algo + "_" + std::to_string(p.param.processes);
    });

// ZeRO: matrix products, Adam and the gradient collectives, all through the
// device's deferred completion, against the single-device model.
class MpiGpuModeZero : public ::testing::TestWithParam<int> {};

TEST_P(MpiGpuModeZero, TrainsLikeTheSingleDeviceModel) {
  const MpiLaunchResult r = RunFake(4, {"zero", std::to_string(GetParam()), "2"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string& out = r.stdout_text;
  EXPECT_EQ(Field(out, "correct"), "1") << out;
  EXPECT_EQ(Field(out, "events"), Field(out, "ops")) << out;
  EXPECT_NE(Field(out, "device_events"), "0") << out;
  EXPECT_EQ(Field(out, "held"), "0") << out;
  EXPECT_EQ(Field(out, "order"), "0") << out;
}

INSTANTIATE_TEST_SUITE_P(Stages, MpiGpuModeZero, ::testing::Values(0, 3),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return "stage" + std::to_string(p.param);
                         });

// The device's clock maps a little late onto the host's (50 ms here): a
// send that waits for a device op still starts after that op ended.
TEST(MpiGpuModeTiming, TransfersStartNoEarlierThanTheDeviceOpsTheyWaitFor) {
  const MpiLaunchResult r = RunFake(4, {"zero", "0", "1"}, {"FAKE_GPU_CLOCK_SKEW_NS=50000000"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(Field(r.stdout_text, "correct"), "1") << Describe(r);
  EXPECT_EQ(Field(r.stdout_text, "order"), "0") << Describe(r);
}

TEST(MpiGpuModeTiming, LocalOpsCarryTheDevicesClockAndTransfersTheHosts) {
  // Direct all-to-all: one local copy per rank (its own block) besides the transfers.
  const MpiLaunchResult r = RunFake(3, {"alltoall", "direct", "4096"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(Field(r.stdout_text, "correct"), "1") << Describe(r);
  EXPECT_EQ(Field(r.stdout_text, "device_events"), "3") << Describe(r);
  EXPECT_EQ(Field(r.stdout_text, "events"), "15") << Describe(r);
}

TEST(MpiGpuModeNccl, ACollectiveThatNeverEndsIsNamedAndItsCommunicatorAborted) {
  const MpiLaunchResult r =
      RunFake(2, {"allreduce", "nccl", "4096", "2"}, {"FAKE_GPU_STALL_RANK=1"});
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.stderr_text, "rank 1: communicator aborted")) << Describe(r);
  EXPECT_TRUE(Contains(r.stderr_text, "no progress for 2 s (--mpi-timeout)")) << Describe(r);
  EXPECT_TRUE(Contains(r.stderr_text, "every rank waits in collective #1 and none is ahead (a hang "
                                      "inside it)"))
      << Describe(r);
}

TEST(MpiGpuModeNccl, TheUniqueIdReachesEveryRankAndTheCollectivesRun) {
  // The stand-in's collective moves no data, so only completion is checked.
  const MpiLaunchResult r = RunFake(3, {"allreduce", "nccl", "4096"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(Field(r.stdout_text, "events"), Field(r.stdout_text, "ops")) << Describe(r);
  EXPECT_EQ(Field(r.stdout_text, "device_events"), Field(r.stdout_text, "ops")) << Describe(r);
  // A clean run finalizes every communicator and aborts none.
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_TRUE(Contains(r.stderr_text, "rank " + std::to_string(rank) + ": communicator finalized"))
        << Describe(r);
  EXPECT_FALSE(Contains(r.stderr_text, "aborted")) << Describe(r);
}

TEST(MpiGpuModeNccl, ProcessesSharingAGpuAreRefusedOnceNamingBoth) {
  const MpiLaunchResult r = RunFake(2, {"allreduce", "nccl", "4096"}, {"FAKE_GPU_COUNT=1"});
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  const std::string message =
      "fake_gpu_rank: error: --algo nccl --device gpu: ranks 0 and 1 both hold GPU 0000:00:00.0 "
      "on host ";
  const std::size_t first = r.stderr_text.find(message);
  EXPECT_NE(first, std::string::npos) << Describe(r);
  EXPECT_EQ(r.stderr_text.find(message, first + 1), std::string::npos) << "reported twice";
}

// One visible GPU per process (CUDA_VISIBLE_DEVICES set per task): each
// counts one GPU and has local rank 0 of it, but no two share one.
TEST(MpiGpuModeNccl, ProcessesEachSeeingOneGpuOfTheirOwnRunNccl) {
  const MpiLaunchResult r =
      RunFake(2, {"allreduce", "nccl", "4096"}, {"FAKE_GPU_COUNT=1", "FAKE_GPU_OWN_BUS=1"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(Field(r.stdout_text, "events"), Field(r.stdout_text, "ops")) << Describe(r);
}

TEST(MpiGpuModeNccl, ProcessesSharingAGpuStillRunTheRing) {
  const MpiLaunchResult r = RunFake(2, {"allreduce", "ring", "4096"}, {"FAKE_GPU_COUNT=1"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(Field(r.stdout_text, "correct"), "1") << Describe(r);
  EXPECT_TRUE(Field(r.stdout_text, "placement").rfind("rank 0 on GPU 0 of 1 ", 0) == 0)
      << Describe(r);
}

// One rank's device cannot load (out of memory): the job ends at once with
// that rank's message, reported once, not with the others timing out in
// the clock alignment.
TEST(MpiGpuModeInput, ALoadFailureOnOneRankEndsTheJobWithItsMessage) {
  const MpiLaunchResult r =
      RunFake(3, {"allreduce", "ring", "4096", "5"}, {"FAKE_GPU_LOAD_FAIL_RANK=1"});
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  const std::string message =
      "fake_gpu_rank: error: rank 1: cudaMalloc: out of memory (injected)\n";
  const std::size_t first = r.stderr_text.find(message);
  EXPECT_NE(first, std::string::npos) << Describe(r);
  EXPECT_EQ(r.stderr_text.find(message, first + 1), std::string::npos) << "reported twice";
  EXPECT_FALSE(Contains(r.stderr_text, "no progress")) << Describe(r);
}

TEST(MpiGpuModeInput, DirectTransfersOnAnMpiThatIsNotCudaAwareAreRefusedOnce) {
  const MpiLaunchResult r =
      RunFake(2, {"allreduce", "ring", "4096"}, {"SHARDLAB_MPI_GPU_TRANSFER=direct"});
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  const std::string message =
      "fake_gpu_rank: error: SHARDLAB_MPI_GPU_TRANSFER=direct: this MPI library is not CUDA-aware";
  const std::size_t first = r.stderr_text.find(message);
  EXPECT_NE(first, std::string::npos) << Describe(r);
  EXPECT_EQ(r.stderr_text.find(message, first + 1), std::string::npos) << "reported twice";
}

}  // namespace
}  // namespace shardlab
