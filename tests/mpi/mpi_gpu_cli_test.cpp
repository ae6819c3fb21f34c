// --device gpu and --algo nccl on the mpi backend, as far as a machine
// without a GPU can check them: the job ends with one message from rank 0
// and no process left behind, and NCCL without GPU buffers is refused
// naming the flags. On a machine with a GPU the no-device test skips.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;
using test_util::Describe;
using test_util::ProgramResult;
using test_util::TempDir;

ProgramResult RunMpi(int processes, const std::vector<std::string>& words, const fs::path& dir) {
  return test_util::RunCliUnderMpi(SHARDLAB_CLI_PATH, processes, words, dir);
}

std::size_t Occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

bool MachineHasGpu() { return fs::exists("/dev/nvidiactl") || fs::exists("/dev/nvidia0"); }

std::string UniqueSeed() { return std::to_string(800000000 + getpid() % 1000000) + "3"; }

bool NoProcessWith(const std::string& marker) {
  const std::string command =
      "pgrep -f -- 'seed [" + marker.substr(0, 1) + "]" + marker.substr(1) + "' >/dev/null";
  return std::system(command.c_str()) != 0;
}

TEST(MpiGpu, WithoutACudaDeviceTheJobEndsWithOneMessageFromRankZero) {
  if (MachineHasGpu()) GTEST_SKIP() << "this machine has a GPU: the no-device path cannot happen";
  TempDir dir;
  const std::string seed = UniqueSeed();
  const ProgramResult r = RunMpi(2, {"run", "allreduce", "--ranks", "2", "--size", "1K",
                                     "--backend", "mpi", "--device", "gpu", "--seed", seed},
                                 dir.path());
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(Occurrences(r.err, "error:"), 1u) << Describe(r);
  EXPECT_EQ(Occurrences(r.err, "shardlab-cli: error: no CUDA device: "), 1u) << Describe(r);
  EXPECT_TRUE(NoProcessWith(seed)) << "a process of the job is still running";
}

TEST(MpiGpu, NcclOnGpusWithoutACudaDeviceEndsWithTheSameOneMessage) {
  if (MachineHasGpu()) GTEST_SKIP() << "this machine has a GPU: the no-device path cannot happen";
  TempDir dir;
  const std::string seed = UniqueSeed();
  const ProgramResult r =
      RunMpi(2, {"run", "allreduce", "--ranks", "2", "--size", "1K", "--backend", "mpi", "--device",
                 "gpu", "--algo", "nccl", "--seed", seed},
             dir.path());
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(Occurrences(r.err, "error:"), 1u) << Describe(r);
  EXPECT_EQ(Occurrences(r.err, "shardlab-cli: error: no CUDA device: "), 1u) << Describe(r);
  EXPECT_TRUE(NoProcessWith(seed)) << "a process of the job is still running";
}

TEST(MpiGpu, NcclWithoutDeviceGpuIsRefusedNamingTheFlags) {
  TempDir dir;
  const ProgramResult r = RunMpi(2, {"run", "allreduce", "--ranks", "2", "--size", "1K",
                                     "--backend", "mpi", "--algo", "nccl"},
                                 dir.path());
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_EQ(Occurrences(r.err, "error:"), 1u) << Describe(r);
  EXPECT_EQ(Occurrences(r.err, "--algo nccl with --backend mpi needs --device gpu"), 1u)
      << Describe(r);
}

}  // namespace
}  // namespace shardlab
