// The flags the CUDA work added to run and sweep, from the command line:
// --device-profile changes the simulated time and rejects a bad file with
// its line and field; --emulate-links refuses the simulator (--algo nccl runs its NCCL model);
// calibrate and topo --detect document themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/run_program.h"

namespace shardlab {
namespace {

struct Cli {
  test_util::TempDir dir;
  test_util::ProgramResult Run(const std::vector<std::string>& args) {
    return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir.path() / name).string();
    std::ofstream(path) << text;
    return path;
  }
};

int Lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// The time column (us) of `run`'s one table row.
double TimeUs(const std::string& out) {
  for (std::size_t at = 0; (at = out.find('\n', at)) != std::string::npos;) {
    ++at;
    if (at >= out.size() || out[at] == '#') continue;
    std::istringstream row(out.substr(at, out.find('\n', at) - at));
    std::string size, count, type, redop, root;
    double time = 0;
    row >> size >> count >> type >> redop >> root >> time;
    return time;
  }
  return -1;
}

TEST(DeviceFlagsCli, ADeviceProfileChangesTheSimulatedTime) {
  Cli cli;
  // All-to-all's local copy (step 0) is timed by the GPU's memory bandwidth:
  // at 10 GB/s instead of the A100's 2039 it dominates the run.
  const std::string slow = cli.Write("slow.toml", "[device]\nmodel = \"slow\"\nmemory_gbps = 10\n");
  const auto base = cli.Run({"run", "alltoall", "--ranks", "2", "--size", "64M"});
  ASSERT_EQ(base.exit_code, 0) << base.err;
  const auto profiled =
      cli.Run({"run", "alltoall", "--ranks", "2", "--size", "64M", "--device-profile", slow});
  ASSERT_EQ(profiled.exit_code, 0) << profiled.err;
  EXPECT_GT(TimeUs(base.out), 0) << base.out;
  EXPECT_GT(TimeUs(profiled.out), 10 * TimeUs(base.out)) << base.out << profiled.out;
  const auto refused = cli.Run({"run", "alltoall", "--ranks", "2", "--size", "64M", "--backend",
                                "cuda", "--device-profile", slow});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
}

TEST(DeviceFlagsCli, ABadProfileIsOneLineWithFileLineAndField) {
  Cli cli;
  const std::string bad = cli.Write("bad.toml", "[device]\nmodel = \"x\"\nfp32_tflops = -3\n");
  const auto r = cli.Run({"run", "allreduce", "--ranks", "2", "--size", "1K", "--device-profile", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("bad.toml:3: device.fp32_tflops: must be a positive finite number (got -3)"),
            std::string::npos)
      << r.err;
}

TEST(DeviceFlagsCli, SimulatorOnlyAndGpuOnlyFlagsSaySo) {
  Cli cli;
  auto r = cli.Run({"run", "allreduce", "--ranks", "2", "--size", "1K", "--emulate-links"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--emulate-links: the simulator models links already"), std::string::npos)
      << r.err;
  // The mpi backend has no emulation: refused too, not ignored (engine/run/backend.h's rule, the app's too).
  r = cli.Run({"run", "allreduce", "--ranks", "2", "--size", "1K", "--backend", "mpi", "--emulate-links"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "shardlab-cli: error: --emulate-links: link emulation is for CUDA GPUs (--backend cuda), not mpi\n");
}

// --algo nccl used to be refused on the simulator; it now runs the
// simulator's model of NCCL (issue 31), checks the data, and says which
// algorithm and protocol the model chose.
TEST(DeviceFlagsCli, AlgoNcclOnTheSimulatorRunsTheNcclModel) {
  Cli cli;
  auto r = cli.Run({"run", "allreduce", "--ranks", "2", "--size", "1K", "--algo", "nccl"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nccl model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ring/LL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Result: correct"), std::string::npos) << r.out;
}

TEST(DeviceFlagsCli, CalibrateAndDetectHaveHelp) {
  Cli cli;
  auto r = cli.Run({"calibrate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--out"), std::string::npos);
  r = cli.Run({"topo", "--help"});
  EXPECT_NE(r.out.find("--detect"), std::string::npos);
  r = cli.Run({"--help"});
  EXPECT_NE(r.out.find("calibrate"), std::string::npos);
}

}  // namespace
}  // namespace shardlab

namespace shardlab {
namespace {

TEST(MpiDeviceFlag, NeedsTheMpiBackendAndAKnownDevice) {
  Cli cli;
  const auto sim = cli.Run({"run", "allreduce", "--ranks", "2", "--size", "1K", "--device", "gpu"});
  EXPECT_EQ(sim.exit_code, 2) << sim.err;
  EXPECT_NE(sim.err.find("--device: only for --backend mpi (the backend is 'sim')"),
            std::string::npos)
      << sim.err;
  EXPECT_EQ(Lines(sim.err), 1) << sim.err;
  const auto bad = cli.Run({"run", "allreduce", "--ranks", "2", "--size", "1K", "--backend", "mpi",
                            "--device", "tpu"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--device: unknown device 'tpu' (use host or gpu)"), std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace shardlab
