// scripts/gpu-check.sh --dry-run on a machine without a GPU (this one, and
// CI's): it lists every step a real run would take and exits 0, builds and
// writes nothing. Whether there is a GPU is read from `nvidia-smi -L`'s
// "GPU N: ..." lines only: a broken driver's error text lists no GPU. A fake
// nvidia-smi first on PATH plays each case; every run here is a dry run, so
// a regression cannot start a build.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/common/run_program.h"

namespace shardlab {
namespace {

using test_util::ProgramResult;
using test_util::RunProgram;
using test_util::TempDir;

const std::string kScript = std::string(SHARDLAB_TEST_DATA_DIR) + "/../../scripts/gpu-check.sh";

/// `bash scripts/gpu-check.sh --dry-run --out DIR/out`, with `fake_smi` (a
/// shell script's body) as nvidia-smi first on PATH when not empty.
ProgramResult DryRun(const TempDir& dir, const std::string& fake_smi = "") {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  if (!fake_smi.empty()) {
    const std::filesystem::path bin = dir.path() / "bin";
    std::filesystem::create_directories(bin);
    std::ofstream(bin / "nvidia-smi") << "#!/bin/sh\n" << fake_smi;
    std::filesystem::permissions(bin / "nvidia-smi", std::filesystem::perms::owner_all);
    path = bin.string() + ":" + path;
  }
  return RunProgram("/usr/bin/env", {"PATH=" + path, "bash", kScript, "--dry-run", "--out",
                                     (dir.path() / "out").string()},
                    dir.path());
}

TEST(GpuCheck, ADryRunWithoutAGpuListsEveryStepAndExitsZero) {
  TempDir dir;
  // A machine whose nvidia-smi finds no device (as this one, if it has one at all).
  const ProgramResult r = DryRun(dir, "echo 'No devices were found'\nexit 6\n");
  ASSERT_EQ(r.exit_code, 0) << test_util::Describe(r);
  EXPECT_NE(r.out.find("dry run: no GPU: nvidia-smi lists none"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a real run stops here, exit 3"), std::string::npos) << r.out;
  // The build, the gpu tests, the benchmarks, and a run of every scenario on cuda.
  for (const std::string step :
       {"=== $ cmake -S ", "=== $ ninja -C ", "ctest --test-dir", "-L gpu", "event_overhead_bench",
        "calibrate --out", "run allreduce --backend cuda", "run pipeline --backend cuda",
        "run tp-mlp --backend cuda", "run zero --backend cuda", "run 3d --backend cuda",
        "run moe --backend cuda", "dry run: nothing was built or run"}) {
    EXPECT_NE(r.out.find(step), std::string::npos) << "missing step: " << step << "\n" << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out")) << "a dry run writes no log";
}

TEST(GpuCheck, ADryRunOnThisMachineExitsZero) {
  TempDir dir;
  const ProgramResult r = DryRun(dir);
  ASSERT_EQ(r.exit_code, 0) << test_util::Describe(r);
  EXPECT_NE(r.out.find("dry run: nothing was built or run"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
}

TEST(GpuCheck, ABrokenDriversErrorTextIsNoGpu) {
  TempDir dir;
  // nvidia-smi is installed, the driver is not loaded: the text is on stdout.
  const ProgramResult r = DryRun(dir,
                                 "echo \"NVIDIA-SMI has failed because it couldn't communicate with the "
                                 "NVIDIA driver. Make sure that the latest NVIDIA driver is installed and "
                                 "running.\"\nexit 9\n");
  ASSERT_EQ(r.exit_code, 0) << test_util::Describe(r);
  EXPECT_NE(r.out.find("dry run: no GPU: nvidia-smi lists none"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GPU(s)"), std::string::npos) << r.out;
}

TEST(GpuCheck, TheGpuLinesOfNvidiaSmiAreTheGpus) {
  TempDir dir;
  const ProgramResult r = DryRun(dir,
                                 "echo 'GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)'\n"
                                 "echo 'GPU 1: NVIDIA H200 (UUID: GPU-11111111-1111-1111-1111-111111111111)'\n");
  ASSERT_EQ(r.exit_code, 0) << test_util::Describe(r);
  EXPECT_NE(r.out.find("dry run: on 2 GPU(s): GPU 0: NVIDIA H200"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no GPU"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace shardlab
