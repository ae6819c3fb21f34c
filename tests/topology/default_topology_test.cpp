// Which machine a run uses when no --topology is given, with a fake device
// layer: the detection probe (SetMachineProbe) is filled by the test with
// the machine a CUDA runtime would report, so no GPU is needed.
#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "engine/topology/detect.h"

namespace shardlab {
namespace {

int g_probes = 0;
DetectedMachine g_machine;

DetectedMachine FakeProbe() {
  ++g_probes;
  return g_machine;
}

DetectedMachine NoDeviceProbe() {
  ++g_probes;
  throw Error("no CUDA device: cudaGetDeviceCount returned cudaErrorNoDevice", ErrorKind::kRuntime);
}

// A 4-GPU workstation on PCIe: what detection reports without NVLink.
DetectedMachine Workstation(int gpus) {
  DetectedMachine m;
  for (int i = 0; i < gpus; ++i) {
    DetectedGpu g;
    g.name = "NVIDIA RTX A6000";
    g.pci_bus_id = "0000:0" + std::to_string(i + 1) + ":00.0";
    g.memory_bytes = Bytes{48} << 30;
    g.cc_major = 8;
    g.cc_minor = 6;
    g.pcie_gen = 4;
    g.pcie_width = 16;
    m.gpus.push_back(g);
  }
  m.peer_access.assign(static_cast<std::size_t>(gpus), std::vector<int>(static_cast<std::size_t>(gpus), 1));
  m.p2p_rank.assign(static_cast<std::size_t>(gpus), std::vector<int>(static_cast<std::size_t>(gpus), 0));
  return m;
}

class DefaultTopology : public ::testing::Test {
 protected:
  void SetUp() override {
    g_probes = 0;
    g_machine = Workstation(4);
    SetMachineProbe(&FakeProbe);
  }
  void TearDown() override { SetMachineProbe(nullptr); }
};

TEST_F(DefaultTopology, RealGpusWithNoTopologyRunOnTheDetectedMachineOneRankEach) {
  const TopologyChoice choice = ChooseTopology("", /*real_hardware=*/true);
  EXPECT_TRUE(choice.detected);
  EXPECT_EQ(choice.name, kDetectedTopologyName);
  EXPECT_EQ(choice.topology.num_gpus(), 4) << "4 GPUs must give 4 ranks, not the preset's 8";
  EXPECT_EQ(g_probes, 1);
  g_machine = Workstation(2);
  EXPECT_EQ(ChooseTopology("", true).topology.num_gpus(), 2);
}

TEST_F(DefaultTopology, TheSimulatorKeepsThePresetAndNeverProbes) {
  const TopologyChoice choice = ChooseTopology("", /*real_hardware=*/false);
  EXPECT_FALSE(choice.detected);
  EXPECT_EQ(choice.name, "dgx-a100");
  EXPECT_EQ(choice.topology.num_gpus(), 8);
  EXPECT_EQ(g_probes, 0);
}

TEST_F(DefaultTopology, VirtualRanksOnlyWhenATopologyIsAskedFor) {
  // dgx-a100 on the 4-GPU machine: 8 ranks, which the CUDA backend places as
  // virtual devices and says so; asked for, so no probe overrides it.
  const TopologyChoice choice = ChooseTopology("dgx-a100", /*real_hardware=*/true);
  EXPECT_FALSE(choice.detected);
  EXPECT_EQ(choice.topology.num_gpus(), 8);
  EXPECT_EQ(g_probes, 0);
}

TEST_F(DefaultTopology, NoDeviceIsTheDetectionError) {
  SetMachineProbe(&NoDeviceProbe);
  try {
    ChooseTopology("", true);
    FAIL() << "no device, yet a topology was chosen";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
  EXPECT_EQ(g_probes, 1);
}

}  // namespace
}  // namespace shardlab
