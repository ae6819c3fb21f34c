#include "engine/planner/group_bandwidth.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace shardlab {
namespace {

constexpr Gbps kInfinite = std::numeric_limits<Gbps>::infinity();

bool IsNvLink(LinkKind kind) {
  return kind == LinkKind::kNvLink1 || kind == LinkKind::kNvLink2 || kind == LinkKind::kNvLink3 ||
         kind == LinkKind::kNvLink4 || kind == LinkKind::kNvLink5;
}

// Link direction as one key: 2·link + (forward ? 0 : 1).
std::int64_t DirectionKey(const LinkHop& hop) {
  return 2 * std::int64_t{hop.link} + (hop.forward ? 0 : 1);
}

// The ring's hops: member i to member i + 1, the last back to the first.
// Two members make one hop each way.
template <typename Visit>
void ForEachRingHop(const std::vector<int>& group, Visit visit) {
  if (group.size() < 2) return;
  for (std::size_t i = 0; i < group.size(); ++i) visit(group[i], group[(i + 1) % group.size()]);
}

}  // namespace

std::vector<GroupBandwidth> ConcurrentRingBandwidth(RouteTable& routes, const Topology& topology,
                                                    const std::vector<std::vector<int>>& groups) {
  std::unordered_map<std::int64_t, int> link_load;
  std::unordered_map<int, int> node_load;  // nodes with a forwarding limit
  for (const std::vector<int>& group : groups) {
    ForEachRingHop(group, [&](int src, int dst) {
      const Route& route = routes.Between(src, dst);
      for (const LinkHop& hop : route.hops) ++link_load[DirectionKey(hop)];
      for (const int node : route.via_nodes) {
        if (topology.nodes[static_cast<std::size_t>(node)].forward_gbps > 0) ++node_load[node];
      }
    });
  }

  std::vector<GroupBandwidth> result;
  result.reserve(groups.size());
  for (const std::vector<int>& group : groups) {
    GroupBandwidth g;
    g.gbps = g.alone_gbps = kInfinite;
    const int host =
        topology
            .nodes[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(group.front())])]
            .host;
    for (const int rank : group) {
      g.one_host =
          g.one_host &&
          topology.nodes[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(rank)])]
                  .host == host;
    }
    ForEachRingHop(group, [&](int src, int dst) {
      const Route& route = routes.Between(src, dst);
      g.alone_gbps = std::min(g.alone_gbps, route.bottleneck_gbps);
      g.alpha_ns = std::max(g.alpha_ns, route.latency_ns);
      for (const LinkHop& hop : route.hops) {
        const Link& link = topology.links[static_cast<std::size_t>(hop.link)];
        g.nvlink_only = g.nvlink_only && IsNvLink(link.kind);
        g.gbps = std::min(g.gbps, link.gbps / link_load[DirectionKey(hop)]);
      }
      for (const int node : route.via_nodes) {
        const Gbps forward = topology.nodes[static_cast<std::size_t>(node)].forward_gbps;
        if (forward > 0) g.gbps = std::min(g.gbps, forward / node_load[node]);
      }
    });
    result.push_back(g);
  }
  return result;
}

GroupBandwidth SlowestGroup(const std::vector<GroupBandwidth>& groups) {
  GroupBandwidth slowest;
  slowest.gbps = slowest.alone_gbps = kInfinite;
  for (const GroupBandwidth& g : groups) {
    slowest.gbps = std::min(slowest.gbps, g.gbps);
    slowest.alone_gbps = std::min(slowest.alone_gbps, g.alone_gbps);
    slowest.alpha_ns = std::max(slowest.alpha_ns, g.alpha_ns);
    slowest.nvlink_only = slowest.nvlink_only && g.nvlink_only;
    slowest.one_host = slowest.one_host && g.one_host;
  }
  return slowest;
}

}  // namespace shardlab
