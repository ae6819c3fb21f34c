// What the CUDA backend does on a machine without a GPU (as CI is): one
// clear "no CUDA device" error from Load and from the CLI, the simulator
// still the default, and the pure parts (error classification, rank
// placement) checked. On a machine with a GPU the no-device tests skip.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>

#include "engine/algorithms/collective.h"
#include "engine/backends/cuda/cuda_backend.h"
#include "engine/backends/cuda/cuda_check.h"
#include "engine/topology/presets.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

test_util::ProgramResult RunCli(const std::vector<std::string>& args) {
  test_util::TempDir dir;
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

bool HaveDevice() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

#define SKIP_IF_DEVICE() \
  if (HaveDevice()) GTEST_SKIP() << "a CUDA device is present: the no-device path is not taken"

TEST(CudaWithoutDevice, LoadSaysNoCudaDeviceAndNamesTheSimulator) {
  SKIP_IF_DEVICE();
  CollectiveParams p;
  p.ranks = 2;
  p.count = 16;
  const Plan plan = BuildCollective(p);
  const Topology topology = MakeTopologyPreset("dgx-a100");
  RegisterCudaBackend();
  std::unique_ptr<Backend> backend = CreateBackend("cuda");
  EXPECT_EQ(backend->name(), "cuda");
  try {
    backend->Load(plan, topology, RunOptions{});
    FAIL() << "Load succeeded without a device";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("no CUDA device: cudaGetDeviceCount returned ", 0), 0u) << message;
    EXPECT_NE(message.find("the simulator (--backend sim) is the default"), std::string::npos);
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_FALSE(IsStickyCudaError(e));
  }
  // The simulator is untouched: still listed first, still runs.
  EXPECT_EQ(ListBackends().front().name, "sim");
}

// The registry declares cuda everywhere (its traits, no factory);
// RegisterCudaBackend gives it the factory, with the same declaration.
TEST(CudaWithoutDevice, RegisteringGivesTheDeclaredBackendItsFactory) {
  const std::size_t declared = ListDeclaredBackends().size();
  RegisterCudaBackend();
  EXPECT_EQ(ListDeclaredBackends().size(), declared) << "replaced in place, not added";
  const std::vector<BackendInfo> listed = ListBackends();
  const auto cuda = std::find_if(listed.begin(), listed.end(), [](const BackendInfo& b) { return b.name == "cuda"; });
  ASSERT_NE(cuda, listed.end());
  EXPECT_EQ(cuda->description, CudaBackendDeclaration().description);
  EXPECT_EQ(cuda->traits.event_clock, ClockKind::kCudaEvent);
  EXPECT_TRUE(cuda->traits.emulates_links);
  EXPECT_EQ(cuda->traits.default_warmup, 1);
}

TEST(CudaWithoutDevice, TheCliExitsWithOneLine) {
  SKIP_IF_DEVICE();
  const test_util::ProgramResult r = RunCli(
      {"run", "allreduce", "--backend", "cuda", "--ranks", "2", "--size", "1K"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("shardlab-cli: error: no CUDA device: cudaGetDeviceCount returned ", 0), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // The default run still works.
  const test_util::ProgramResult sim =
      RunCli({"run", "allreduce", "--ranks", "2", "--size", "1K"});
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
}

TEST(CudaWithoutDevice, TopoDetectSaysSo) {
  SKIP_IF_DEVICE();
  const test_util::ProgramResult r = RunCli({"topo", "--detect"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("shardlab-cli: error: no CUDA device: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CudaWithoutDevice, CalibrateSaysSo) {
  SKIP_IF_DEVICE();
  const test_util::ProgramResult r = RunCli({"calibrate"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("shardlab-cli: error: no CUDA device: ", 0), 0u) << r.err;
}

TEST(CudaErrors, StickyErrorsAreTheOnesThatPoisonTheContext) {
  EXPECT_TRUE(cuda::IsStickyCudaStatus(cudaErrorIllegalAddress));
  EXPECT_TRUE(cuda::IsStickyCudaStatus(cudaErrorLaunchFailure));
  EXPECT_FALSE(cuda::IsStickyCudaStatus(cudaErrorMemoryAllocation));
  EXPECT_FALSE(cuda::IsStickyCudaStatus(cudaErrorInvalidValue));
  EXPECT_FALSE(cuda::IsStickyCudaStatus(cudaErrorNoDevice));
}

TEST(CudaErrors, ACheckedCallNamesTheCallFileLineAndRank) {
  const int line = __LINE__ + 2;
  try {
    CUDA_CHECK(cudaErrorIllegalAddress, 3);
    FAIL();
  } catch (const DeviceError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cudaErrorIllegalAddress failed at cuda_without_device_test.cpp:" +
                           std::to_string(line) + " on rank 3"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("sticky"), std::string::npos) << message;
    EXPECT_TRUE(e.sticky());
    EXPECT_TRUE(IsStickyCudaError(e));
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
  }
  try {
    CUDA_CHECK(cudaErrorMemoryAllocation, 0);
    FAIL();
  } catch (const DeviceError& e) {
    EXPECT_FALSE(e.sticky());
    EXPECT_NE(std::string(e.what()).find("cudaErrorMemoryAllocation"), std::string::npos);
  }
  try {
    CUBLAS_CHECK(CUBLAS_STATUS_NOT_INITIALIZED, 1);
    FAIL();
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_NOT_INITIALIZED"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("on rank 1"), std::string::npos);
  }
}

TEST(CudaPlacement, RanksWrapOntoTheGpusThereAre) {
  EXPECT_EQ(PhysicalGpus(4, {}, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(PhysicalGpus(4, {}, 1), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(PhysicalGpus(5, {}, 2), (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(PhysicalGpus(2, {6, 7}, 8), (std::vector<int>{6, 7}));
  EXPECT_EQ(PhysicalGpus(2, {6, 7}, 4), (std::vector<int>{2, 3}));
  EXPECT_EQ(DescribePlacement({0, 1, 2, 3}, 4), "4 ranks on 4 GPUs (one each)");
  EXPECT_EQ(DescribePlacement({0, 0, 0, 0}, 1),
            "4 ranks on 1 GPU as virtual devices (separate buffers and streams): GPU 0 holds "
            "ranks 0-3");
  EXPECT_EQ(DescribePlacement({0, 1, 0, 1, 0}, 2),
            "5 ranks on 2 GPUs as virtual devices (separate buffers and streams): GPU 0 holds "
            "ranks 0,2,4; GPU 1 holds ranks 1,3");
}

}  // namespace
}  // namespace shardlab
