// Routes: widest path first, then fewest hops, then lowest latency; GPUs
// never forward; validation names what is broken.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/topology/presets.h"
#include "engine/topology/topology.h"
#include "engine/topology/topology_print.h"

namespace shardlab {
namespace {

// A tiny topology builder for hand-made graphs.
struct Graph {
  Topology t;
  explicit Graph(const std::string& name) { t.name = name; }
  int Gpu() {
    Node n;
    n.name = "gpu" + std::to_string(t.gpus.size());
    n.kind = NodeKind::kGpu;
    n.device = *FindGpuModel("A100");
    t.nodes.push_back(n);
    t.gpus.push_back(static_cast<int>(t.nodes.size()) - 1);
    return t.gpus.back();
  }
  int Switch(const std::string& name, Gbps forward = 0) {
    Node n;
    n.name = name;
    n.kind = NodeKind::kPcieSwitch;
    n.forward_gbps = forward;
    t.nodes.push_back(n);
    return static_cast<int>(t.nodes.size()) - 1;
  }
  void Connect(int a, int b, Gbps gbps, TimeNs latency = 100, LinkKind kind = LinkKind::kPcie4) {
    Link l;
    l.a = a;
    l.b = b;
    l.gbps = gbps;
    l.latency_ns = latency;
    l.kind = kind;
    t.links.push_back(l);
  }
};

std::string ValidationError(const Topology& t) {
  try {
    ValidateTopology(t);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const Topology& Dgx1V100() {
  static const Topology t = MakeTopologyPreset("dgx1-v100");
  return t;
}

TEST(Route, Dgx1NeighboursUseOneNvLinkHop) {
  const Topology& t = Dgx1V100();
  const Route r = FindRoute(t, t.gpus[0], t.gpus[1]);
  ASSERT_EQ(r.hops.size(), 1u);
  const Link& link = t.links[static_cast<std::size_t>(r.hops[0].link)];
  EXPECT_EQ(link.kind, LinkKind::kNvLink2);
  EXPECT_EQ(r.bottleneck_gbps, 25);
  EXPECT_EQ(r.latency_ns, 700);
  EXPECT_TRUE(r.via_nodes.empty());
  // The hop's direction points from the source to the destination.
  EXPECT_EQ(r.hops[0].forward ? link.a : link.b, t.gpus[0]);
}

TEST(Route, Dgx1QuadsAreAsymmetric) {
  // GPU0 has single links to 1 and 2, doubled links to 3 and 4 (its twin).
  const Topology& t = Dgx1V100();
  RouteTable routes(t);
  EXPECT_EQ(routes.Between(0, 1).bottleneck_gbps, 25);
  EXPECT_EQ(routes.Between(0, 2).bottleneck_gbps, 25);
  EXPECT_EQ(routes.Between(0, 3).bottleneck_gbps, 50);
  EXPECT_EQ(routes.Between(0, 4).bottleneck_gbps, 50);
  EXPECT_EQ(routes.Between(2, 6).bottleneck_gbps, 25);
  EXPECT_EQ(RouteCode(t, routes.Between(0, 3)), "NV2");
  EXPECT_EQ(RouteCode(t, routes.Between(0, 1)), "NV1");
  // Every V100 has six NVLink lanes, every P100 four.
  for (const auto& [preset, lanes] :
       {std::pair<const char*, int>{"dgx1-v100", 6}, {"dgx1-p100", 4}}) {
    const Topology topo = MakeTopologyPreset(preset);
    for (const int gpu : topo.gpus) {
      int total = 0;
      for (const Link& l : topo.links) {
        if ((l.a == gpu || l.b == gpu) && LinkKindCode(l.kind) == std::string("NV"))
          total += l.lanes;
      }
      EXPECT_EQ(total, lanes) << preset << " " << topo.nodes[static_cast<std::size_t>(gpu)].name;
    }
  }
}

TEST(Route, Dgx1NonNeighboursCrossPcieAndTheCpus) {
  const Topology& t = Dgx1V100();
  const Route r = FindRoute(t, t.gpus[0], t.gpus[5]);
  // gpu0 -> pcie0 -> cpu0 -> cpu1 -> pcie2 -> gpu5
  ASSERT_EQ(r.hops.size(), 5u);
  ASSERT_EQ(r.via_nodes.size(), 4u);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(r.via_nodes[0])].name, "pcie0");
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(r.via_nodes[1])].name, "cpu0");
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(r.via_nodes[2])].name, "cpu1");
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(r.via_nodes[3])].name, "pcie2");
  EXPECT_EQ(r.bottleneck_gbps, 13);
  EXPECT_EQ(r.latency_ns, 500 + 500 + 400 + 500 + 500);
  EXPECT_EQ(RouteCode(t, r), "SYS");
  // Consecutive hops chain: each one starts where the previous one ended.
  int at = r.src;
  for (const LinkHop& hop : r.hops) {
    const Link& l = t.links[static_cast<std::size_t>(hop.link)];
    EXPECT_EQ(hop.forward ? l.a : l.b, at);
    at = hop.forward ? l.b : l.a;
  }
  EXPECT_EQ(at, r.dst);
}

TEST(Route, WidestPathBeatsShortestPath) {
  Graph g("widest");
  const int a = g.Gpu(), b = g.Gpu();
  const int narrow = g.Switch("narrow"), s1 = g.Switch("s1"), s2 = g.Switch("s2");
  g.Connect(a, narrow, 13);
  g.Connect(narrow, b, 13);
  g.Connect(a, s1, 50);
  g.Connect(s1, s2, 50);
  g.Connect(s2, b, 50);
  ValidateTopology(g.t);
  const Route r = FindRoute(g.t, a, b);
  EXPECT_EQ(r.bottleneck_gbps, 50);
  EXPECT_EQ(r.hops.size(), 3u);
}

TEST(Route, EqualWidthPrefersFewerHopsThenLowerLatency) {
  Graph g("ties");
  const int a = g.Gpu(), b = g.Gpu();
  const int s1 = g.Switch("s1"), s2 = g.Switch("s2"), slow = g.Switch("slow"),
            quick = g.Switch("quick");
  g.Connect(a, s1, 25, 10);
  g.Connect(s1, s2, 25, 10);
  g.Connect(s2, b, 25, 10);  // 3 hops, 30 ns
  g.Connect(a, slow, 25, 500);
  g.Connect(slow, b, 25, 500);  // 2 hops, 1000 ns
  g.Connect(a, quick, 25, 200);
  g.Connect(quick, b, 25, 200);  // 2 hops, 400 ns
  const Route r = FindRoute(g.t, a, b);
  EXPECT_EQ(r.hops.size(), 2u);
  EXPECT_EQ(r.latency_ns, 400);
  ASSERT_EQ(r.via_nodes.size(), 1u);
  EXPECT_EQ(r.via_nodes[0], quick);
}

TEST(Route, WideLongPrefixDoesNotHideAShortRoute) {
  // A one-label Dijkstra gets this wrong: at `join` the wide 3-hop prefix beats
  // the narrow 1-hop one, but both end at 10 GB/s, where fewer hops must win.
  Graph g("prefix");
  const int a = g.Gpu(), b = g.Gpu();
  const int w1 = g.Switch("w1"), w2 = g.Switch("w2"), join = g.Switch("join");
  g.Connect(a, w1, 100);
  g.Connect(w1, w2, 100);
  g.Connect(w2, join, 100);
  g.Connect(a, join, 20);
  g.Connect(join, b, 10);
  const Route r = FindRoute(g.t, a, b);
  EXPECT_EQ(r.bottleneck_gbps, 10);
  EXPECT_EQ(r.hops.size(), 2u);
}

TEST(Route, ForwardCapacityLimitsTrafficThroughANode) {
  Graph g("forward");
  const int a = g.Gpu(), b = g.Gpu();
  const int capped = g.Switch("capped", 8), open = g.Switch("open"), open2 = g.Switch("open2");
  g.Connect(a, capped, 100);
  g.Connect(capped, b, 100);
  g.Connect(a, open, 20);
  g.Connect(open, open2, 20);
  g.Connect(open2, b, 20);
  const Route r = FindRoute(g.t, a, b);
  EXPECT_EQ(r.bottleneck_gbps, 20);
  EXPECT_EQ(r.hops.size(), 3u);

  const Topology bus = MakeSharedBus(4, 16, 1000);
  const Route via_bus = FindRoute(bus, bus.gpus[0], bus.gpus[3]);
  EXPECT_EQ(via_bus.bottleneck_gbps, 16);
  EXPECT_EQ(via_bus.latency_ns, 1000);
  ASSERT_EQ(via_bus.via_nodes.size(), 1u);
  EXPECT_EQ(bus.nodes[static_cast<std::size_t>(via_bus.via_nodes[0])].name, "bus");
}

TEST(Route, GpusNeverForwardForOthers) {
  const Topology ring = MakeUniformRing(4, 25, 700);
  Route r;
  EXPECT_TRUE(TryFindRoute(ring, ring.gpus[0], ring.gpus[1], &r));
  EXPECT_FALSE(TryFindRoute(ring, ring.gpus[0], ring.gpus[2], &r));
  try {
    FindRoute(ring, ring.gpus[0], ring.gpus[2]);
    ADD_FAILURE() << "routed through a GPU";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "topology 'ring-4': no route from 'gpu0' to 'gpu2' (GPUs do not forward traffic for "
              "others)");
  }
  RouteTable routes(ring);
  EXPECT_THROW(routes.Between(1, 3), Error);
  EXPECT_EQ(WidestBandwidthsFrom(ring, ring.gpus[0])[static_cast<std::size_t>(ring.gpus[2])], 0);
}

TEST(Route, ARouteToItselfHasNoHops) {
  const Route r = FindRoute(Dgx1V100(), 0, 0);
  EXPECT_TRUE(r.hops.empty());
  EXPECT_EQ(r.latency_ns, 0);
  EXPECT_TRUE(std::isinf(r.bottleneck_gbps));
}

TEST(RouteTable, CachesRoutesAndChecksRanks) {
  const Topology& t = Dgx1V100();
  RouteTable routes(t);
  const Route& first = routes.Between(2, 7);
  const Route& again = routes.Between(2, 7);
  EXPECT_EQ(&first, &again);
  EXPECT_EQ(first.src, t.gpus[2]);
  EXPECT_EQ(first.dst, t.gpus[7]);
  EXPECT_THROW(routes.Between(0, 8), Error);
  EXPECT_THROW(routes.Between(-1, 0), Error);
  RouteTable moved = std::move(routes);
  EXPECT_EQ(moved.Between(2, 7).bottleneck_gbps, first.bottleneck_gbps);
}

TEST(Route, ThousandGpuClusterRoutesQuickly) {
  const Topology t = MakeTopologyPreset("128x-dgx-h100-ib");
  ASSERT_EQ(t.num_gpus(), 1024);
  EXPECT_EQ(t.num_hosts(), 128);
  RouteTable routes(t);
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 1024; ++r) routes.Between(r, (r + 1) % 1024);
  for (int r = 0; r < 1024; r += 8) routes.Between(r, 1023 - r);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0) << "1,152 routes on 1,024 GPUs took " << seconds << " s";

  // Inside a box: one hop each way through the NVSwitch at 450 GB/s.
  const Route& inside = routes.Between(0, 1);
  EXPECT_EQ(inside.bottleneck_gbps, 450);
  EXPECT_EQ(inside.hops.size(), 2u);
  EXPECT_EQ(RouteCode(t, inside), "NV18");
  // Across boxes: PCIe switch, NIC, IB switch, NIC, PCIe switch at 50 GB/s.
  const Route& across = routes.Between(7, 8);
  EXPECT_EQ(across.bottleneck_gbps, 50);
  EXPECT_EQ(across.hops.size(), 6u);
  EXPECT_EQ(across.latency_ns, 4000);
  EXPECT_EQ(RouteCode(t, across), "NET");
}

TEST(TopologyValidation, NamesWhatIsBroken) {
  Graph g("broken");
  const int a = g.Gpu(), b = g.Gpu();
  const int s = g.Switch("sw");
  g.Connect(a, s, 25);
  g.Connect(s, b, 25);
  EXPECT_EQ(ValidationError(g.t), "");

  Topology t = g.t;
  t.nodes[static_cast<std::size_t>(s)].name = "gpu0";
  EXPECT_EQ(ValidationError(t), "topology 'broken': two nodes are named 'gpu0'");

  t = g.t;
  t.links[1].b = 42;
  EXPECT_EQ(ValidationError(t), "topology 'broken': link 1 ('sw' -- #42): end b is not a node");

  t = g.t;
  t.links[0].b = t.links[0].a;
  EXPECT_EQ(ValidationError(t),
            "topology 'broken': link 0 ('gpu0' -- 'gpu0'): links a node to itself");

  t = g.t;
  t.links[0].gbps = 0;
  EXPECT_EQ(ValidationError(t),
            "topology 'broken': link 0 ('gpu0' -- 'sw'): gbps must be positive");

  t = g.t;
  t.links[1].latency_ns = -1;
  EXPECT_EQ(ValidationError(t), "topology 'broken': link 1 ('sw' -- 'gpu1'): latency must be >= 0");

  t = g.t;
  t.nodes[static_cast<std::size_t>(b)].device.fp16_tflops = 0;
  EXPECT_EQ(ValidationError(t), "topology 'broken': node 'gpu1': a GPU needs fp16_tflops > 0");

  t = g.t;
  t.gpus.pop_back();
  EXPECT_EQ(ValidationError(t), "topology 'broken': GPU 'gpu1' has no rank");

  t = g.t;
  t.gpus = {a, a};
  EXPECT_EQ(ValidationError(t), "topology 'broken': rank 1: GPU 'gpu0' has two ranks");

  t = g.t;
  t.gpus = {s};
  EXPECT_EQ(ValidationError(t), "topology 'broken': rank 0: node 'sw' is a PCIe switch, not a GPU");

  t = g.t;
  t.nodes[static_cast<std::size_t>(a)].forward_gbps = 10;
  EXPECT_EQ(ValidationError(t),
            "topology 'broken': node 'gpu0': GPUs do not forward traffic; forward_gbps must be 0");

  Topology empty;
  empty.name = "empty";
  EXPECT_EQ(ValidationError(empty), "topology 'empty': has no nodes");
  Topology no_gpus;
  no_gpus.name = "switches";
  no_gpus.nodes.push_back(Node{"sw", NodeKind::kNvSwitch, 0, {}, 0});
  EXPECT_EQ(ValidationError(no_gpus), "topology 'switches': has no GPUs");
}

TEST(TopologyValidation, RoutingAnUnvalidatedTopologyDoesNotCrash) {
  Graph g("bad-ends");
  const int a = g.Gpu(), b = g.Gpu();
  g.Connect(a, b, 25);
  g.Connect(a, 99, 25);  // a dangling link is ignored by routing
  const Route r = FindRoute(g.t, a, b);
  EXPECT_EQ(r.hops.size(), 1u);
  EXPECT_THROW(FindRoute(g.t, a, 99), Error);
}

}  // namespace
}  // namespace shardlab

namespace shardlab {
namespace {

// The NICs a route passes through, by name, in order.
std::vector<std::string> NicsOn(const Topology& t, const Route& r) {
  std::vector<std::string> nics;
  for (const int v : r.via_nodes) {
    const Node& node = t.nodes[static_cast<std::size_t>(v)];
    if (node.kind == NodeKind::kNic) nics.push_back(node.name);
  }
  return nics;
}

std::string OwnNicName(const Topology& t, int rank) {
  const Node& gpu = t.nodes[static_cast<std::size_t>(t.gpus[static_cast<std::size_t>(rank)])];
  return gpu.nic < 0 ? "" : t.nodes[static_cast<std::size_t>(gpu.nic)].name;
}

TEST(Route, CrossBoxRoutesLeaveAndEnterThroughEachGpusOwnNic) {
  const Topology t = MakeTopologyPreset("2x-dgx-a100-ib");
  RouteTable routes(t);
  std::set<std::string> own;
  for (int i = 0; i < 16; ++i) {
    // GPU 2s+k shares PCIe switch s with NICs 2s and 2s+1 and owns NIC 2s+k.
    EXPECT_EQ(OwnNicName(t, i), "h" + std::to_string(i / 8) + ".nic" + std::to_string(i % 8));
    own.insert(OwnNicName(t, i));
  }
  EXPECT_EQ(own.size(), 16u);  // every NIC serves one GPU
  for (int i = 0; i < 8; ++i) {
    for (int j = 8; j < 16; ++j) {
      for (const auto& [src, dst] : {std::pair{i, j}, std::pair{j, i}}) {
        const Route& r = routes.Between(src, dst);
        EXPECT_EQ(NicsOn(t, r), (std::vector<std::string>{OwnNicName(t, src), OwnNicName(t, dst)}))
            << src << " -> " << dst;
        EXPECT_EQ(r.bottleneck_gbps, 25);  // HDR
      }
    }
  }
  // Inside a box nothing changes: NVSwitch, no NIC.
  const Route& inside = routes.Between(0, 1);
  ASSERT_EQ(inside.via_nodes.size(), 1u);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(inside.via_nodes[0])].name, "h0.nvswitch");
  EXPECT_EQ(inside.bottleneck_gbps, 300);
}

TEST(Route, SuperPodUsesNvLinkInADomainAndOwnNicsBetweenDomains) {
  const Topology t = MakeTopologyPreset("33x-dgx-h100-superpod");  // box 32 is a second domain
  RouteTable routes(t);
  EXPECT_TRUE(NicsOn(t, routes.Between(3, 8 * 31 + 5)).empty());
  for (int k = 0; k < 8; ++k) {
    const int far = 8 * 32 + (k + 3) % 8;
    EXPECT_EQ(NicsOn(t, routes.Between(k, far)),
              (std::vector<std::string>{OwnNicName(t, k), OwnNicName(t, far)}));
    EXPECT_EQ(routes.Between(k, far).bottleneck_gbps, 50);  // NDR
  }
}

// Two GPUs on one switch with two NICs: gpu0 owns the slow one, gpu1 the
// fast one, and neither may borrow the other's.
TEST(Route, AnOwnNicIsUsedEvenWhenAnotherIsWider) {
  Graph g("rails");
  const int gpu0 = g.Gpu(), gpu1 = g.Gpu(), gpu2 = g.Gpu();
  const int pcie = g.Switch("pcie");
  g.Connect(gpu0, pcie, 26);
  g.Connect(gpu1, pcie, 26);
  auto nic = [&](const std::string& name) {
    Node n;
    n.name = name;
    n.kind = NodeKind::kNic;
    g.t.nodes.push_back(n);
    return static_cast<int>(g.t.nodes.size()) - 1;
  };
  const int slow = nic("slow"), fast = nic("fast"), far = nic("far");
  const int fabric = g.Switch("fabric");
  g.Connect(slow, pcie, 26);
  g.Connect(fast, pcie, 26);
  g.Connect(slow, fabric, 10);
  g.Connect(fast, fabric, 20);
  g.Connect(far, fabric, 20);
  g.Connect(far, gpu2, 26);
  g.t.nodes[static_cast<std::size_t>(gpu0)].nic = slow;
  g.t.nodes[static_cast<std::size_t>(gpu1)].nic = fast;
  g.t.nodes[static_cast<std::size_t>(gpu2)].nic = far;
  ValidateTopology(g.t);
  EXPECT_EQ(FindRoute(g.t, gpu0, gpu2).bottleneck_gbps, 10);
  EXPECT_EQ(FindRoute(g.t, gpu2, gpu0).bottleneck_gbps, 10);
  EXPECT_EQ(FindRoute(g.t, gpu1, gpu2).bottleneck_gbps, 20);
  EXPECT_EQ(NicsOn(g.t, FindRoute(g.t, gpu2, gpu0)), (std::vector<std::string>{"far", "slow"}));
  // Between the two GPUs of the switch no NIC is needed.
  EXPECT_EQ(FindRoute(g.t, gpu0, gpu1).bottleneck_gbps, 26);
  // Without the binding gpu0 would borrow the fast NIC.
  Topology unbound = g.t;
  for (Node& n : unbound.nodes) n.nic = -1;
  EXPECT_EQ(FindRoute(unbound, gpu0, gpu2).bottleneck_gbps, 20);
  // The one-pass widths agree with the routes, both ways.
  for (const Topology* t : {&g.t, &unbound}) {
    for (const int src : t->gpus) {
      const std::vector<Gbps> widths = WidestBandwidthsFrom(*t, src);
      for (const int dst : t->gpus) {
        if (dst == src) continue;
        EXPECT_EQ(widths[static_cast<std::size_t>(dst)], FindRoute(*t, src, dst).bottleneck_gbps)
            << src << " -> " << dst;
      }
    }
  }
}

TEST(Route, WidestBandwidthsAgreeWithRoutesOnAClusterPreset) {
  const Topology t = MakeTopologyPreset("2x-dgx-a100-ib");
  RouteTable routes(t);
  for (const int src : {0, 3, 9}) {
    const std::vector<Gbps> widths = WidestBandwidthsFrom(t, t.gpus[static_cast<std::size_t>(src)]);
    for (int dst = 0; dst < t.num_gpus(); ++dst) {
      if (dst == src) continue;
      EXPECT_EQ(widths[static_cast<std::size_t>(t.gpus[static_cast<std::size_t>(dst)])],
                routes.Between(src, dst).bottleneck_gbps)
          << src << " -> " << dst;
    }
  }
}

TEST(TopologyValidation, AnOwnNicMustBeANicNamedByAGpu) {
  Topology t = MakeTopologyPreset("2x-dgx-a100-ib");
  t.nodes[static_cast<std::size_t>(t.gpus[0])].nic = t.gpus[1];
  EXPECT_EQ(ValidationError(t),
            "topology '2x-dgx-a100-ib': node 'gpu0': own NIC 'gpu1' is a GPU, not a NIC");
  t.nodes[static_cast<std::size_t>(t.gpus[0])].nic = 1 << 20;
  EXPECT_EQ(ValidationError(t),
            "topology '2x-dgx-a100-ib': node 'gpu0': own NIC id 1048576 is not a node");
  t.nodes[static_cast<std::size_t>(t.gpus[0])].nic = -1;
  const int nic = t.FindNode("h0.nic0");
  t.nodes[static_cast<std::size_t>(nic)].nic = nic;
  EXPECT_EQ(ValidationError(t),
            "topology '2x-dgx-a100-ib': node 'h0.nic0': only GPUs have an own NIC");
}

}  // namespace
}  // namespace shardlab
