#include "engine/backends/sim/nccl_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "engine/core/error.h"

namespace shardlab {

namespace {

// What one transport costs per protocol (index: NcclProto). Efficiency is
// the share of the path's GB/s a ring reaches in the steady state; base_us
// is paid once per collective (setup, the first slice's fill), hop_us per
// pipeline step (see nccl_model.h). A protocol with efficiency 0 is not
// used on that transport. Measurements on one rank count fix only
// base + steps x hop; the split between them follows NCCL's tuner (a few
// microseconds per hop) and decides how latency grows with the ranks.
struct TransportCost {
  double efficiency[3];
  double base_us[3];
  double hop_us[3];
};

// Fitted constants (tests/data/nccl-published/README.md: which measurement
// sets which; the rest are estimates and say so there).
//   NVLink: 8x A100 SXM on NVSwitch (300 GB/s per GPU): Simple reaches 235
//   GB/s bus bandwidth, LL128 about 150, LL about 34; latencies of 32 us
//   (LL), 85 us (LL128) and 150 us (Simple) with 14 ring steps.
constexpr TransportCost kNvLinkCost = {{0.113, 0.50, 0.783}, {0.0, 45.0, 80.0}, {1.93, 2.5, 4.6}};
//   Host memory (no P2P: staged through pinned host buffers): 2x RTX 2080
//   Ti on PCIe 3 (12 GB/s host copies): Simple 4.0 GB/s, LL 2.6 GB/s;
//   12 us (LL) and 20 us (Simple) for the 2 steps of two ranks.
constexpr TransportCost kHostMemoryCost = {{0.217, 0.0, 0.333}, {0.0, 0.0, 7.0}, {3.5, 0.0, 4.0}};
//   PCIe P2P: estimate (no published table checked): Simple at 80% of the
//   link, LL at 15%, latencies between NVLink's and host memory's.
constexpr TransportCost kPcieP2pCost = {{0.15, 0.0, 0.80}, {0.0, 0.0, 20.0}, {2.5, 0.0, 4.0}};
//   Network (IB / RoCE with GPUDirect RDMA): Simple at 90% of the node's
//   NIC bandwidth (2x 8 A100 over 16x 100 Gb/s RoCE: 171-192 GB/s bus
//   bandwidth of 200); LL, LL128 and the latencies are estimates.
constexpr TransportCost kNetworkCost = {{0.10, 0.50, 0.90}, {0.0, 0.0, 0.0}, {5.0, 8.0, 15.0}};

constexpr double kLaunchUs = 5.0;        // per collective: kernel launch, setup
// NVLS: the bus bandwidth NCCL's maintainers give for 8 H100 (~480 GB/s,
// algbw ~275 GB/s of 450 per GPU: 61%), checked against a published 8x
// H200 run (477 GB/s). Latency is an estimate (NVLS is chosen for large
// sizes, where it does not matter).
constexpr double kNvlsEfficiency = 0.611;
constexpr double kNvlsLatencyUs = 40.0;
// A tree's bus bandwidth relative to the ring's (NCCL discounts its trees
// alike): trees win at mid sizes on many nodes through log2 latency.
constexpr double kTreeBandwidthFactor = 0.92;

const TransportCost& CostOf(NcclTransport t) {
  switch (t) {
    case NcclTransport::kNvLink: return kNvLinkCost;
    case NcclTransport::kPcieP2p: return kPcieP2pCost;
    case NcclTransport::kHostMemory:
    case NcclTransport::kNone: return kHostMemoryCost;
  }
  return kHostMemoryCost;
}

bool IsNvLinkKind(LinkKind kind) { return kind <= LinkKind::kNvLink5; }

// A transport's rank: the worst one found on a node decides.
int Badness(NcclTransport t) {
  switch (t) {
    case NcclTransport::kNone: return -1;
    case NcclTransport::kNvLink: return 0;
    case NcclTransport::kPcieP2p: return 1;
    case NcclTransport::kHostMemory: return 2;
  }
  return 2;
}

// GB/s a GPU can drive over its NVLinks per direction (all of them: NCCL
// builds as many rings as it takes to use every link), and whether they
// all end at an NVLink 4+ switch (NVLS).
struct GpuNvLinks {
  Gbps gbps = 0;
  bool nvls_switch = true;
};

GpuNvLinks NvLinksOf(const Topology& topology, std::int32_t gpu) {
  GpuNvLinks out;
  bool any = false;
  for (const Link& link : topology.links) {
    if (link.a != gpu && link.b != gpu) continue;
    if (!IsNvLinkKind(link.kind)) continue;
    any = true;
    out.gbps += link.gbps;
    const std::int32_t other = link.a == gpu ? link.b : link.a;
    const bool switch_end = topology.nodes[static_cast<std::size_t>(other)].kind == NodeKind::kNvSwitch;
    if (!switch_end || link.kind < LinkKind::kNvLink4) out.nvls_switch = false;
  }
  if (!any) out.nvls_switch = false;
  return out;
}

// The ring through `gpus` (one node, in order) over PCIe: the transport
// (host memory when a route passes a CPU) and each hop's share of the links
// and forwarding nodes the ring's routes use together.
void PcieRing(const Topology& topology, const std::vector<std::int32_t>& gpus,
              NcclTransport* transport, Gbps* gbps) {
  std::vector<Route> routes;
  std::map<std::pair<std::int32_t, bool>, int> link_uses;
  std::map<std::int32_t, int> node_uses;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    Route route;
    const std::int32_t a = gpus[i], b = gpus[(i + 1) % gpus.size()];
    if (!TryFindRoute(topology, a, b, &route))
      throw Error("nccl model: no route from " + topology.nodes[a].name + " to " +
                  topology.nodes[b].name);
    for (const LinkHop& hop : route.hops) ++link_uses[{hop.link, hop.forward}];
    for (std::int32_t via : route.via_nodes) {
      ++node_uses[via];
      if (topology.nodes[static_cast<std::size_t>(via)].kind == NodeKind::kCpu)
        *transport = NcclTransport::kHostMemory;
    }
    routes.push_back(std::move(route));
  }
  if (*transport != NcclTransport::kHostMemory) *transport = NcclTransport::kPcieP2p;
  Gbps slowest = 1e30;
  for (const Route& route : routes) {
    for (const LinkHop& hop : route.hops)
      slowest = std::min(slowest, topology.links[static_cast<std::size_t>(hop.link)].gbps /
                                      link_uses[{hop.link, hop.forward}]);
    for (std::int32_t via : route.via_nodes) {
      const Gbps forward = topology.nodes[static_cast<std::size_t>(via)].forward_gbps;
      if (forward > 0) slowest = std::min(slowest, forward / node_uses[via]);
    }
  }
  *gbps = slowest;
}

// Network GB/s of a host: every NIC's links that leave the host.
Gbps NicGbpsOf(const Topology& topology, int host) {
  Gbps total = 0;
  for (const Link& link : topology.links) {
    const Node& a = topology.nodes[static_cast<std::size_t>(link.a)];
    const Node& b = topology.nodes[static_cast<std::size_t>(link.b)];
    const bool a_nic = a.kind == NodeKind::kNic && a.host == host;
    const bool b_nic = b.kind == NodeKind::kNic && b.host == host;
    if (a_nic == b_nic) continue;
    const Node& other = a_nic ? b : a;
    if (other.kind == NodeKind::kNetSwitch || other.kind == NodeKind::kNic || other.host != host)
      total += link.gbps;
  }
  return total;
}

double BusFactor(LibraryCollective kind, int n) {
  const double f = static_cast<double>(n - 1) / n;
  switch (kind) {
    case LibraryCollective::kAllReduce: return 2 * f;
    case LibraryCollective::kReduceScatter:
    case LibraryCollective::kAllGather:
    case LibraryCollective::kAllToAll: return f;
    case LibraryCollective::kBroadcast:
    case LibraryCollective::kReduce: return 1;
    case LibraryCollective::kNone: return 0;
  }
  return 0;
}

}  // namespace

const char* NcclAlgoName(NcclAlgo algo) {
  switch (algo) {
    case NcclAlgo::kRing: return "ring";
    case NcclAlgo::kTree: return "tree";
    case NcclAlgo::kNvls: return "nvls";
  }
  return "?";
}

const char* NcclProtoName(NcclProto proto) {
  switch (proto) {
    case NcclProto::kLL: return "LL";
    case NcclProto::kLL128: return "LL128";
    case NcclProto::kSimple: return "Simple";
  }
  return "?";
}

const char* NcclTransportName(NcclTransport t) {
  switch (t) {
    case NcclTransport::kNvLink: return "NVLink";
    case NcclTransport::kPcieP2p: return "PCIe P2P";
    case NcclTransport::kHostMemory: return "host memory";
    case NcclTransport::kNone: return "none";
  }
  return "?";
}

std::string NcclPrediction::Describe() const {
  return std::string(NcclAlgoName(chosen.algo)) + "/" + NcclProtoName(chosen.proto);
}

NcclMachine DescribeNcclMachine(const Topology& topology,
                                std::span<const std::int32_t> rank_gpu_nodes) {
  NcclMachine m;
  m.ranks = static_cast<int>(rank_gpu_nodes.size());
  std::map<int, std::vector<std::int32_t>> by_host;
  for (std::int32_t gpu : rank_gpu_nodes)
    by_host[topology.nodes[static_cast<std::size_t>(gpu)].host].push_back(gpu);
  m.nodes = std::max<int>(1, static_cast<int>(by_host.size()));
  m.gpus_per_node = 1;
  for (const auto& [host, gpus] : by_host)
    m.gpus_per_node = std::max(m.gpus_per_node, static_cast<int>(gpus.size()));

  // Inside nodes: NVLink when every GPU has NVLinks (NCCL rings over them),
  // else the PCIe ring of the largest node.
  bool all_nvlink = true;
  bool nvls = true;
  Gbps nvlink_gbps = 1e30;
  for (std::int32_t gpu : rank_gpu_nodes) {
    const GpuNvLinks links = NvLinksOf(topology, gpu);
    if (links.gbps <= 0) all_nvlink = false;
    nvls = nvls && links.nvls_switch;
    nvlink_gbps = std::min(nvlink_gbps, links.gbps);
  }
  if (m.gpus_per_node > 1) {
    if (all_nvlink) {
      m.intra = NcclTransport::kNvLink;
      m.intra_gbps = nvlink_gbps;
      m.nvls = nvls;
    } else {
      const std::vector<std::int32_t>* largest = nullptr;
      for (const auto& [host, gpus] : by_host)
        if (largest == nullptr || gpus.size() > largest->size()) largest = &gpus;
      PcieRing(topology, *largest, &m.intra, &m.intra_gbps);
    }
  }
  if (m.nodes > 1) {
    m.nic_gbps_per_node = 1e30;
    for (const auto& [host, gpus] : by_host)
      m.nic_gbps_per_node = std::min(m.nic_gbps_per_node, NicGbpsOf(topology, host));
    if (m.nic_gbps_per_node <= 0)
      throw Error("nccl model: a node of topology '" + topology.name + "' has no NIC to the network");
  }
  return m;
}

NcclPrediction PredictNccl(LibraryCollective kind, double size_bytes, const NcclMachine& m,
                           const NcclModelOptions& options) {
  NcclPrediction out;
  const int n = m.ranks;
  out.bus_bytes = BusFactor(kind, n) * size_bytes;
  if (kind == LibraryCollective::kNone || n <= 1) {
    out.chosen.time_ns = 0;
    out.candidates.push_back(out.chosen);
    return out;
  }
  const TransportCost& intra = CostOf(m.intra);
  const bool multi_node = m.nodes > 1;
  const bool single_gpu_nodes = m.gpus_per_node <= 1;
  const int inter_steps_ring = multi_node ? 2 * (m.nodes - 1) : 0;

  // Ring (and chain) steps of the kind; all-to-all is direct: one step.
  int steps = 0;
  switch (kind) {
    case LibraryCollective::kAllReduce: steps = 2 * (n - 1); break;
    case LibraryCollective::kAllToAll: steps = 1; break;
    default: steps = n - 1; break;
  }
  const int inter_steps = std::min(steps, kind == LibraryCollective::kAllReduce
                                              ? inter_steps_ring
                                              : (multi_node ? m.nodes - 1 : 0));
  const int intra_steps = steps - inter_steps;

  auto add = [&](NcclAlgo algo, NcclProto proto, double latency_us, double bus_gbps) {
    if (bus_gbps <= 0) return;
    NcclCandidate c;
    c.algo = algo;
    c.proto = proto;
    c.latency_ns = latency_us * 1e3;
    c.bus_gbps = bus_gbps;
    c.time_ns = c.latency_ns + out.bus_bytes / bus_gbps;
    out.candidates.push_back(c);
  };

  for (NcclProto proto : {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple}) {
    const int p = static_cast<int>(proto);
    // LL128 needs NVLink inside the nodes, as NCCL enables it.
    if (proto == NcclProto::kLL128 && m.intra != NcclTransport::kNvLink) continue;
    const double intra_eff = single_gpu_nodes ? 1.0 : intra.efficiency[p];
    if (intra_eff <= 0) continue;
    double gbps = single_gpu_nodes ? 1e30 : m.intra_gbps * intra_eff;
    double hop_intra = single_gpu_nodes ? 0.0 : intra.hop_us[p];
    double net_gbps = 1e30;
    if (multi_node) {
      net_gbps = m.nic_gbps_per_node * kNetworkCost.efficiency[p];
      if (kind == LibraryCollective::kAllToAll) {
        // Per node, gpn x (n - gpn) / n of each rank's buffer leaves it.
        const double leaving = static_cast<double>(m.gpus_per_node) * (n - m.gpus_per_node) / n;
        net_gbps = BusFactor(kind, n) / leaving * net_gbps;
      }
    }
    gbps = std::min(gbps, net_gbps);
    const double base = single_gpu_nodes ? 0.0 : intra.base_us[p];
    const double latency =
        kLaunchUs + base + intra_steps * hop_intra + inter_steps * kNetworkCost.hop_us[p];
    add(NcclAlgo::kRing, proto, latency, gbps);
    // Trees: all-reduce across nodes; a chain inside each node and a
    // binary tree between nodes, up and down.
    if (kind == LibraryCollective::kAllReduce && multi_node) {
      const int depth = static_cast<int>(std::ceil(std::log2(static_cast<double>(m.nodes))));
      const double tree_latency = kLaunchUs + base + 2.0 * (m.gpus_per_node - 1) * hop_intra +
                                  2.0 * depth * kNetworkCost.hop_us[p];
      add(NcclAlgo::kTree, proto, tree_latency, gbps * kTreeBandwidthFactor);
    }
  }
  // NVLS: all-reduce on NVLink 4+ switches. Each GPU sends its buffer once
  // and reads the reduced result once: algbw = link x efficiency. Across
  // nodes (NCCL's NVLS tree) each GPU then all-reduces its 1/gpn share with
  // the other nodes through its NIC: the node's NICs carry 2(nodes-1)/nodes
  // of the buffer, and the tree discount applies.
  if (kind == LibraryCollective::kAllReduce && m.nvls && options.allow_nvls) {
    double algbw = m.intra_gbps * kNvlsEfficiency;
    double latency = kLaunchUs + kNvlsLatencyUs;
    if (multi_node) {
      const double net_algbw = m.nic_gbps_per_node * kNetworkCost.efficiency[2] /
                               (2.0 * (m.nodes - 1) / m.nodes);
      algbw = std::min(algbw, net_algbw) * kTreeBandwidthFactor;
      const int depth = static_cast<int>(std::ceil(std::log2(static_cast<double>(m.nodes))));
      latency += 2.0 * depth * kNetworkCost.hop_us[2];
    }
    add(NcclAlgo::kNvls, NcclProto::kSimple, latency, algbw * BusFactor(kind, n));
  }
  std::stable_sort(out.candidates.begin(), out.candidates.end(),
                   [](const NcclCandidate& a, const NcclCandidate& b) { return a.time_ns < b.time_ns; });
  if (!out.candidates.empty()) out.chosen = out.candidates.front();
  return out;
}

}  // namespace shardlab
