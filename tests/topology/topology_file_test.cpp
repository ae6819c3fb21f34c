// Topology files: the format reads back what it writes, and every mistake a
// user can make gets one message naming the file, line and field.
#include "engine/topology/topology_file.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "engine/topology/presets.h"
#include "engine/topology/topology_print.h"
#include "tests/topology/topology_test_util.h"

namespace shardlab {
namespace {

const std::string kDataDir = std::string(SHARDLAB_TEST_DATA_DIR) + "/topology/";

std::string FileErrorOf(const std::string& path) {
  try {
    LoadTopologyFile(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "";
}

std::string TextError(const std::string& text) {
  try {
    ParseTopologyText(text, "box.toml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Two A100s and a switch; `link_extra` lands inside the only [[link]] table.
std::string TwoGpus(const std::string& link_extra, const std::string& node_extra = "") {
  return "name = \"two\"\n"        // 1
         "[[node]]\n"              // 2
         "name = \"gpu0\"\n"       // 3
         "kind = \"gpu\"\n"        // 4
         "model = \"A100\"\n"      // 5
         "[[node]]\n"              // 6
         "name = \"gpu1\"\n"       // 7
         "kind = \"gpu\"\n"        // 8
         "model = \"A100\"\n" +    // 9
         node_extra +              //
         "[[link]]\n"              // 10 (without node_extra)
         "a = \"gpu0\"\n"          // 11
         "b = \"gpu1\"\n"          // 12
         "kind = \"nvlink3\"\n" +  // 13
         link_extra;               // 14...
}

TEST(TopologyFile, ReportsAMissingFieldWithTheTablesLine) {
  const std::string path = kDataDir + "missing_gbps.toml";
  EXPECT_EQ(FileErrorOf(path), path + ":14: link.gbps: missing");
}

TEST(TopologyFile, ReportsALinkToANodeThatDoesNotExist) {
  const std::string path = kDataDir + "link_to_gpu9.toml";
  EXPECT_EQ(FileErrorOf(path), path + ":14: link.b: no node named 'gpu9'");
}

TEST(TopologyFile, ReportsUnknownKindsWithTheValidOnes) {
  const std::string path = kDataDir + "unknown_kind.toml";
  EXPECT_EQ(FileErrorOf(path), path +
                                   ":5: node.kind: unknown kind 'tpu'; expected gpu, nvswitch, "
                                   "pcie-switch, cpu, nic, net-switch");
  std::string text = TwoGpus("gbps = 300\n");
  text.replace(text.find("nvlink3"), 7, "nvlink9");
  EXPECT_EQ(TextError(text),
            "box.toml:13: link.kind: unknown kind 'nvlink9'; expected nvlink1, nvlink2, nvlink3, "
            "nvlink4, nvlink5, pcie3, pcie4, pcie5, upi, infiniband, ethernet");
}

TEST(TopologyFile, ReportsDuplicateNodeNames) {
  const std::string path = kDataDir + "duplicate_name.toml";
  EXPECT_EQ(FileErrorOf(path),
            path + ":9: node.name: duplicate node name 'gpu0' (first on line 4)");
}

TEST(TopologyFile, ReportsABadNumber) {
  const std::string path = kDataDir + "bad_number.toml";
  EXPECT_EQ(FileErrorOf(path), path + ":17: invalid value '45O'");
  EXPECT_EQ(TextError(TwoGpus("gbps = \"fast\"\n")),
            "box.toml:14: link.gbps: expected a number, got a string");
  EXPECT_EQ(TextError(TwoGpus("gbps = -5\n")), "box.toml:14: link.gbps: must be positive (got -5)");
  EXPECT_EQ(TextError(TwoGpus("gbps = 0\n")), "box.toml:14: link.gbps: must be positive (got 0)");
  EXPECT_EQ(TextError(TwoGpus("gbps = nan\n")), "box.toml:14: link.gbps: must be a finite number");
  EXPECT_EQ(TextError(TwoGpus("gbps = 300\nlanes = 0\n")),
            "box.toml:15: link.lanes: must be in 1..4096 (got 0)");
  EXPECT_EQ(TextError(TwoGpus("gbps = 300\nlanes = 1.5\n")),
            "box.toml:15: link.lanes: expected an integer, got a float");
  EXPECT_EQ(TextError(TwoGpus("gbps = 300\nlatency_us = -1\n")),
            "box.toml:15: link.latency_us: must be >= 0 (got -1)");
}

TEST(TopologyFile, RejectsUnknownKeysToCatchTypos) {
  EXPECT_EQ(TextError(TwoGpus("gpbs = 300\n")),
            "box.toml:14: link.gpbs: unknown key; expected a, b, kind, gbps, latency_us, "
            "latency_ns, lanes");
  EXPECT_EQ(TextError(TwoGpus("gbps = 300\n", "hots = 1\n")),
            "box.toml:10: node.hots: unknown key; expected name, kind, host, forward_gbps, model, "
            "fp32_tflops, fp16_tflops, memory_gbps, memory_gb, nic");
  EXPECT_EQ(TextError("nodes = 1\n"),
            "box.toml:1: nodes: unknown key; expected name, description, node, link");
}

TEST(TopologyFile, RejectsALinkToItselfAndBothLatencyUnits) {
  std::string text = TwoGpus("gbps = 300\n");
  text.replace(text.find("b = \"gpu1\""), 10, "b = \"gpu0\"");
  EXPECT_EQ(TextError(text), "box.toml:12: link.b: links 'gpu0' to itself");
  EXPECT_EQ(TextError(TwoGpus("gbps = 300\nlatency_us = 1\nlatency_ns = 5\n")),
            "box.toml:16: link.latency_ns: give latency_us or latency_ns, not both");
}

TEST(TopologyFile, RejectsNulBytesAndBrokenStructure) {
  std::string text = TwoGpus("gbps = 300\n");
  text[text.find("gpu1")] = '\0';
  EXPECT_EQ(TextError(text), "box.toml:7: NUL byte in file (is it a binary file?)");
  EXPECT_EQ(TextError("[node]\nname = \"gpu0\"\nkind = \"gpu\"\n"),
            "box.toml:1: node: write one [[node]] table per node");
  EXPECT_EQ(TextError("name = \"x\"\n"),
            "box.toml: node: missing; describe each GPU, switch, CPU and NIC in a [[node]] table");
  EXPECT_EQ(TextError("[[node]]\nname = \"sw\"\nkind = \"nvswitch\"\n"),
            "box.toml:1: node: no node has kind = \"gpu\"");
  EXPECT_EQ(TextError("[[node]]\nkind = \"gpu\"\nmodel = \"A100\"\n"),
            "box.toml:1: node.name: missing");
  EXPECT_EQ(TextError("x = " + std::string(100000, '[')),
            "box.toml:1: arrays nested more than 32 levels deep");
}

TEST(TopologyFile, GpuFiguresComeFromAModelOrAreWrittenOut) {
  EXPECT_EQ(
      TextError("[[node]]\nname = \"g\"\nkind = \"gpu\"\nmodel = \"Z80\"\n"),
      "box.toml:4: node.model: unknown GPU model 'Z80' (known: P100, V100, V100-SXM3, V100-PCIE, "
      "A100, A100-40GB, A100-PCIE, H100, H200, B200, RTX-A6000, RTX-4090); give fp32_tflops and "
      "the other figures to use it");
  EXPECT_EQ(
      TextError("[[node]]\nname = \"g\"\nkind = \"gpu\"\nfp32_tflops = 10\n"),
      "box.toml:1: node.fp16_tflops: missing (give model = \"A100\" or another known model: P100, "
      "V100, V100-SXM3, V100-PCIE, A100, A100-40GB, A100-PCIE, H100, H200, B200, RTX-A6000, "
      "RTX-4090)");
  EXPECT_EQ(TextError("[[node]]\nname = \"sw\"\nkind = \"nvswitch\"\nmodel = \"A100\"\n"),
            "box.toml:4: node.model: only GPUs have model");
  EXPECT_EQ(
      TextError("[[node]]\nname = \"g\"\nkind = \"gpu\"\nmodel = \"A100\"\nforward_gbps = 1\n"),
      "box.toml:5: node.forward_gbps: GPUs do not forward traffic for others");

  const Topology t = ParseTopologyText(
      "[[node]]\nname = \"a\"\nkind = \"gpu\"\nmodel = \"h100\"\n"
      "[[node]]\nname = \"b\"\nkind = \"gpu\"\nmodel = \"A100\"\nmemory_gb = 40\nmemory_gbps = "
      "1555\n"
      "[[node]]\nname = \"c\"\nkind = \"gpu\"\nmodel = \"Homebrew-1\"\nfp32_tflops = 1\n"
      "fp16_tflops = 2\nmemory_gbps = 3\nmemory_gb = 0.5\n",
      "dir/custom.toml");
  EXPECT_EQ(t.name, "custom");  // no name key: the file's stem
  EXPECT_EQ(t.nodes[0].device.model, "H100-SXM5-80GB");
  EXPECT_EQ(t.nodes[0].device.fp16_tflops, 989);
  EXPECT_EQ(t.nodes[1].device.memory_bytes, Bytes{40} << 30);
  EXPECT_EQ(t.nodes[1].device.memory_gbps, 1555);
  EXPECT_EQ(t.nodes[1].device.fp32_tflops, 19.5);
  EXPECT_EQ(t.nodes[2].device.model, "Homebrew-1");
  EXPECT_EQ(t.nodes[2].device.memory_bytes, Bytes{1} << 29);
}

TEST(TopologyFile, RanksFollowTheOrderOfGpuNodes) {
  const Topology t = ParseTopologyText(
      "[[node]]\nname = \"sw\"\nkind = \"pcie-switch\"\nforward_gbps = 16\n"
      "[[node]]\nname = \"second\"\nkind = \"gpu\"\nmodel = \"V100\"\nhost = 3\n"
      "[[node]]\nname = \"first\"\nkind = \"gpu\"\nmodel = \"V100\"\n"
      "[[link]]\na = \"second\"\nb = \"sw\"\nkind = \"pcie3\"\ngbps = 13\n"
      "[[link]]\na = \"first\"\nb = \"sw\"\nkind = \"pcie3\"\ngbps = 13\nlatency_ns = 250\n",
      "order.toml");
  ASSERT_EQ(t.num_gpus(), 2);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(t.gpus[0])].name, "second");
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(t.gpus[1])].name, "first");
  EXPECT_EQ(t.nodes[0].forward_gbps, 16);
  EXPECT_EQ(t.nodes[1].host, 3);
  EXPECT_EQ(t.links[0].latency_ns, 500);  // the default for a PCIe hop
  EXPECT_EQ(t.links[1].latency_ns, 250);
  EXPECT_EQ(FindRoute(t, t.gpus[0], t.gpus[1]).bottleneck_gbps, 13);
}

TEST(TopologyFile, WritesWhatItReadsForEveryPreset) {
  for (const PresetInfo& preset : ListTopologyPresets()) {
    const Topology original = MakeTopologyPreset(preset.name);
    const std::string text = WriteTopologyText(original);
    const Topology back = ParseTopologyText(text, preset.name + ".toml");
    EXPECT_TRUE(testing::SameTopology(original, back)) << preset.name;
    EXPECT_EQ(WriteTopologyText(back), text) << preset.name;
  }
  for (const Topology& t :
       {MakeUniformRing(1, 10, 0), MakeUniformRing(5, 25, 123.456), MakeSharedBus(3, 16, 999)}) {
    EXPECT_TRUE(testing::SameTopology(t, ParseTopologyText(WriteTopologyText(t), "x.toml")))
        << t.name;
  }
}

TEST(TopologyFile, StringsStartingWithANewlineSurviveTheRoundTrip) {
  Topology t = MakeTopologyPreset("dgx-a100");
  t.description = "\nstarts with a newline\n\tand has \"quotes\" \\ and a tab";
  t.nodes[0].device.model = "\nodd model";
  t.nodes[0].device.fp32_tflops = 0.1 + 0.2;  // not a short decimal
  t.links[0].latency_ns = 1.0 / 3.0;          // needs latency_ns to read back exactly
  const Topology back = ParseTopologyText(WriteTopologyText(t), "x.toml");
  EXPECT_TRUE(testing::SameTopology(t, back));
  EXPECT_EQ(back.description, t.description);
}

TEST(TopologyFile, TheExampleWorkstationLoads) {
  const std::string path = std::string(SHARDLAB_ASSET_DIR) + "/topologies/example-workstation.toml";
  const Topology t = LoadTopologyFile(path);
  EXPECT_EQ(t.name, "example-workstation");
  ASSERT_EQ(t.num_gpus(), 2);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(t.gpus[0])].device.model, "RTX-A6000");
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(t.gpus[1])].device.memory_bytes, Bytes{48} << 30);
  const Route r = FindRoute(t, t.gpus[0], t.gpus[1]);
  EXPECT_EQ(r.bottleneck_gbps, 26);
  EXPECT_EQ(r.latency_ns, 1000);
  EXPECT_EQ(RouteCode(t, r), "NODE");
  EXPECT_TRUE(testing::SameTopology(LoadTopology(path), t));
}

TEST(TopologyFile, TwoHostsTalkOverTheNetwork) {
  const Topology t = LoadTopologyFile(kDataDir + "two_boxes.toml");
  EXPECT_EQ(t.num_hosts(), 2);
  const Route r = FindRoute(t, t.gpus[0], t.gpus[1]);
  EXPECT_EQ(r.bottleneck_gbps, 12.5);
  EXPECT_EQ(r.latency_ns, 500 + 1500 + 1500 + 500);
  EXPECT_EQ(RouteCode(t, r), "NET");
}

TEST(TopologyFile, MissingFilesAreErrors) {
  EXPECT_NE(FileErrorOf(kDataDir + "no_such_file.toml").find("no such file"), std::string::npos);
}

}  // namespace
}  // namespace shardlab

namespace shardlab {
namespace {

// A GPU's own NIC: written as `nic = "..."`, read back, and checked.
TEST(TopologyFile, AGpuNamesItsOwnNic) {
  const std::string nic = "[[node]]\nname = \"nic0\"\nkind = \"nic\"\n";  // lines 10-12
  const Topology t = ParseTopologyText(TwoGpus("gbps = 300\n", "nic = \"nic0\"\n" + nic),
                                       "box.toml");
  const int nic0 = t.FindNode("nic0");
  ASSERT_GE(nic0, 0);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(t.gpus[1])].nic, nic0);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(t.gpus[0])].nic, -1);
  EXPECT_NE(WriteTopologyText(t).find("nic = \"nic0\""), std::string::npos);

  EXPECT_EQ(TextError(TwoGpus("gbps = 300\n", "nic = \"nic9\"\n" + nic)),
            "box.toml:10: node.nic: no node named 'nic9'");
  EXPECT_EQ(TextError(TwoGpus("gbps = 300\n", "nic = \"gpu0\"\n" + nic)),
            "box.toml:10: node.nic: 'gpu0' is a gpu, not a nic");
  EXPECT_EQ(TextError(TwoGpus("gbps = 300\n", nic + "nic = \"nic0\"\n")),
            "box.toml:13: node.nic: only GPUs have nic");
}

}  // namespace
}  // namespace shardlab
