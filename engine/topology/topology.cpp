// Routes are widest paths, found in two passes over the link graph:
//
//   1. bottleneck pass: a Dijkstra that maximises min(link gbps, forward_gbps
//      of every node passed through); GPUs are never expanded, so they are
//      never intermediate. This gives the best bottleneck B.
//   2. hop pass: a Dijkstra on (hops, latency) over links and nodes that
//      carry at least B.
//
// A NIC that a GPU names as its own (Node::nic) forwards only routes that
// start or end at one of its GPUs, so cross-box traffic leaves through the
// sender's NIC and enters through the receiver's, as NCCL binds GPUs to
// rails; both passes apply that rule. Without it, the two GPUs of a PCIe
// switch tie on the switch's two NICs and both take the first.
//
// Two passes, because one Dijkstra on the label (bottleneck, hops, latency)
// is wrong: a wide-but-long prefix can beat a narrow-but-short one at a node
// and lose once both are cut down to the same narrow link later. Each pass
// is O(E log V); a 1,024-GPU cluster has about 3,000 nodes and 5,000 links.
#include "engine/topology/topology.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "engine/core/error.h"

namespace shardlab {

struct RouteGraph {
  struct Edge {
    std::int32_t link;
    std::int32_t to;
    bool forward;  // the link is traversed a -> b
  };
  std::vector<std::int32_t> offsets;  // edges of node v: [offsets[v], offsets[v + 1])
  std::vector<Edge> edges;

  explicit RouteGraph(const Topology& topology) {
    const std::size_t n = topology.nodes.size();
    offsets.assign(n + 1, 0);
    // Links with a bad end are left out, so an unvalidated topology cannot
    // make routing read out of bounds (ValidateTopology reports them).
    auto usable = [n](const Link& link) {
      return link.a >= 0 && link.b >= 0 && static_cast<std::size_t>(link.a) < n &&
             static_cast<std::size_t>(link.b) < n;
    };
    for (const Link& link : topology.links) {
      if (!usable(link)) continue;
      ++offsets[static_cast<std::size_t>(link.a) + 1];
      ++offsets[static_cast<std::size_t>(link.b) + 1];
    }
    for (std::size_t v = 0; v < n; ++v) offsets[v + 1] += offsets[v];
    edges.resize(static_cast<std::size_t>(offsets[n]));
    std::vector<std::int32_t> fill(offsets.begin(), offsets.end() - 1);
    for (std::size_t i = 0; i < topology.links.size(); ++i) {
      const Link& link = topology.links[i];
      if (!usable(link)) continue;
      const auto id = static_cast<std::int32_t>(i);
      edges[static_cast<std::size_t>(fill[static_cast<std::size_t>(link.a)]++)] = {id, link.b,
                                                                                   true};
      edges[static_cast<std::size_t>(fill[static_cast<std::size_t>(link.b)]++)] = {id, link.a,
                                                                                   false};
    }
    bound_nic.assign(n, 0);
    for (const Node& node : topology.nodes) {
      if (node.kind == NodeKind::kGpu && node.nic >= 0 && static_cast<std::size_t>(node.nic) < n)
        bound_nic[static_cast<std::size_t>(node.nic)] = 1;
    }
  }

  std::vector<char> bound_nic;  // a GPU names this node as its own NIC
};

namespace {

constexpr Gbps kInfinite = std::numeric_limits<Gbps>::infinity();

void CheckNodeId(const Topology& topology, int node, const char* what) {
  if (node < 0 || node >= static_cast<int>(topology.nodes.size())) {
    throw Error(std::string("route ") + what + " node id " + std::to_string(node) +
                " is out of range (" + std::to_string(topology.nodes.size()) + " nodes)");
  }
}

// The own NIC of `node` if it is a GPU that has one, else -1 (also for an
// id out of range: routing must not crash on an unvalidated topology).
std::int32_t OwnNic(const Topology& topology, int node) {
  const Node& n = topology.nodes[static_cast<std::size_t>(node)];
  const bool valid = n.nic >= 0 && static_cast<std::size_t>(n.nic) < topology.nodes.size();
  return n.kind == NodeKind::kGpu && valid ? n.nic : -1;
}

// The NICs a route may pass through although GPUs own them: those of its
// two ends (-1 where an end has none, or is not a GPU).
struct OwnNics {
  std::int32_t src = -1;
  std::int32_t dst = -1;
};

// Whether traffic may pass through node `u` on its way elsewhere.
bool CanForward(const Topology& topology, const RouteGraph& graph, int u, const OwnNics& own) {
  const auto uu = static_cast<std::size_t>(u);
  if (topology.nodes[uu].kind == NodeKind::kGpu) return false;
  return !graph.bound_nic[uu] || u == own.src || u == own.dst;
}

// Pass 1: best bottleneck from `src` to every node, or until `stop_at` (a
// node id, or -1) is settled, or until `stop_after` nodes of `stop_set`
// (one flag per node; may be null) are.
std::vector<Gbps> Widest(const Topology& topology, const RouteGraph& graph, int src, int stop_at,
                         const OwnNics& own, const std::vector<char>* stop_set = nullptr,
                         int stop_after = 0) {
  const std::size_t n = topology.nodes.size();
  std::vector<Gbps> best(n, 0.0);
  std::vector<char> done(n, 0);
  std::priority_queue<std::pair<Gbps, std::int32_t>> heap;  // widest first
  best[static_cast<std::size_t>(src)] = kInfinite;
  heap.push({kInfinite, src});
  while (!heap.empty()) {
    const auto [width, u] = heap.top();
    heap.pop();
    const auto uu = static_cast<std::size_t>(u);
    if (done[uu]) continue;
    done[uu] = 1;
    if (u == stop_at) break;
    if (stop_set != nullptr && (*stop_set)[uu] && --stop_after <= 0) break;
    const Node& node = topology.nodes[uu];
    Gbps cap = width;
    if (u != src) {
      if (!CanForward(topology, graph, u, own)) continue;
      if (node.forward_gbps > 0) cap = std::min(cap, node.forward_gbps);
    }
    for (std::int32_t e = graph.offsets[uu]; e < graph.offsets[uu + 1]; ++e) {
      const RouteGraph::Edge& edge = graph.edges[static_cast<std::size_t>(e)];
      const Gbps through = std::min(cap, topology.links[static_cast<std::size_t>(edge.link)].gbps);
      const auto to = static_cast<std::size_t>(edge.to);
      if (!done[to] && through > best[to]) {
        best[to] = through;
        heap.push({through, edge.to});
      }
    }
  }
  return best;
}

bool FindRouteIn(const Topology& topology, const RouteGraph& graph, int src, int dst,
                 Route* route) {
  *route = Route{};
  route->src = src;
  route->dst = dst;
  if (src == dst) {
    route->bottleneck_gbps = kInfinite;
    return true;
  }
  const OwnNics own{OwnNic(topology, src), OwnNic(topology, dst)};
  const Gbps width = Widest(topology, graph, src, dst, own)[static_cast<std::size_t>(dst)];
  if (!(width > 0)) return false;

  // Pass 2: fewest hops, then lowest latency, using only what carries `width`.
  struct Label {
    std::int32_t hops = std::numeric_limits<std::int32_t>::max();
    TimeNs latency_ns = 0;
    std::int32_t via_edge = -1;  // index into graph.edges that reached this node
    std::int32_t prev = -1;
  };
  const std::size_t n = topology.nodes.size();
  std::vector<Label> label(n);
  std::vector<char> done(n, 0);
  using Item = std::tuple<std::int32_t, TimeNs, std::int32_t>;  // hops, latency, node
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  label[static_cast<std::size_t>(src)].hops = 0;
  heap.push({0, 0.0, src});
  while (!heap.empty()) {
    const auto [hops, latency, u] = heap.top();
    heap.pop();
    const auto uu = static_cast<std::size_t>(u);
    if (done[uu]) continue;
    done[uu] = 1;
    if (u == dst) break;
    const Node& node = topology.nodes[uu];
    if (u != src && (!CanForward(topology, graph, u, own) ||
                     (node.forward_gbps > 0 && node.forward_gbps < width)))
      continue;
    for (std::int32_t e = graph.offsets[uu]; e < graph.offsets[uu + 1]; ++e) {
      const RouteGraph::Edge& edge = graph.edges[static_cast<std::size_t>(e)];
      const Link& link = topology.links[static_cast<std::size_t>(edge.link)];
      if (link.gbps < width) continue;
      const auto to = static_cast<std::size_t>(edge.to);
      if (done[to]) continue;
      const std::int32_t next_hops = hops + 1;
      const TimeNs next_latency = latency + link.latency_ns;
      Label& target = label[to];
      if (next_hops < target.hops ||
          (next_hops == target.hops && next_latency < target.latency_ns)) {
        target = {next_hops, next_latency, e, u};
        heap.push({next_hops, next_latency, edge.to});
      }
    }
  }
  if (label[static_cast<std::size_t>(dst)].via_edge < 0) return false;

  // Walk back from dst and fill the route in order.
  std::vector<std::int32_t> path_edges;
  for (std::int32_t v = dst; v != src; v = label[static_cast<std::size_t>(v)].prev) {
    path_edges.push_back(label[static_cast<std::size_t>(v)].via_edge);
  }
  std::reverse(path_edges.begin(), path_edges.end());
  Gbps bottleneck = kInfinite;
  for (std::size_t k = 0; k < path_edges.size(); ++k) {
    const RouteGraph::Edge& edge = graph.edges[static_cast<std::size_t>(path_edges[k])];
    const Link& link = topology.links[static_cast<std::size_t>(edge.link)];
    route->hops.push_back({edge.link, edge.forward});
    route->latency_ns += link.latency_ns;
    bottleneck = std::min(bottleneck, link.gbps);
    if (k + 1 < path_edges.size()) {
      route->via_nodes.push_back(edge.to);
      const Gbps forward = topology.nodes[static_cast<std::size_t>(edge.to)].forward_gbps;
      if (forward > 0) bottleneck = std::min(bottleneck, forward);
    }
  }
  route->bottleneck_gbps = bottleneck;
  return true;
}

std::string LinkLabel(const Topology& topology, std::size_t index) {
  const Link& link = topology.links[index];
  auto name = [&](std::int32_t id) {
    return id >= 0 && id < static_cast<std::int32_t>(topology.nodes.size())
               ? "'" + topology.nodes[static_cast<std::size_t>(id)].name + "'"
               : "#" + std::to_string(id);
  };
  return "link " + std::to_string(index) + " (" + name(link.a) + " -- " + name(link.b) + ")";
}

}  // namespace

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kGpu: return "GPU";
    case NodeKind::kNvSwitch: return "NVSwitch";
    case NodeKind::kPcieSwitch: return "PCIe switch";
    case NodeKind::kCpu: return "CPU";
    case NodeKind::kNic: return "NIC";
    case NodeKind::kNetSwitch: return "network switch";
  }
  return "?";
}

const char* LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvLink1: return "NVLink1";
    case LinkKind::kNvLink2: return "NVLink2";
    case LinkKind::kNvLink3: return "NVLink3";
    case LinkKind::kNvLink4: return "NVLink4";
    case LinkKind::kNvLink5: return "NVLink5";
    case LinkKind::kPcie3: return "PCIe3";
    case LinkKind::kPcie4: return "PCIe4";
    case LinkKind::kPcie5: return "PCIe5";
    case LinkKind::kUpi: return "UPI";
    case LinkKind::kInfiniBand: return "InfiniBand";
    case LinkKind::kEthernet: return "Ethernet";
  }
  return "?";
}

const char* LinkKindCode(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvLink1:
    case LinkKind::kNvLink2:
    case LinkKind::kNvLink3:
    case LinkKind::kNvLink4:
    case LinkKind::kNvLink5: return "NV";
    case LinkKind::kPcie3:
    case LinkKind::kPcie4:
    case LinkKind::kPcie5: return "PIX";
    case LinkKind::kUpi: return "SYS";
    case LinkKind::kInfiniBand:
    case LinkKind::kEthernet: return "NET";
  }
  return "?";
}

int Topology::num_hosts() const {
  // Boxes that hold GPUs: a fabric switch outside every box does not count.
  std::unordered_set<std::int32_t> hosts;
  for (const Node& node : nodes) {
    if (node.kind == NodeKind::kGpu) hosts.insert(node.host);
  }
  return static_cast<int>(hosts.size());
}

int Topology::FindNode(const std::string& node_name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == node_name) return static_cast<int>(i);
  }
  return -1;
}

void ValidateTopology(const Topology& topology) {
  const std::string where = "topology '" + topology.name + "': ";
  auto fail = [&](const std::string& message) { throw Error(where + message); };
  if (topology.nodes.empty()) fail("has no nodes");

  std::unordered_set<std::string> names;
  for (std::size_t i = 0; i < topology.nodes.size(); ++i) {
    const Node& node = topology.nodes[i];
    if (node.name.empty()) fail("node " + std::to_string(i) + " has an empty name");
    if (!names.insert(node.name).second) fail("two nodes are named '" + node.name + "'");
    const std::string label = "node '" + node.name + "': ";
    if (node.host < 0) fail(label + "host must be >= 0 (got " + std::to_string(node.host) + ")");
    if (!std::isfinite(node.forward_gbps) || node.forward_gbps < 0)
      fail(label + "forward_gbps must be >= 0 (0 = unlimited)");
    if (node.kind == NodeKind::kGpu) {
      if (node.forward_gbps > 0)
        fail(label + "GPUs do not forward traffic; forward_gbps must be 0");
      const DeviceSpec& d = node.device;
      if (!(d.fp32_tflops > 0) || !std::isfinite(d.fp32_tflops))
        fail(label + "a GPU needs fp32_tflops > 0");
      if (!(d.fp16_tflops > 0) || !std::isfinite(d.fp16_tflops))
        fail(label + "a GPU needs fp16_tflops > 0");
      if (!(d.memory_gbps > 0) || !std::isfinite(d.memory_gbps))
        fail(label + "a GPU needs memory_gbps > 0");
      if (d.memory_bytes <= 0) fail(label + "a GPU needs memory > 0");
    }
  }

  const auto num_nodes = static_cast<std::int32_t>(topology.nodes.size());
  for (std::size_t i = 0; i < topology.links.size(); ++i) {
    const Link& link = topology.links[i];
    const std::string label = LinkLabel(topology, i) + ": ";
    if (link.a < 0 || link.a >= num_nodes) fail(label + "end a is not a node");
    if (link.b < 0 || link.b >= num_nodes) fail(label + "end b is not a node");
    if (link.a == link.b) fail(label + "links a node to itself");
    if (!(link.gbps > 0) || !std::isfinite(link.gbps)) fail(label + "gbps must be positive");
    if (!(link.latency_ns >= 0) || !std::isfinite(link.latency_ns))
      fail(label + "latency must be >= 0");
    if (link.lanes < 1) fail(label + "lanes must be >= 1");
  }

  for (const Node& node : topology.nodes) {
    if (node.nic == -1) continue;
    const std::string label = "node '" + node.name + "': ";
    if (node.kind != NodeKind::kGpu) fail(label + "only GPUs have an own NIC");
    if (node.nic < 0 || node.nic >= num_nodes)
      fail(label + "own NIC id " + std::to_string(node.nic) + " is not a node");
    const Node& nic = topology.nodes[static_cast<std::size_t>(node.nic)];
    if (nic.kind != NodeKind::kNic)
      fail(label + "own NIC '" + nic.name + "' is a " + NodeKindName(nic.kind) + ", not a NIC");
  }

  if (topology.gpus.empty()) fail("has no GPUs");
  std::vector<char> listed(topology.nodes.size(), 0);
  for (std::size_t rank = 0; rank < topology.gpus.size(); ++rank) {
    const std::int32_t id = topology.gpus[rank];
    const std::string label = "rank " + std::to_string(rank) + ": ";
    if (id < 0 || id >= num_nodes) fail(label + "node id " + std::to_string(id) + " is not a node");
    const Node& node = topology.nodes[static_cast<std::size_t>(id)];
    if (node.kind != NodeKind::kGpu)
      fail(label + "node '" + node.name + "' is a " + NodeKindName(node.kind) + ", not a GPU");
    if (listed[static_cast<std::size_t>(id)]) fail(label + "GPU '" + node.name + "' has two ranks");
    listed[static_cast<std::size_t>(id)] = 1;
  }
  for (std::size_t i = 0; i < topology.nodes.size(); ++i) {
    if (topology.nodes[i].kind == NodeKind::kGpu && !listed[i])
      fail("GPU '" + topology.nodes[i].name + "' has no rank");
  }
}

bool TryFindRoute(const Topology& topology, int src_node, int dst_node, Route* route) {
  CheckNodeId(topology, src_node, "source");
  CheckNodeId(topology, dst_node, "destination");
  const RouteGraph graph(topology);
  return FindRouteIn(topology, graph, src_node, dst_node, route);
}

Route FindRoute(const Topology& topology, int src_node, int dst_node) {
  Route route;
  if (!TryFindRoute(topology, src_node, dst_node, &route)) {
    throw Error("topology '" + topology.name + "': no route from '" +
                topology.nodes[static_cast<std::size_t>(src_node)].name + "' to '" +
                topology.nodes[static_cast<std::size_t>(dst_node)].name +
                "' (GPUs do not forward traffic for others)");
  }
  return route;
}

// Routes to a GPU that owns NIC g either avoid g (the first pass, which
// passes no NIC owned by others) or reach g and then go on to the GPU: their
// width is min(width to g, g's forward capacity, width from g to the GPU),
// and the second part is the same for every source. (A route that enters g
// and then passes the source's own NIC again is not counted; no real box
// routes that way.)
std::vector<Gbps> WidestBandwidthsFrom(const Topology& topology, int src_node) {
  CheckNodeId(topology, src_node, "source");
  const RouteGraph graph(topology);
  const std::int32_t src_nic = OwnNic(topology, src_node);
  std::vector<Gbps> best = Widest(topology, graph, src_node, -1, OwnNics{src_nic, -1});

  std::unordered_map<std::int32_t, std::vector<std::int32_t>> gpus_of_nic;
  for (const std::int32_t gpu : topology.gpus) {
    const std::int32_t nic = OwnNic(topology, gpu);
    if (nic >= 0 && nic != src_nic && gpu != src_node) gpus_of_nic[nic].push_back(gpu);
  }
  std::vector<char> targets(topology.nodes.size(), 0);
  for (const auto& [nic, gpus] : gpus_of_nic) {
    const auto g = static_cast<std::size_t>(nic);
    Gbps into = best[g];
    if (topology.nodes[g].forward_gbps > 0) into = std::min(into, topology.nodes[g].forward_gbps);
    if (!(into > 0)) continue;
    for (const std::int32_t gpu : gpus) targets[static_cast<std::size_t>(gpu)] = 1;
    const std::vector<Gbps> from_nic = Widest(topology, graph, nic, -1, OwnNics{nic, -1}, &targets,
                                              static_cast<int>(gpus.size()));
    for (const std::int32_t gpu : gpus) {
      const auto d = static_cast<std::size_t>(gpu);
      best[d] = std::max(best[d], std::min(into, from_nic[d]));
      targets[d] = 0;
    }
  }
  return best;
}

RouteTable::RouteTable(const Topology& topology)
    : topology_(&topology), graph_(std::make_unique<RouteGraph>(topology)) {}
RouteTable::~RouteTable() = default;
RouteTable::RouteTable(RouteTable&&) noexcept = default;
RouteTable& RouteTable::operator=(RouteTable&&) noexcept = default;

const Route& RouteTable::Between(int src_rank, int dst_rank) {
  const int ranks = topology_->num_gpus();
  if (src_rank < 0 || src_rank >= ranks || dst_rank < 0 || dst_rank >= ranks) {
    throw Error("route between ranks " + std::to_string(src_rank) + " and " +
                std::to_string(dst_rank) + ": rank out of range (topology '" + topology_->name +
                "' has " + std::to_string(ranks) + " GPUs)");
  }
  const std::uint64_t key =
      (static_cast<std::uint64_t>(src_rank) << 32) | static_cast<std::uint32_t>(dst_rank);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const int src = topology_->gpus[static_cast<std::size_t>(src_rank)];
  const int dst = topology_->gpus[static_cast<std::size_t>(dst_rank)];
  Route route;
  if (!FindRouteIn(*topology_, *graph_, src, dst, &route)) {
    throw Error(
        "topology '" + topology_->name + "': no route from rank " + std::to_string(src_rank) +
        " ('" + topology_->nodes[static_cast<std::size_t>(src)].name + "') to rank " +
        std::to_string(dst_rank) + " ('" + topology_->nodes[static_cast<std::size_t>(dst)].name +
        "'); GPUs do not forward traffic for others");
  }
  return cache_.emplace(key, std::move(route)).first->second;
}

}  // namespace shardlab
