#include "engine/topology/topology_print.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine/core/error.h"

namespace shardlab {
namespace {

constexpr int kMaxMatrixGpus = 16;  // wider matrices stop being readable
constexpr std::size_t kMaxListedLinks = 200;

bool IsNvLink(LinkKind kind) {
  return kind == LinkKind::kNvLink1 || kind == LinkKind::kNvLink2 || kind == LinkKind::kNvLink3 ||
         kind == LinkKind::kNvLink4 || kind == LinkKind::kNvLink5;
}

std::string Pad(const std::string& text, int width) {
  std::string out = text;
  if (static_cast<int>(out.size()) < width)
    out.append(static_cast<std::size_t>(width) - out.size(), ' ');
  return out;
}

std::string GbpsWithUnit(Gbps gbps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g GB/s", gbps);
  return buf;
}

std::string FormatUs(TimeNs ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", ns / 1000.0);
  return buf;
}

// "8 GPUs (A100-SXM4-80GB), 1 NVSwitch, 4 PCIe switches, ...; 1 host".
std::string Summary(const Topology& topology) {
  const NodeKind kinds[] = {NodeKind::kGpu, NodeKind::kNvSwitch, NodeKind::kPcieSwitch,
                            NodeKind::kCpu, NodeKind::kNic,      NodeKind::kNetSwitch};
  const char* plural[] = {"GPUs", "NVSwitches", "PCIe switches",
                          "CPUs", "NICs",       "network switches"};
  std::string out;
  for (std::size_t k = 0; k < std::size(kinds); ++k) {
    const auto count = std::count_if(topology.nodes.begin(), topology.nodes.end(),
                                     [&](const Node& n) { return n.kind == kinds[k]; });
    if (count == 0) continue;
    if (!out.empty()) out += ", ";
    out += std::to_string(count) + " " + (count == 1 ? NodeKindName(kinds[k]) : plural[k]);
    if (kinds[k] == NodeKind::kGpu && !topology.gpus.empty()) {
      const std::string& model =
          topology.nodes[static_cast<std::size_t>(topology.gpus[0])].device.model;
      if (!model.empty()) out += " (" + model + ")";
    }
  }
  const int hosts = topology.num_hosts();
  out += "; " + std::to_string(hosts) + (hosts == 1 ? " host" : " hosts");
  return out;
}

}  // namespace

std::string RouteCode(const Topology& topology, const Route& route) {
  if (route.hops.empty()) return "X";
  bool all_nvlink = true;
  int fewest_lanes = INT_MAX;
  bool net = false;
  bool cross_cpu = false;
  for (const LinkHop& hop : route.hops) {
    const Link& link = topology.links[static_cast<std::size_t>(hop.link)];
    all_nvlink = all_nvlink && IsNvLink(link.kind);
    fewest_lanes = std::min(fewest_lanes, static_cast<int>(link.lanes));
    if (link.kind == LinkKind::kInfiniBand || link.kind == LinkKind::kEthernet) net = true;
    if (link.kind == LinkKind::kUpi) cross_cpu = true;
  }
  if (all_nvlink) return "NV" + std::to_string(fewest_lanes);
  int pcie_switches = 0;
  int cpus = 0;
  for (const std::int32_t id : route.via_nodes) {
    switch (topology.nodes[static_cast<std::size_t>(id)].kind) {
      case NodeKind::kPcieSwitch: ++pcie_switches; break;
      case NodeKind::kCpu: ++cpus; break;
      case NodeKind::kNic:
      case NodeKind::kNetSwitch: net = true; break;
      default: break;
    }
  }
  if (topology.nodes[static_cast<std::size_t>(route.src)].host !=
      topology.nodes[static_cast<std::size_t>(route.dst)].host)
    net = true;
  if (net) return "NET";
  if (cross_cpu || cpus >= 2) return "SYS";
  if (cpus == 1) return "NODE";
  if (pcie_switches >= 2) return "PXB";
  if (pcie_switches == 1) return "PIX";
  return LinkKindCode(topology.links[static_cast<std::size_t>(route.hops.front().link)].kind);
}

std::string FormatTopology(const Topology& topology) {
  std::string out = "Topology " + topology.name;
  if (!topology.description.empty()) out += ": " + topology.description;
  out += "\n" + Summary(topology) + "\n\n";

  // The connection matrix, as nvidia-smi topo -m prints it.
  const int shown = std::min(topology.num_gpus(), kMaxMatrixGpus);
  const int width = 7;
  RouteTable routes(topology);
  out += Pad("", width);
  for (int j = 0; j < shown; ++j) out += Pad("GPU" + std::to_string(j), width);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n";
  for (int i = 0; i < shown; ++i) {
    out += Pad("GPU" + std::to_string(i), width);
    for (int j = 0; j < shown; ++j) {
      std::string code = "X";
      if (i != j) {
        try {
          code = RouteCode(topology, routes.Between(i, j));
        } catch (const Error&) {
          code = "-";  // no route: GPUs do not forward for others
        }
      }
      out += Pad(code, width);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  if (shown < topology.num_gpus()) {
    out += "(matrix shows the first " + std::to_string(shown) + " of " +
           std::to_string(topology.num_gpus()) + " GPUs)\n";
  }
  out +=
      "\nLegend:\n"
      "  X    = self\n"
      "  NV#  = NVLink all the way: # bonded links, direct or through the NVSwitch\n"
      "  PIX  = through one PCIe switch\n"
      "  PXB  = through several PCIe switches, no CPU\n"
      "  NODE = through one CPU (its PCIe root complex)\n"
      "  SYS  = across CPUs (QPI/UPI/Infinity Fabric)\n"
      "  NET  = through a NIC and the network\n"
      "  -    = no route (GPUs do not forward for others)\n";

  auto name = [&](std::int32_t id) { return topology.nodes[static_cast<std::size_t>(id)].name; };
  if (topology.links.size() <= kMaxListedLinks && topology.num_gpus() <= kMaxMatrixGpus) {
    out += "\nLinks (bandwidth per direction):\n";
    std::size_t name_width = 0;
    for (const Link& link : topology.links)
      name_width = std::max(name_width, name(link.a).size() + name(link.b).size() + 4);
    for (const Link& link : topology.links) {
      std::string kind = LinkKindName(link.kind);
      if (link.lanes != 1) kind += " x" + std::to_string(link.lanes);
      out += "  " + Pad(name(link.a) + " -- " + name(link.b), static_cast<int>(name_width) + 2) +
             Pad(kind, 16) + Pad(GbpsWithUnit(link.gbps), 14) + FormatUs(link.latency_ns) + "\n";
    }
  } else {
    // Thousands of lines help nobody: group identical links by what they join.
    using Key = std::tuple<int, int, int, int, Gbps, TimeNs>;
    std::map<Key, int> groups;
    for (const Link& link : topology.links) {
      auto ka = static_cast<int>(topology.nodes[static_cast<std::size_t>(link.a)].kind);
      auto kb = static_cast<int>(topology.nodes[static_cast<std::size_t>(link.b)].kind);
      if (ka > kb) std::swap(ka, kb);
      ++groups[{ka, kb, static_cast<int>(link.kind), link.lanes, link.gbps, link.latency_ns}];
    }
    out += "\nLinks (bandwidth per direction), " + std::to_string(topology.links.size()) +
           " in all, grouped:\n";
    for (const auto& [key, count] : groups) {
      const auto& [ka, kb, kind_index, lanes, gbps, latency] = key;
      std::string kind = LinkKindName(static_cast<LinkKind>(kind_index));
      if (lanes != 1) kind += " x" + std::to_string(lanes);
      const std::string ends = std::string(NodeKindName(static_cast<NodeKind>(ka))) + " -- " +
                               NodeKindName(static_cast<NodeKind>(kb));
      out += "  " + Pad(std::to_string(count) + " x", 8) + Pad(ends, 32) + Pad(kind, 16) +
             Pad(GbpsWithUnit(gbps), 14) + FormatUs(latency) + "\n";
    }
  }
  // Rail affinity decides which NIC a cross-box transfer uses (Node::nic), so
  // show it: a wrong mapping in a topology file is otherwise invisible.
  std::vector<std::string> rails;  // "gpu3 -> h0.nic3", the first kMaxMatrixGpus
  int with_nic = 0;
  for (const std::int32_t id : topology.gpus) {
    const Node& gpu = topology.nodes[static_cast<std::size_t>(id)];
    if (gpu.nic < 0) continue;
    if (with_nic++ < kMaxMatrixGpus) rails.push_back(gpu.name + " -> " + name(gpu.nic));
  }
  if (with_nic > 0) {
    std::size_t rail_width = 0;
    for (const std::string& rail : rails) rail_width = std::max(rail_width, rail.size() + 2);
    out += "\nOwn NIC of each GPU (cross-box traffic leaves and enters through it):";
    for (std::size_t i = 0; i < rails.size(); ++i) {
      const bool line_end = i % 8 == 7 || i + 1 == rails.size();
      out += (i % 8 == 0 ? "\n  " : "") +
             (line_end ? rails[i] : Pad(rails[i], static_cast<int>(rail_width)));
    }
    out += "\n";
    if (with_nic > kMaxMatrixGpus)
      out += "  (first " + std::to_string(kMaxMatrixGpus) + " of " + std::to_string(with_nic) +
             " GPUs with a NIC)\n";
  }
  bool any_forward = false;
  for (const Node& node : topology.nodes) {
    if (node.forward_gbps > 0) {
      if (!any_forward) out += "\nShared capacity of traffic passing through:\n";
      any_forward = true;
      out += "  " + Pad(node.name, 16) + GbpsWithUnit(node.forward_gbps) + "\n";
    }
  }
  return out;
}

}  // namespace shardlab
