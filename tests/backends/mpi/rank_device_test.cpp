// The host-side logic of the mpi backend's --device gpu: which transfer
// path a process takes, the run's header line, the GPU of a local rank, and
// CUDA event times on the host clock. (The device itself is tested through
// mpirun in tests/mpi, label gpu.)
#include "engine/backends/mpi/rank_device.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"

namespace shardlab {
namespace {

TEST(GpuTransferPath, StagesThroughPinnedMemoryWhenMpiIsNotCudaAware) {
  std::string why;
  EXPECT_EQ(ChooseGpuTransferPath(false, -1, nullptr, why), GpuTransferPath::kStagedPinned);
  EXPECT_EQ(why, "the MPI library is not CUDA-aware");
}

TEST(GpuTransferPath, PassesDevicePointersOnlyWhenBuiltAndRunningCudaAware) {
  std::string why;
  EXPECT_EQ(ChooseGpuTransferPath(true, 1, nullptr, why), GpuTransferPath::kDeviceDirect);
  EXPECT_EQ(why, "the MPI library is CUDA-aware");
  EXPECT_EQ(ChooseGpuTransferPath(true, 0, nullptr, why), GpuTransferPath::kStagedPinned);
  EXPECT_NE(why.find("says no at run time"), std::string::npos) << why;
  // A run-time yes from a library built without the extension is not trusted.
  EXPECT_EQ(ChooseGpuTransferPath(false, 1, "", why), GpuTransferPath::kStagedPinned);
}

TEST(GpuTransferPath, TheVariableForcesStagingOrDirectWhereMpiAllowsIt) {
  std::string why;
  EXPECT_EQ(ChooseGpuTransferPath(true, 1, "staged", why), GpuTransferPath::kStagedPinned);
  EXPECT_EQ(why, "SHARDLAB_MPI_GPU_TRANSFER=staged");
  EXPECT_EQ(ChooseGpuTransferPath(true, 1, "direct", why), GpuTransferPath::kDeviceDirect);
  try {
    ChooseGpuTransferPath(false, -1, "direct", why);
    FAIL() << "direct on a library that is not CUDA-aware was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("SHARDLAB_MPI_GPU_TRANSFER=direct: this MPI library is "
                                         "not CUDA-aware"),
              std::string::npos)
        << e.what();
  }
  try {
    ChooseGpuTransferPath(true, 1, "pinned", why);
    FAIL() << "an unknown path was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "SHARDLAB_MPI_GPU_TRANSFER: 'pinned' is not a transfer path (staged or direct)");
  }
}

TEST(GpuRunHeader, NamesTheRankTheGpuAndTheTransferPath) {
  EXPECT_EQ(DescribeGpuRun(0, 1, 2, "NVIDIA H100 80GB HBM3", GpuTransferPath::kStagedPinned,
                           "the MPI library is not CUDA-aware"),
            "rank 0 on GPU 1 of 2 (NVIDIA H100 80GB HBM3); transfers staged through pinned host "
            "memory (the MPI library is not CUDA-aware)");
  EXPECT_EQ(DescribeGpuRun(3, 0, 1, "", GpuTransferPath::kDeviceDirect, ""),
            "rank 3 on GPU 0 of 1; transfers pass device pointers to MPI");
}

TEST(GpuForLocalRank, IsTheLocalRankModuloTheDeviceCount) {
  EXPECT_EQ(GpuForLocalRank(0, 4), 0);
  EXPECT_EQ(GpuForLocalRank(5, 4), 1);
  EXPECT_EQ(GpuForLocalRank(3, 8), 3);
  EXPECT_EQ(GpuForLocalRank(2, 0), 0);  // no division by zero
}

TEST(DescribeSharedGpu, NamesTheFirstTwoRanksOnOneGpuOfOneHost) {
  EXPECT_EQ(DescribeSharedGpu({{"a", "0000:3b:00.0"}, {"a", "0000:5e:00.0"}}), "");
  // The same bus id on two hosts is two GPUs.
  EXPECT_EQ(DescribeSharedGpu({{"a", "0000:3b:00.0"}, {"b", "0000:3b:00.0"}}), "");
  EXPECT_EQ(DescribeSharedGpu({{"a", "1"}, {"b", "2"}, {"b", "3"}, {"b", "2"}}),
            "ranks 1 and 3 both hold GPU 2 on host b");
  // Unknown bus ids are not compared.
  EXPECT_EQ(DescribeSharedGpu({{"a", ""}, {"a", ""}}), "");
}

TEST(DeviceEventHostNs, AddsTheElapsedTimeToTheReferencesHostTime) {
  EXPECT_DOUBLE_EQ(DeviceEventHostNs(1e12, 0.0f), 1e12);
  EXPECT_DOUBLE_EQ(DeviceEventHostNs(1e12, 1.5f), 1e12 + 1.5e6);
  // Two events keep their order and distance on the host clock.
  const double a = DeviceEventHostNs(5e11, 0.25f), b = DeviceEventHostNs(5e11, 0.75f);
  EXPECT_DOUBLE_EQ(b - a, 0.5e6);
}

TEST(RankDeviceFactory, WithoutTheGpuLibraryTheErrorSaysTheBuildHasNoCuda) {
  SetRankDeviceFactory(nullptr);
  try {
    CreateRankDevice();
    FAIL() << "a device was made without a factory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("this build has no CUDA for the mpi backend"),
              std::string::npos)
        << e.what();
  }
}

TEST(ReferenceHostNs, IsTheMidpointOfTheLastNotReadyPollAndTheReadyOne) {
  EXPECT_DOUBLE_EQ(ReferenceHostNs(1000, 1000), 1000);
  EXPECT_DOUBLE_EQ(ReferenceHostNs(1e12, 1e12 + 4000), 1e12 + 2000);
}

TEST(HostOpTimes, StartsNoEarlierThanTheLatestDependencyEnded) {
  // A dependency that ended before the op started changes nothing.
  DeviceTimes t = HostOpTimes(100, 200, 90);
  EXPECT_DOUBLE_EQ(t.start_ns, 100);
  EXPECT_DOUBLE_EQ(t.end_ns, 200);
  // A device op's end mapped a little late: the start moves up to it.
  t = HostOpTimes(100, 200, 150);
  EXPECT_DOUBLE_EQ(t.start_ns, 150);
  EXPECT_DOUBLE_EQ(t.end_ns, 200);
  // Even past the op's own end: the end follows, the duration is never negative.
  t = HostOpTimes(100, 200, 250);
  EXPECT_DOUBLE_EQ(t.start_ns, 250);
  EXPECT_DOUBLE_EQ(t.end_ns, 250);
}

}  // namespace
}  // namespace shardlab
