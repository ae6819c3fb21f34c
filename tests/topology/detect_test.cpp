// Topology detection without a GPU: what the CUDA/NVML probe would report
// is written by hand, and the topology built from it is checked (NVLink
// between GPUs, NVSwitch, PCIe-only machines, bus-id spellings).
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/topology/detect.h"
#include "engine/topology/topology_file.h"
#include "engine/topology/topology_print.h"

namespace shardlab {
namespace {

DetectedGpu Gpu(const std::string& name, const std::string& bus, int major, int minor) {
  DetectedGpu g;
  g.name = name;
  g.pci_bus_id = bus;
  g.memory_bytes = Bytes{80} << 30;
  g.cc_major = major;
  g.cc_minor = minor;
  return g;
}

DetectedMachine Machine(std::vector<DetectedGpu> gpus, bool peer) {
  DetectedMachine m;
  m.gpus = std::move(gpus);
  const std::size_t n = m.gpus.size();
  m.peer_access.assign(n, std::vector<int>(n, peer ? 1 : 0));
  m.p2p_rank.assign(n, std::vector<int>(n, 0));
  m.nvml = true;
  return m;
}

TEST(DetectTopology, BusIdsInEitherSpellingAreOneDevice) {
  EXPECT_EQ(CanonicalPciBusId("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(CanonicalPciBusId("0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(CanonicalPciBusId("not a bus id"), "not a bus id");
}

TEST(DetectTopology, DirectNvLinksBetweenTwoGpus) {
  DetectedMachine m = Machine({Gpu("NVIDIA A100-SXM4-80GB", "0000:07:00.0", 8, 0),
                               Gpu("NVIDIA A100-SXM4-80GB", "0000:0F:00.0", 8, 0)},
                              true);
  for (int i = 0; i < 4; ++i) {
    m.gpus[0].nvlink_remotes.push_back("00000000:0F:00.0");
    m.gpus[1].nvlink_remotes.push_back("00000000:07:00.0");
  }
  m.gpus[0].pcie_gen = m.gpus[1].pcie_gen = 4;
  m.gpus[0].pcie_width = m.gpus[1].pcie_width = 16;
  const Topology t = BuildDetectedTopology(m);
  ASSERT_EQ(t.num_gpus(), 2);
  EXPECT_EQ(t.nodes[t.gpus[0]].device.fp16_tflops, 312);  // the A100's preset figures
  const Route route = FindRoute(t, t.gpus[0], t.gpus[1]);
  ASSERT_EQ(route.hops.size(), 1u);
  const Link& link = t.links[route.hops[0].link];
  EXPECT_EQ(link.kind, LinkKind::kNvLink3);
  EXPECT_EQ(link.lanes, 4);  // counted once, not from both ends
  EXPECT_DOUBLE_EQ(link.gbps, 100);
  EXPECT_NE(FormatTopology(t).find("NV4"), std::string::npos) << FormatTopology(t);
}

TEST(DetectTopology, NvSwitchMachine) {
  std::vector<DetectedGpu> gpus;
  for (int g = 0; g < 4; ++g) {
    gpus.push_back(Gpu("NVIDIA H100 80GB HBM3", "0000:1" + std::to_string(g) + ":00.0", 9, 0));
    for (int l = 0; l < 18; ++l) gpus.back().nvlink_remotes.push_back("nvswitch");
  }
  const Topology t = BuildDetectedTopology(Machine(gpus, true));
  EXPECT_GE(t.FindNode("nvswitch"), 0);
  const Route route = FindRoute(t, t.gpus[0], t.gpus[3]);
  EXPECT_DOUBLE_EQ(route.bottleneck_gbps, 450);
  EXPECT_EQ(t.links[route.hops[0].link].kind, LinkKind::kNvLink4);
}

TEST(DetectTopology, PcieOnlyAndAnUnknownModel) {
  DetectedMachine m = Machine({Gpu("NVIDIA Future GPU", "0000:01:00.0", 12, 0)}, false);
  m.nvml = false;
  const Topology t = BuildDetectedTopology(m);
  ASSERT_EQ(t.num_gpus(), 1);
  const std::string model = t.nodes[t.gpus[0]].device.model;
  EXPECT_NE(model.find("run calibrate"), std::string::npos) << model;
  EXPECT_GT(t.nodes[t.gpus[0]].device.fp32_tflops, 0);
  const std::string text = FormatDetectedMachine(m);
  EXPECT_NE(text.find("NVML not available"), std::string::npos) << text;
  // `topo --detect --toml` writes a file that reads back, unknown model and all.
  const Topology back = ParseTopologyText(WriteTopologyText(t), "detected.toml");
  EXPECT_EQ(back.num_gpus(), 1);
  EXPECT_EQ(back.nodes[back.gpus[0]].device.fp32_tflops, t.nodes[t.gpus[0]].device.fp32_tflops);
}

TEST(DetectTopology, NoGpuIsOneError) {
  EXPECT_THROW(BuildDetectedTopology(DetectedMachine{}), Error);
}

}  // namespace
}  // namespace shardlab
