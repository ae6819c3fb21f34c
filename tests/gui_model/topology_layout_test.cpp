// TopologyLayout: every preset and file gets one tile per node, inside the
// view, none overlapping, in the shape its wiring calls for.
#include "app/gui/model/topology_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "engine/topology/presets.h"
#include "engine/topology/this_machine.h"
#include "engine/topology/topology_file.h"

namespace shardlab::gui {
namespace {

const float kAspects[] = {0.5f, 1.6f, 3.0f};

bool Inside(const Rect& inner, const Rect& outer) {
  return inner.min.x >= outer.min.x && inner.min.y >= outer.min.y && inner.max.x <= outer.max.x &&
         inner.max.y <= outer.max.y;
}

// The invariants every layout keeps, whatever the machine.
void ExpectWellFormed(const Topology& topology, const TopologyLayout& layout, float aspect) {
  SCOPED_TRACE(topology.name + " at aspect " + std::to_string(aspect));
  ASSERT_EQ(layout.tiles.size(), topology.nodes.size());
  for (std::size_t i = 0; i < layout.tiles.size(); ++i) {
    const NodeTile& tile = layout.tiles[i];
    EXPECT_EQ(tile.node, static_cast<int>(i));
    EXPECT_FALSE(tile.label.empty()) << topology.nodes[i].name;
    EXPECT_GT(tile.rect.width(), 0) << tile.label;
    EXPECT_GT(tile.rect.height(), 0) << tile.label;
    EXPECT_TRUE(Inside(tile.rect, Rect{{0, 0}, {1, 1}})) << tile.label;
  }
  // Sort-and-sweep by min.x keeps the 3,000-node cluster fast.
  std::vector<const NodeTile*> by_x;
  for (const NodeTile& tile : layout.tiles) by_x.push_back(&tile);
  std::sort(by_x.begin(), by_x.end(),
            [](const NodeTile* a, const NodeTile* b) { return a->rect.min.x < b->rect.min.x; });
  for (std::size_t i = 0; i < by_x.size(); ++i) {
    for (std::size_t j = i + 1; j < by_x.size() && by_x[j]->rect.min.x < by_x[i]->rect.max.x; ++j) {
      EXPECT_FALSE(by_x[i]->rect.Overlaps(by_x[j]->rect))
          << by_x[i]->label << " (node " << by_x[i]->node << ") and " << by_x[j]->label << " (node "
          << by_x[j]->node << ")";
    }
  }
  // Host frames: each holds its host's tiles (the fabric sits outside),
  // and no two frames overlap.
  for (std::size_t a = 0; a < layout.hosts.size(); ++a) {
    EXPECT_TRUE(Inside(layout.hosts[a].rect, Rect{{0, 0}, {1, 1}}));
    for (std::size_t b = a + 1; b < layout.hosts.size(); ++b)
      EXPECT_FALSE(layout.hosts[a].rect.Overlaps(layout.hosts[b].rect)) << a << " and " << b;
  }
  if (layout.hosts.empty()) return;
  std::map<int, const HostBox*> frame_of;
  for (const HostBox& box : layout.hosts) frame_of[box.host] = &box;
  for (std::size_t i = 0; i < topology.nodes.size(); ++i) {
    const Node& node = topology.nodes[i];
    if (node.kind == NodeKind::kNetSwitch) {
      for (const HostBox& box : layout.hosts)
        EXPECT_FALSE(layout.tiles[i].rect.Overlaps(box.rect)) << node.name << " in " << box.label;
      continue;
    }
    ASSERT_TRUE(frame_of.count(node.host)) << node.name;
    EXPECT_TRUE(Inside(layout.tiles[i].rect, frame_of[node.host]->rect)) << node.name;
  }
}

std::string ExpectedShape(const std::string& preset) {
  if (preset.starts_with("pcie")) return "pcie-tree";
  if (preset.starts_with("dgx1")) return "cube-mesh";
  if (preset.ends_with("-ib") || preset.ends_with("-superpod")) return "multi-host";
  return "switch-star";
}

TEST(TopologyLayout, EveryPresetAtEveryAspectIsInsideAndNonOverlapping) {
  for (const PresetInfo& preset : ListTopologyPresets()) {
    const Topology topology = MakeTopologyPreset(preset.name);
    for (const float aspect : kAspects) {
      const TopologyLayout layout = LayoutTopology(topology, aspect);
      ExpectWellFormed(topology, layout, aspect);
      EXPECT_EQ(layout.shape, ExpectedShape(preset.name)) << preset.name;
      EXPECT_EQ(layout.hosts.size(),
                layout.shape == "multi-host" ? static_cast<std::size_t>(topology.num_hosts()) : 0u)
          << preset.name;
    }
  }
}

TEST(TopologyLayout, ClustersOfSeveralSizesGetAHostBoxEach) {
  for (const char* name : {"3x-dgx-a100-ib", "8x-dgx-h100-ib", "16x-dgx-a100-ib"}) {
    const Topology topology = MakeTopologyPreset(name);
    for (const float aspect : kAspects) {
      const TopologyLayout layout = LayoutTopology(topology, aspect);
      ExpectWellFormed(topology, layout, aspect);
      EXPECT_EQ(layout.shape, "multi-host");
      EXPECT_EQ(static_cast<int>(layout.hosts.size()), topology.num_hosts());
    }
  }
}

TEST(TopologyLayout, TwoBoxesSitSideBySideInAWideView) {
  const Topology topology = MakeTopologyPreset("2x-dgx-a100-ib");
  const TopologyLayout layout = LayoutTopology(topology, 1.6f);
  ASSERT_EQ(layout.hosts.size(), 2u);
  EXPECT_LE(layout.hosts[0].rect.max.x, layout.hosts[1].rect.min.x);
  EXPECT_EQ(layout.hosts[0].label, "node 0");
  // The IB switch is below both boxes.
  const NodeTile& ib = layout.tiles[static_cast<std::size_t>(topology.FindNode("ib-switch"))];
  EXPECT_EQ(ib.label, "IB switch");
  for (const HostBox& box : layout.hosts) EXPECT_GE(ib.rect.min.y, box.rect.max.y);
}

TEST(TopologyLayout, CubeMeshPutsOneQuadInEachHalf) {
  for (const char* name : {"dgx1-p100", "dgx1-v100"}) {
    const Topology topology = MakeTopologyPreset(name);
    for (const float aspect : kAspects) {
      const TopologyLayout layout = LayoutTopology(topology, aspect);
      for (int rank = 0; rank < 8; ++rank) {
        const Rect& r = layout.tiles[static_cast<std::size_t>(topology.gpus[rank])].rect;
        if (rank < 4) {
          EXPECT_LE(r.max.x, 0.5f) << name << " GPU" << rank;
        } else {
          EXPECT_GE(r.min.x, 0.5f) << name << " GPU" << rank;
        }
      }
      // Each quad is a square on screen: its corners' spans match in pixels.
      auto center = [&](int rank) {
        return layout.tiles[static_cast<std::size_t>(topology.gpus[rank])].rect.center();
      };
      const float side_px_x = (center(1).x - center(0).x) * aspect;
      const float side_px_y = center(3).y - center(0).y;
      EXPECT_NEAR(side_px_x, side_px_y, 1e-4f);
      // GPUs sit above the PCIe switches and CPUs.
      for (std::size_t i = 0; i < topology.nodes.size(); ++i) {
        if (topology.nodes[i].kind == NodeKind::kGpu) continue;
        for (const int gpu : topology.gpus)
          EXPECT_GT(layout.tiles[i].rect.min.y,
                    layout.tiles[static_cast<std::size_t>(gpu)].rect.max.y);
      }
    }
  }
}

TEST(TopologyLayout, NvSwitchBoxesKeepGpusOffTheSwitch) {
  for (const char* name : {"dgx-a100", "dgx-h100", "hgx-b200", "dgx2-v100"}) {
    const Topology topology = MakeTopologyPreset(name);
    const int nvswitch = topology.FindNode("nvswitch");
    ASSERT_GE(nvswitch, 0) << name;
    for (const float aspect : kAspects) {
      const TopologyLayout layout = LayoutTopology(topology, aspect);
      const Rect& hub = layout.tiles[static_cast<std::size_t>(nvswitch)].rect;
      EXPECT_EQ(layout.tiles[static_cast<std::size_t>(nvswitch)].label, "NVSwitch");
      for (int rank = 0; rank < topology.num_gpus(); ++rank) {
        const Rect& gpu = layout.tiles[static_cast<std::size_t>(topology.gpus[rank])].rect;
        EXPECT_FALSE(gpu.Overlaps(hub)) << name << " GPU" << rank;
        // Eight GPUs: all above; sixteen: the first baseboard above.
        if (topology.num_gpus() <= 8 || rank < 8) {
          EXPECT_LE(gpu.max.y, hub.min.y) << name << rank;
        }
      }
    }
  }
}

TEST(TopologyLayout, PcieTreeHangsTheGpusAboveTheirSwitchesAndCpus) {
  const Topology topology = MakeTopologyPreset("pcie-gen4-8gpu");
  const TopologyLayout layout = LayoutTopology(topology, 1.6f);
  const Rect& pcie0 = layout.tiles[static_cast<std::size_t>(topology.FindNode("pcie0"))].rect;
  const Rect& pcie1 = layout.tiles[static_cast<std::size_t>(topology.FindNode("pcie1"))].rect;
  const Rect& cpu0 = layout.tiles[static_cast<std::size_t>(topology.FindNode("cpu0"))].rect;
  EXPECT_LT(pcie0.center().x, pcie1.center().x);  // under GPUs 0-3, then 4-7
  EXPECT_LT(pcie0.center().x, 0.5f);
  EXPECT_GT(cpu0.min.y, pcie0.max.y);
  EXPECT_EQ(layout.tiles[static_cast<std::size_t>(topology.FindNode("pcie1"))].label, "PCIe sw 1");
  EXPECT_EQ(layout.tiles[static_cast<std::size_t>(topology.FindNode("cpu0"))].label, "CPU0");
}

TEST(TopologyLayout, LabelsNameTheKindAndTheIndexWithinTheHost) {
  const Topology topology = MakeTopologyPreset("2x-dgx-a100-ib");
  const TopologyLayout layout = LayoutTopology(topology, 1.6f);
  auto label = [&](const char* name) {
    return layout.tiles[static_cast<std::size_t>(topology.FindNode(name))].label;
  };
  EXPECT_EQ(label("gpu9"), "GPU9");
  EXPECT_EQ(label("h1.nvswitch"), "NVSwitch");
  EXPECT_EQ(label("h1.cpu1"), "CPU1");
  EXPECT_EQ(label("h1.nic3"), "NIC3");
  EXPECT_EQ(label("h0.pcie2"), "PCIe sw 2");
}

TEST(TopologyLayout, ThousandGpuClusterStillGivesEveryNodeATile) {
  const Topology topology = MakeTopologyPreset("128x-dgx-h100-ib");
  const TopologyLayout layout = LayoutTopology(topology, 1.6f);
  ExpectWellFormed(topology, layout, 1.6f);
  EXPECT_EQ(layout.hosts.size(), 128u);
}

TEST(TopologyLayout, TopologyFilesGetASensibleLayout) {
  const Topology two_boxes = LoadTopologyFile(SHARDLAB_TEST_DATA_DIR "/topology/two_boxes.toml");
  const Topology workstation =
      LoadTopologyFile(SHARDLAB_TEST_DATA_DIR "/../../assets/topologies/example-workstation.toml");
  for (const float aspect : kAspects) {
    const TopologyLayout boxes = LayoutTopology(two_boxes, aspect);
    ExpectWellFormed(two_boxes, boxes, aspect);
    EXPECT_EQ(boxes.shape, "multi-host");
    EXPECT_EQ(boxes.hosts.size(), 2u);
    EXPECT_EQ(boxes.tiles[static_cast<std::size_t>(two_boxes.FindNode("switch"))].label,
              "Eth switch");

    const TopologyLayout station = LayoutTopology(workstation, aspect);
    ExpectWellFormed(workstation, station, aspect);
    EXPECT_EQ(station.shape, "pcie-tree");
    EXPECT_TRUE(station.hosts.empty());
  }
}

TEST(TopologyLayout, DirectlyLinkedGpusFormARacetrack) {
  const Topology ring = MakeUniformRing(6, 100, 0);
  const TopologyLayout layout = LayoutTopology(ring, 1.6f);
  ExpectWellFormed(ring, layout, 1.6f);
  EXPECT_EQ(layout.shape, "grid");
  // Top row 0 1 2, bottom row 5 4 3: ring neighbours stay side by side.
  auto center = [&](int rank) {
    return layout.tiles[static_cast<std::size_t>(ring.gpus[rank])].rect.center();
  };
  EXPECT_FLOAT_EQ(center(0).y, center(2).y);
  EXPECT_FLOAT_EQ(center(2).x, center(3).x);
  EXPECT_FLOAT_EQ(center(0).x, center(5).x);
  EXPECT_GT(center(5).y, center(0).y);
}

TEST(TopologyLayout, OddAspectsAndEmptyTopologiesDoNotBreakIt) {
  Topology empty;
  EXPECT_TRUE(LayoutTopology(empty, 1.0f).tiles.empty());
  const Topology topology = MakeTopologyPreset("dgx-a100");
  for (const float aspect : {0.0f, -1.0f, 0.05f, 40.0f}) {
    const TopologyLayout layout = LayoutTopology(topology, aspect);
    for (const NodeTile& tile : layout.tiles)
      EXPECT_TRUE(Inside(tile.rect, Rect{{0, 0}, {1, 1}})) << aspect;
  }
}

TEST(TopologyLayout, VirtualRanksOfOneGpuMeetInItsSharedMemoryNotASwitch) {
  // "This machine" with 8 ranks on one H200: the ranks' tiles join at a hub
  // that stands for the GPU's HBM, and the view says so.
  DeviceProfile profile;
  profile.model = "NVIDIA H200";
  profile.memory_gbps = 4000;
  profile.fp32_tflops = 50;
  const MachineRecord record = MachineFromProfile(profile, 1, "a test profile");
  const Topology virtual_ranks = VirtualDeviceTopology(record, 8);
  const TopologyLayout layout = LayoutTopology(virtual_ranks, 1.6f);
  ExpectWellFormed(virtual_ranks, layout, 1.6f);
  int hubs = 0, gpus = 0;
  for (const NodeTile& tile : layout.tiles) {
    const Node& node = virtual_ranks.nodes[static_cast<std::size_t>(tile.node)];
    if (node.kind == NodeKind::kNvSwitch) {
      EXPECT_EQ(tile.label, "shared HBM");
      ++hubs;
    }
    if (node.kind == NodeKind::kGpu) ++gpus;
  }
  EXPECT_EQ(hubs, 1);
  EXPECT_EQ(gpus, 8);
  // Ranks over two GPUs: the hub also stands for the link between them.
  const Topology two = VirtualDeviceTopology(MachineFromProfile(profile, 2, "a test profile"), 8);
  for (const NodeTile& tile : LayoutTopology(two, 1.6f).tiles) {
    if (two.nodes[static_cast<std::size_t>(tile.node)].kind == NodeKind::kNvSwitch) EXPECT_EQ(tile.label, "HBM and links");
  }
  // A real NVSwitch keeps its name.
  const Topology dgx = MakeTopologyPreset("dgx-a100");
  for (const NodeTile& tile : LayoutTopology(dgx, 1.6f).tiles) {
    if (dgx.nodes[static_cast<std::size_t>(tile.node)].kind == NodeKind::kNvSwitch) EXPECT_EQ(tile.label, "NVSwitch");
  }
}

}  // namespace
}  // namespace shardlab::gui
