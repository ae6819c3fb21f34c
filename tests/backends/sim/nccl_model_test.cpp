// The NCCL model's structure: what it reads from topologies, and how its
// choice moves with size (published numbers: nccl_fidelity_test.cpp).
#include <gtest/gtest.h>

#include <numeric>

#include "engine/backends/sim/nccl_model.h"
#include "engine/core/error.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

NcclMachine MachineOf(const std::string& preset, int ranks) {
  const Topology t = MakeTopologyPreset(preset);
  std::vector<std::int32_t> gpus(t.gpus.begin(), t.gpus.begin() + ranks);
  return DescribeNcclMachine(t, gpus);
}

TEST(NcclModel, ReadsNvSwitchBoxesAsNvLinkWithNvlsFromNvLink4) {
  const NcclMachine a100 = MachineOf("dgx-a100", 8);
  EXPECT_EQ(a100.intra, NcclTransport::kNvLink);
  EXPECT_DOUBLE_EQ(a100.intra_gbps, 300);
  EXPECT_FALSE(a100.nvls);
  EXPECT_EQ(a100.nodes, 1);
  const NcclMachine h100 = MachineOf("dgx-h100", 8);
  EXPECT_TRUE(h100.nvls);
  EXPECT_TRUE(MachineOf("hgx-b200", 8).nvls);
}

TEST(NcclModel, ReadsClustersAsNodesWithTheirNicBandwidth) {
  const NcclMachine m = MachineOf("2x-dgx-a100-ib", 16);
  EXPECT_EQ(m.nodes, 2);
  EXPECT_EQ(m.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(m.nic_gbps_per_node, 8 * 25.0);
}

TEST(NcclModel, ACpuThatStagesTrafficMeansHostMemoryAndItsShareOfTheBus) {
  // 4 V100 behind one CPU that forwards 13 GB/s in all: a ring of 4 routes
  // through it, each hop gets a quarter.
  const NcclMachine m = MachineOf("pcie-gen3-4gpu", 4);
  EXPECT_EQ(m.intra, NcclTransport::kHostMemory);
  EXPECT_NEAR(m.intra_gbps, 13.0 / 4, 1e-9);
}

TEST(NcclModel, SmallSizesTakeLLLargeSizesTakeSimpleAndTimeGrowsWithSize) {
  const NcclMachine m = MachineOf("dgx-a100", 8);
  EXPECT_EQ(PredictNccl(LibraryCollective::kAllReduce, 4096, m).chosen.proto, NcclProto::kLL);
  EXPECT_EQ(PredictNccl(LibraryCollective::kAllReduce, 4 << 20, m).chosen.proto, NcclProto::kLL128);
  EXPECT_EQ(PredictNccl(LibraryCollective::kAllReduce, 1 << 30, m).chosen.proto, NcclProto::kSimple);
  double last = 0;
  for (double size = 8; size <= 8e9; size *= 2) {
    const NcclPrediction p = PredictNccl(LibraryCollective::kAllReduce, size, m);
    EXPECT_GE(p.chosen.time_ns, last) << size;
    last = p.chosen.time_ns;
    // The choice is the fastest candidate.
    for (const NcclCandidate& c : p.candidates) EXPECT_GE(c.time_ns, p.chosen.time_ns);
  }
}

TEST(NcclModel, NvlsWinsLargeAllReducesOnH100AndCanBeTurnedOff) {
  const NcclMachine m = MachineOf("dgx-h100", 8);
  const NcclPrediction on = PredictNccl(LibraryCollective::kAllReduce, 1 << 30, m);
  EXPECT_EQ(on.chosen.algo, NcclAlgo::kNvls);
  NcclModelOptions off;
  off.allow_nvls = false;
  const NcclPrediction ring = PredictNccl(LibraryCollective::kAllReduce, 1 << 30, m, off);
  EXPECT_EQ(ring.chosen.algo, NcclAlgo::kRing);
  EXPECT_LT(on.chosen.time_ns, ring.chosen.time_ns);
  // NVLS is an all-reduce: an all-gather stays on the ring.
  EXPECT_EQ(PredictNccl(LibraryCollective::kAllGather, 1 << 30, m).chosen.algo, NcclAlgo::kRing);
}

// At large sizes the ring's bus bandwidth is the path's GB/s times the
// Simple efficiency, independent of the rank count: the formula the
// model states, checked against a value computed here.
TEST(NcclModel, LargeRingAllReduceApproachesLinkTimesEfficiency) {
  for (int ranks : {2, 4, 8}) {
    const NcclMachine m = MachineOf("dgx-a100", ranks);
    const double size = 64e9;
    const NcclPrediction p = PredictNccl(LibraryCollective::kAllReduce, size, m);
    const double busbw = p.bus_bytes / p.chosen.time_ns;
    EXPECT_NEAR(busbw, 300 * 0.783, 300 * 0.783 * 0.01) << ranks;
  }
}

TEST(NcclModel, OneRankTakesNoTime) {
  const NcclMachine m = MachineOf("dgx-a100", 1);
  EXPECT_EQ(PredictNccl(LibraryCollective::kAllReduce, 1 << 20, m).chosen.time_ns, 0);
}

}  // namespace
}  // namespace shardlab
