// The nvidia-smi-style text view.
#include "engine/topology/topology_print.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "engine/topology/presets.h"

namespace shardlab {
namespace {

// The matrix rows of FormatTopology, split into cells.
std::vector<std::vector<std::string>> MatrixRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("GPU", 0) != 0) continue;
    std::istringstream cells(line);
    std::vector<std::string> row;
    std::string cell;
    while (cells >> cell) row.push_back(cell);
    rows.push_back(row);
  }
  return rows;
}

TEST(TopologyPrint, Dgx1MatrixMatchesNvidiaSmi) {
  const std::string text = FormatTopology(MakeTopologyPreset("dgx1-v100"));
  const auto rows = MatrixRows(text);
  ASSERT_EQ(rows.size(), 8u) << text;
  // nvidia-smi topo -m on a DGX-1V.
  const std::vector<std::vector<std::string>> expected = {
      {"GPU0", "X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"},
      {"GPU1", "NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"},
      {"GPU2", "NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"},
      {"GPU3", "NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"},
      {"GPU4", "NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"},
      {"GPU5", "SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"},
      {"GPU6", "SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"},
      {"GPU7", "SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"},
  };
  EXPECT_EQ(rows, expected) << text;
  EXPECT_NE(text.find("Legend:"), std::string::npos);
  EXPECT_NE(text.find("gpu0 -- gpu3"), std::string::npos);
  EXPECT_NE(text.find("NVLink2 x2"), std::string::npos);
  EXPECT_NE(text.find("50 GB/s"), std::string::npos);
  EXPECT_NE(text.find("0.70 us"), std::string::npos);
}

TEST(TopologyPrint, PcieCodesDistinguishSwitchesAndCpus) {
  const auto rows = MatrixRows(FormatTopology(MakeTopologyPreset("pcie-gen4-8gpu")));
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[0][2], "PIX");  // GPU0 -> GPU1, same switch
  EXPECT_EQ(rows[0][5], "SYS");  // GPU0 -> GPU4, other CPU
  const auto shared = MatrixRows(FormatTopology(MakeTopologyPreset("pcie-gen3-4gpu")));
  EXPECT_EQ(shared[1][3], "NODE");
  const std::string text = FormatTopology(MakeTopologyPreset("pcie-gen3-4gpu"));
  EXPECT_NE(text.find("Shared capacity"), std::string::npos);
}

TEST(TopologyPrint, BigClustersShowTheFirstSixteenGpusAndGroupLinks) {
  const std::string text = FormatTopology(MakeTopologyPreset("4x-dgx-h100-ib"));
  const auto rows = MatrixRows(text);
  ASSERT_EQ(rows.size(), 16u);
  EXPECT_EQ(rows[0][2], "NV18");
  EXPECT_EQ(rows[0][9], "NET");  // GPU0 -> GPU8 in the next box
  EXPECT_NE(text.find("(matrix shows the first 16 of 32 GPUs)"), std::string::npos) << text;
  EXPECT_NE(text.find("32 x    GPU -- NVSwitch"), std::string::npos) << text;
  EXPECT_NE(text.find("InfiniBand"), std::string::npos);
  EXPECT_NE(text.find("4 hosts"), std::string::npos);
}

TEST(TopologyPrint, ListsEachGpusOwnNic) {
  const Topology topology = MakeTopologyPreset("4x-dgx-a100-ib");
  const std::string text = FormatTopology(topology);
  // Every line names the GPU's own NIC, as the routes use it.
  for (int g = 0; g < 16; ++g) {
    const Node& gpu = topology.nodes[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(g)])];
    ASSERT_GE(gpu.nic, 0);
    const std::string pair =
        gpu.name + " -> " + topology.nodes[static_cast<std::size_t>(gpu.nic)].name;
    EXPECT_NE(text.find(pair), std::string::npos) << pair << "\n" << text;
  }
  EXPECT_NE(text.find("(first 16 of 32 GPUs with a NIC)"), std::string::npos) << text;
  // A box without NICs prints no such section.
  EXPECT_EQ(FormatTopology(MakeTopologyPreset("dgx1-v100")).find("Own NIC"), std::string::npos);
}

TEST(TopologyPrint, UnreachablePairsShowADash) {
  const auto rows = MatrixRows(FormatTopology(MakeUniformRing(4, 25, 700)));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0][2], "NV1");
  EXPECT_EQ(rows[0][3], "-");
}

}  // namespace
}  // namespace shardlab
