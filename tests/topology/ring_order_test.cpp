// Ring order: on the hybrid cube-mesh the chosen ring uses NVLink only,
// where rank order crosses PCIe; on switch-based machines rank order stays.
#include "engine/topology/ring_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>

#include "engine/core/error.h"
#include "engine/topology/presets.h"
#include "engine/topology/topology_print.h"

namespace shardlab {
namespace {

std::vector<int> RankOrder(int n) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

void ExpectPermutationFromZero(const std::vector<int>& order, int n) {
  ASSERT_EQ(static_cast<int>(order.size()), n);
  EXPECT_EQ(order[0], 0);
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, RankOrder(n));
}

TEST(RingOrder, Dgx1V100RingUsesOnlyNvLinks) {
  const Topology t = MakeTopologyPreset("dgx1-v100");
  const std::vector<int> order = ChooseRingOrder(t, 8);
  ExpectPermutationFromZero(order, 8);
  RouteTable routes(t);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Route& hop = routes.Between(order[k], order[(k + 1) % order.size()]);
    ASSERT_EQ(hop.hops.size(), 1u) << "hop " << k << " is not a direct link";
    EXPECT_EQ(RouteCode(t, hop).substr(0, 2), "NV");
  }
  // The cube-mesh holds one ring of doubled links (0-3-2-1-5-6-7-4), which the search finds.
  EXPECT_GE(RingBottleneckGbps(t, order), 25);
  EXPECT_EQ(RingBottleneckGbps(t, order), 50);
  // Rank order crosses from GPU3 to GPU4 and from GPU7 to GPU0 over PCIe and QPI.
  EXPECT_EQ(RingBottleneckGbps(t, RankOrder(8)), 13);
}

TEST(RingOrder, Dgx1P100RingUsesOnlyNvLinks) {
  const Topology t = MakeTopologyPreset("dgx1-p100");
  const std::vector<int> order = ChooseRingOrder(t, 8);
  ExpectPermutationFromZero(order, 8);
  EXPECT_EQ(RingBottleneckGbps(t, order), 20);
  EXPECT_EQ(RingBottleneckGbps(t, RankOrder(8)), 13);
}

TEST(RingOrder, SubsetsOfTheCubeMeshAreSearchedToo) {
  const Topology t = MakeTopologyPreset("dgx1-v100");
  // Ranks 0..5 still hold an NVLink ring (0-2-3-1-5-4); rank order crosses 3 -> 4 over PCIe.
  const std::vector<int> order = ChooseRingOrder(t, 6);
  ExpectPermutationFromZero(order, 6);
  EXPECT_GE(RingBottleneckGbps(t, order), 25);
  EXPECT_LT(RingBottleneckGbps(t, RankOrder(6)), 25);
}

TEST(RingOrder, SwitchBasedMachinesKeepRankOrder) {
  for (const char* name :
       {"dgx-a100", "dgx-h100", "dgx2-v100", "pcie-gen3-4gpu", "2x-dgx-a100-ib"}) {
    const Topology t = MakeTopologyPreset(name);
    EXPECT_EQ(ChooseRingOrder(t, t.num_gpus()), RankOrder(t.num_gpus())) << name;
  }
  const Topology ring = MakeUniformRing(6, 25, 700);
  EXPECT_EQ(ChooseRingOrder(ring, 6), RankOrder(6));
}

TEST(RingOrder, ThousandGpuClusterKeepsRankOrderQuickly) {
  const Topology t = MakeTopologyPreset("128x-dgx-h100-ib");
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int> order = ChooseRingOrder(t, 1024);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(order, RankOrder(1024));
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(RingBottleneckGbps(t, order), 50);
}

// Twelve GPUs in two NVSwitch islands joined by one slow link, with ranks
// dealt alternately to the islands: rank order crosses twelve times, the
// best ring twice. Too many for the exact search, so greedy + 2-opt.
TEST(RingOrder, LargeRingsAvoidNeedlessSlowHops) {
  Topology t;
  t.name = "islands";
  const int islands[2] = {0, 1};
  for (const int island : islands) {
    Node sw;
    sw.name = "nvswitch" + std::to_string(island);
    sw.kind = NodeKind::kNvSwitch;
    t.nodes.push_back(sw);
  }
  Link bridge;
  bridge.a = 0;
  bridge.b = 1;
  bridge.kind = LinkKind::kInfiniBand;
  bridge.gbps = 25;
  bridge.latency_ns = 2000;
  t.links.push_back(bridge);
  for (int r = 0; r < 12; ++r) {
    Node gpu;
    gpu.name = "gpu" + std::to_string(r);
    gpu.device = *FindGpuModel("A100");
    t.nodes.push_back(gpu);
    t.gpus.push_back(static_cast<int>(t.nodes.size()) - 1);
    Link l;
    l.a = t.gpus.back();
    l.b = r % 2;
    l.kind = LinkKind::kNvLink3;
    l.gbps = 300;
    l.latency_ns = 350;
    l.lanes = 12;
    t.links.push_back(l);
  }
  ValidateTopology(t);
  const std::vector<int> order = ChooseRingOrder(t, 12);
  ExpectPermutationFromZero(order, 12);
  int slow_hops = 0;
  RouteTable routes(t);
  for (std::size_t k = 0; k < order.size(); ++k) {
    slow_hops += routes.Between(order[k], order[(k + 1) % order.size()]).bottleneck_gbps < 300;
  }
  EXPECT_EQ(slow_hops, 2);
  EXPECT_EQ(RingBottleneckGbps(t, order), 25);
}

TEST(RingOrder, SmallAndInvalidRequests) {
  const Topology t = MakeTopologyPreset("dgx1-v100");
  EXPECT_EQ(ChooseRingOrder(t, 1), std::vector<int>{0});
  EXPECT_EQ(ChooseRingOrder(t, 2), (std::vector<int>{0, 1}));
  EXPECT_THROW(ChooseRingOrder(t, 0), Error);
  EXPECT_THROW(ChooseRingOrder(t, 9), Error);
  EXPECT_THROW(RingBottleneckGbps(t, {0, 0, 1}), Error);
  EXPECT_THROW(RingBottleneckGbps(t, {0, 1, 5}), Error);
  // A ring that needs a GPU to forward cannot close: bottleneck 0.
  const Topology line = MakeUniformRing(4, 25, 0);
  EXPECT_EQ(RingBottleneckGbps(line, {0, 2, 1, 3}), 0);
}

}  // namespace
}  // namespace shardlab
