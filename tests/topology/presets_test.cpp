// Presets: each one is a valid machine with the figures the design names,
// GPUs called gpu0..gpuN-1 in rank order.
#include "engine/topology/presets.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/core/error.h"
#include "engine/topology/topology_print.h"

namespace shardlab {
namespace {

std::string PresetError(const std::string& name) {
  try {
    MakeTopologyPreset(name);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Preset, EveryPresetValidatesAndNamesItsGpusByRank) {
  std::set<std::string> names;
  for (const PresetInfo& preset : ListTopologyPresets()) {
    EXPECT_TRUE(names.insert(preset.name).second) << "listed twice: " << preset.name;
    EXPECT_FALSE(preset.description.empty()) << preset.name;
    const Topology t = MakeTopologyPreset(preset.name);
    EXPECT_EQ(t.name, preset.name);
    EXPECT_FALSE(t.description.empty());
    EXPECT_NO_THROW(ValidateTopology(t)) << preset.name;
    for (int r = 0; r < t.num_gpus(); ++r) {
      const Node& gpu = t.nodes[static_cast<std::size_t>(t.gpus[static_cast<std::size_t>(r)])];
      EXPECT_EQ(gpu.name, "gpu" + std::to_string(r)) << preset.name;
      EXPECT_GE(gpu.host, 0);
    }
    EXPECT_EQ(LoadTopology(preset.name).num_gpus(), t.num_gpus());
  }
}

// Bottleneck between ranks a and b.
Gbps Width(const Topology& t, int a, int b) {
  return FindRoute(t, t.gpus[static_cast<std::size_t>(a)], t.gpus[static_cast<std::size_t>(b)])
      .bottleneck_gbps;
}

TEST(Preset, NvSwitchBoxesGiveEveryPairTheFullNvLinkBandwidth) {
  // Not the seed texts' "2 x 25 = 50 GB/s between any two A100s": through
  // NVSwitch every pair gets a GPU's whole NVLink bandwidth per direction.
  struct Case {
    const char* name;
    int gpus;
    Gbps gbps;
    const char* code;
  };
  for (const Case& c : {Case{"dgx2-v100", 16, 150, "NV6"}, Case{"dgx-a100", 8, 300, "NV12"},
                        Case{"dgx-h100", 8, 450, "NV18"}, Case{"hgx-b200", 8, 900, "NV18"}}) {
    const Topology t = MakeTopologyPreset(c.name);
    ASSERT_EQ(t.num_gpus(), c.gpus) << c.name;
    RouteTable routes(t);
    for (int a = 0; a < c.gpus; ++a) {
      for (int b = 0; b < c.gpus; ++b) {
        if (a == b) continue;
        EXPECT_EQ(routes.Between(a, b).bottleneck_gbps, c.gbps) << c.name << " " << a << "->" << b;
        EXPECT_EQ(RouteCode(t, routes.Between(a, b)), c.code);
        EXPECT_EQ(routes.Between(a, b).latency_ns, 700);
      }
    }
  }
}

TEST(Preset, DgxA100HasTheNicsAndCpusOfTheRealBox) {
  const Topology t = MakeTopologyPreset("dgx-a100");
  int nics = 0, cpus = 0, pcie = 0, nvswitches = 0;
  for (const Node& n : t.nodes) {
    nics += n.kind == NodeKind::kNic;
    cpus += n.kind == NodeKind::kCpu;
    pcie += n.kind == NodeKind::kPcieSwitch;
    nvswitches += n.kind == NodeKind::kNvSwitch;
  }
  EXPECT_EQ(nics, 8);
  EXPECT_EQ(cpus, 2);
  EXPECT_EQ(pcie, 4);
  EXPECT_EQ(nvswitches, 1);
  // GPU and NIC pairs share a PCIe4 switch: GPUDirect RDMA stays off the CPUs.
  const Route to_nic = FindRoute(t, t.gpus[0], t.FindNode("nic0"));
  EXPECT_EQ(to_nic.hops.size(), 2u);
  EXPECT_EQ(to_nic.bottleneck_gbps, 26);
  const Node& gpu = t.nodes[static_cast<std::size_t>(t.gpus[0])];
  EXPECT_EQ(gpu.device.model, "A100-SXM4-80GB");
  EXPECT_EQ(gpu.device.fp16_tflops, 312);
  EXPECT_EQ(gpu.device.memory_gbps, 2039);
}

TEST(Preset, PcieGen3BoxSharesTheCpuAmongAllTransfers) {
  const Topology t = MakeTopologyPreset("pcie-gen3-4gpu");
  ASSERT_EQ(t.num_gpus(), 4);
  const int cpu = t.FindNode("cpu0");
  ASSERT_GE(cpu, 0);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(cpu)].forward_gbps, 13);
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a == b) continue;
      const Route r =
          FindRoute(t, t.gpus[static_cast<std::size_t>(a)], t.gpus[static_cast<std::size_t>(b)]);
      ASSERT_EQ(r.via_nodes.size(), 1u);
      EXPECT_EQ(r.via_nodes[0], cpu);  // every transfer crosses the same shared node
      EXPECT_EQ(r.bottleneck_gbps, 13);
      EXPECT_EQ(RouteCode(t, r), "NODE");
    }
  }
}

TEST(Preset, PcieGen4BoxHasTwoSwitchesUnderTwoCpus) {
  const Topology t = MakeTopologyPreset("pcie-gen4-8gpu");
  ASSERT_EQ(t.num_gpus(), 8);
  RouteTable routes(t);
  EXPECT_EQ(RouteCode(t, routes.Between(0, 3)), "PIX");
  EXPECT_EQ(routes.Between(0, 3).bottleneck_gbps, 26);
  EXPECT_EQ(RouteCode(t, routes.Between(0, 4)), "SYS");
  EXPECT_EQ(routes.Between(0, 4).bottleneck_gbps, 26);
  EXPECT_EQ(routes.Between(0, 4).hops.size(), 5u);
}

TEST(Preset, Dgx1P100UsesNvLink1At20GBps) {
  const Topology t = MakeTopologyPreset("dgx1-p100");
  EXPECT_EQ(Width(t, 0, 1), 20);
  EXPECT_EQ(Width(t, 0, 3), 20);
  EXPECT_EQ(Width(t, 0, 4), 20);
  EXPECT_EQ(Width(t, 0, 5), 13);  // no NVLink: PCIe3 through both CPUs
  for (const Link& l : t.links) {
    if (LinkKindCode(l.kind) == std::string("NV")) {
      EXPECT_EQ(l.kind, LinkKind::kNvLink1);
      EXPECT_EQ(l.gbps, 20);
    }
  }
}

TEST(Preset, ClustersAreParametric) {
  const Topology t = MakeTopologyPreset("3x-dgx-a100-ib");
  EXPECT_EQ(t.num_gpus(), 24);
  EXPECT_EQ(t.num_hosts(), 3);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(t.gpus[17])].host, 2);
  EXPECT_EQ(Width(t, 0, 1), 300);
  EXPECT_EQ(Width(t, 0, 8), 25);  // HDR 200 Gb/s
  EXPECT_EQ(Width(t, 0, 23), 25);
  const Topology two = MakeTopologyPreset("2x-dgx-a100-ib");
  EXPECT_EQ(two.num_gpus(), 16);
  EXPECT_EQ(two.num_hosts(), 2);
  EXPECT_GE(two.FindNode("ib-switch"), 0);
  const Topology h = MakeTopologyPreset("1x-dgx-h100-ib");
  EXPECT_EQ(h.num_gpus(), 8);
  EXPECT_EQ(PresetError("129x-dgx-h100-ib"),
            "preset '129x-dgx-h100-ib': the number of boxes must be 1..128 (up to 1024 GPUs)");
  EXPECT_EQ(PresetError("0x-dgx-a100-ib"),
            "preset '0x-dgx-a100-ib': the number of boxes must be 1..128 (up to 1024 GPUs)");
}

TEST(Preset, UnknownNamesListTheKnownOnes) {
  const std::string message = PresetError("dgx-z100");
  EXPECT_EQ(message.rfind("unknown topology preset 'dgx-z100'; known: pcie-gen3-4gpu, ", 0), 0u)
      << message;
  EXPECT_NE(message.find("<N>x-dgx-h100-ib"), std::string::npos);
  EXPECT_NE(PresetError("x-dgx-a100-ib").find("unknown topology preset"), std::string::npos);
  EXPECT_NE(PresetError("2x-dgx-a100-eth").find("unknown topology preset"), std::string::npos);
  try {
    LoadTopology("no-such-preset");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "'no-such-preset' is neither a topology preset nor a file; presets: "
                  "pcie-gen3-4gpu",
                  0),
              0u)
        << e.what();
  }
  // A name that looks like a path was meant as a file: say it is missing.
  try {
    LoadTopology("no/such/file.toml");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "no/such/file.toml: no such file");
  }
}

TEST(Preset, UniformRingUsesEachLinkDirectionOnceInRankOrder) {
  for (const int n : {1, 2, 3, 4, 7}) {
    const Topology t = MakeUniformRing(n, 25, 1000);
    ASSERT_EQ(t.num_gpus(), n);
    EXPECT_EQ(static_cast<int>(t.links.size()), n == 1 ? 0 : n == 2 ? 1 : n);
    if (n == 1) continue;
    RouteTable routes(t);
    std::set<std::pair<int, bool>> used;
    for (int r = 0; r < n; ++r) {
      const Route& route = routes.Between(r, (r + 1) % n);
      ASSERT_EQ(route.hops.size(), 1u);
      EXPECT_EQ(route.bottleneck_gbps, 25);
      EXPECT_EQ(route.latency_ns, 1000);
      EXPECT_TRUE(used.insert({route.hops[0].link, route.hops[0].forward}).second)
          << "ring of " << n << " reuses a link direction at rank " << r;
    }
  }
  EXPECT_THROW(MakeUniformRing(0, 25, 0), Error);
  EXPECT_THROW(MakeUniformRing(4, 0, 0), Error);
}

TEST(Preset, SharedBusSplitsOneCapacity) {
  const Topology t = MakeSharedBus(4, 16, 2000);
  const int bus = t.FindNode("bus");
  ASSERT_GE(bus, 0);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(bus)].forward_gbps, 16);
  for (const Link& l : t.links) EXPECT_GE(l.gbps, 1000 * 16);  // links never bind
  EXPECT_EQ(Width(t, 1, 2), 16);
  EXPECT_THROW(MakeSharedBus(0, 16, 0), Error);
}

TEST(Preset, KnownGpuModelsHaveRealisticFigures) {
  for (const std::string& name : KnownGpuModelNames()) {
    const DeviceSpec* spec = FindGpuModel(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_GT(spec->fp16_tflops, spec->fp32_tflops) << name;
    EXPECT_GT(spec->memory_gbps, 500) << name;
    EXPECT_GE(spec->memory_bytes, Bytes{16} << 30) << name;
    EXPECT_EQ(FindGpuModel(spec->model), spec) << "full name finds the same model";
  }
  EXPECT_EQ(FindGpuModel("v100")->model, "V100-SXM2-32GB");
  EXPECT_EQ(FindGpuModel("B200")->memory_gbps, 7700);
  EXPECT_EQ(FindGpuModel("H100")->fp32_tflops, 67);
  EXPECT_EQ(FindGpuModel("P100")->memory_gbps, 732);
  EXPECT_EQ(FindGpuModel("not-a-gpu"), nullptr);
}


int CountLinks(const Topology& t, LinkKind kind, Gbps gbps) {
  int count = 0;
  for (const Link& link : t.links) count += link.kind == kind && link.gbps == gbps;
  return count;
}

TEST(Preset, IbClustersHaveOneNdrOrHdrNicLinkPerGpu) {
  // 64 DGX A100: 512 GPUs, 512 HDR links (25 GB/s) into the fabric, 512
  // NVLink3 bundles of 12 lanes (300 GB/s) into 64 box NVSwitch nodes.
  const Topology a = MakeTopologyPreset("64x-dgx-a100-ib");
  EXPECT_EQ(a.num_gpus(), 512);
  EXPECT_EQ(a.num_hosts(), 64);
  EXPECT_EQ(CountLinks(a, LinkKind::kInfiniBand, 25), 512);
  EXPECT_EQ(CountLinks(a, LinkKind::kNvLink3, 300), 512);
  EXPECT_EQ(static_cast<int>(a.links.size()),
            CountLinks(a, LinkKind::kInfiniBand, 25) + CountLinks(a, LinkKind::kNvLink3, 300) +
                64 * (1 + 4 + 8 + 8));  // per box: UPI, 4 PCIe uplinks, 8 GPU and 8 NIC PCIe
  EXPECT_NE(a.description.find("non-blocking fat tree (one switch node)"), std::string::npos);
  const Topology h = MakeTopologyPreset("4x-dgx-h100-ib");
  EXPECT_EQ(CountLinks(h, LinkKind::kInfiniBand, 50), 32);  // NDR 400 Gb/s
  EXPECT_EQ(CountLinks(h, LinkKind::kNvLink4, 450), 32);     // 18 x 25 GB/s per GPU
}

TEST(Preset, SuperPodJoinsBoxesOverNvLinkWithATwoToOneUplink) {
  const Topology t = MakeTopologyPreset("32x-dgx-h100-superpod");
  ASSERT_EQ(t.num_gpus(), 256);
  EXPECT_EQ(t.num_hosts(), 32);
  // 256 GPU bundles of 18 NVLink4 lanes, 32 box uplinks of 72 lanes, 256 NICs.
  EXPECT_EQ(CountLinks(t, LinkKind::kNvLink4, 450), 256);
  EXPECT_EQ(CountLinks(t, LinkKind::kNvLink4, 1800), 32);
  EXPECT_EQ(CountLinks(t, LinkKind::kInfiniBand, 50), 256);
  for (const Link& link : t.links) {
    if (link.kind == LinkKind::kNvLink4) {
      EXPECT_EQ(link.gbps, 25 * link.lanes);
    }
  }
  EXPECT_GE(t.FindNode("nvlink-switch0"), 0);
  EXPECT_LT(t.FindNode("nvlink-switch1"), 0);  // 32 boxes: one domain
  // Every pair, in a box or across boxes, gets a GPU's whole NVLink
  // bandwidth (900 GB/s both directions added, as the seed text counts).
  EXPECT_EQ(Width(t, 0, 1), 450);
  EXPECT_EQ(Width(t, 0, 8), 450);
  EXPECT_EQ(Width(t, 3, 255), 450);
  RouteTable routes(t);
  EXPECT_EQ(routes.Between(0, 255).hops.size(), 4u);  // GPU-box-switch-box-GPU
  EXPECT_EQ(routes.Between(0, 255).latency_ns, 350 + 150 + 150 + 350);
}

TEST(Preset, SuperPodsBeyondOneDomainCrossInfiniBand) {
  const Topology t = MakeTopologyPreset("64x-dgx-h100-superpod");
  ASSERT_EQ(t.num_gpus(), 512);
  EXPECT_GE(t.FindNode("nvlink-switch1"), 0);
  EXPECT_LT(t.FindNode("nvlink-switch2"), 0);
  EXPECT_EQ(Width(t, 0, 255), 450);  // boxes 0 and 31: one domain
  EXPECT_EQ(Width(t, 0, 256), 50);   // boxes 0 and 32: NDR between domains
  EXPECT_EQ(PresetError("129x-dgx-h100-superpod"),
            "preset '129x-dgx-h100-superpod': the number of boxes must be 1..128 (up to 1024 "
            "GPUs)");
  EXPECT_NE(PresetError("nope").find("<N>x-dgx-h100-superpod"), std::string::npos);
}

}  // namespace
}  // namespace shardlab
