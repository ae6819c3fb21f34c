// Topology: the graph of GPUs, switches, CPUs and NICs, and the links
// between them, with real per-direction figures.
//
//   GPU0 ──NVLink3 300 GB/s/dir── NVSwitch ──── GPU1
//     │                                           │
//   PCIe4 ── PCIe switch ── CPU0 ── UPI ── CPU1 ── ...
//
// Links are full duplex: each direction is its own resource of `gbps` in
// the simulator. A route is a path of link directions between two nodes;
// GPUs never forward traffic for others (as without NCCL's P2P-via-GPU), so
// routes pass through switches, CPUs and NICs only. A node may have a
// `forward_gbps` capacity: everything routed through it shares that (a
// shared PCIe bus, a CPU that stages P2P through host memory); 0 means the
// node switches without limit (NVSwitch, a non-blocking IB fabric).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/units.h"

namespace shardlab {

enum class NodeKind : std::uint8_t { kGpu, kNvSwitch, kPcieSwitch, kCpu, kNic, kNetSwitch };

enum class LinkKind : std::uint8_t {
  kNvLink1, kNvLink2, kNvLink3, kNvLink4, kNvLink5,
  kPcie3, kPcie4, kPcie5,
  kUpi,         // CPU-CPU (QPI/UPI/Infinity Fabric)
  kInfiniBand,
  kEthernet,
};

const char* NodeKindName(NodeKind kind);   // "GPU", "NVSwitch", ...
const char* LinkKindName(LinkKind kind);   // "NVLink3", "PCIe4", ...
/// Short code for connection matrices, as nvidia-smi topo -m: "NV", "PIX", "SYS"...
const char* LinkKindCode(LinkKind kind);

/// What a GPU can compute, for the simulator's compute-time model.
struct DeviceSpec {
  std::string model;          // "A100-SXM4-80GB"
  double fp32_tflops = 0;     // dense, non-tensor-core
  double fp16_tflops = 0;     // dense tensor-core
  Gbps memory_gbps = 0;       // HBM bandwidth
  Bytes memory_bytes = 0;
};

struct Node {
  std::string name;           // unique: "gpu0", "nvswitch", "cpu1", "nic3"
  NodeKind kind = NodeKind::kGpu;
  std::int32_t host = 0;      // which box (server) it sits in
  DeviceSpec device;          // GPUs only
  Gbps forward_gbps = 0;      // shared capacity of traffic passing through; 0 = unlimited
  // GPUs only: node id of the GPU's own NIC (its rail), or -1. A NIC some
  // GPU names here carries only routes that start or end at its GPUs, as
  // NCCL binds each GPU to its nearest NIC; routes leave and enter a box
  // through the two ends' own NICs.
  std::int32_t nic = -1;
};

struct Link {
  std::int32_t a = -1;        // node ids
  std::int32_t b = -1;
  LinkKind kind = LinkKind::kPcie4;
  Gbps gbps = 0;              // per direction
  TimeNs latency_ns = 0;      // per traversal
  std::int32_t lanes = 1;     // NVLink links bonded, or PCIe lanes
};

/// One direction of one link: forward means a -> b.
struct LinkHop {
  std::int32_t link = -1;
  bool forward = true;
};

struct Route {
  std::int32_t src = -1;                  // node ids
  std::int32_t dst = -1;
  std::vector<LinkHop> hops;
  std::vector<std::int32_t> via_nodes;    // intermediate nodes, in order
  TimeNs latency_ns = 0;                  // sum over hops
  Gbps bottleneck_gbps = 0;               // min over hops and capacity nodes
};

struct Topology {
  std::string name;           // preset name or file name
  std::string description;    // one line for `topo --list`
  std::vector<Node> nodes;
  std::vector<Link> links;
  std::vector<std::int32_t> gpus;  // node ids of GPUs, in rank order

  int num_gpus() const { return static_cast<int>(gpus.size()); }
  int num_hosts() const;
  /// Node id of a node named `name`, or -1.
  int FindNode(const std::string& name) const;
};

/// Throws shardlab::Error naming the problem: duplicate or empty names,
/// links to missing nodes or to themselves, non-positive bandwidth,
/// negative latency, no GPUs, a GPU without compute figures.
void ValidateTopology(const Topology& topology);

/// Widest path first (largest bottleneck bandwidth), then fewest hops, then
/// lowest latency; GPUs are never intermediate nodes, and a NIC bound to GPUs
/// (Node::nic) is an intermediate node only of routes from or to one of its
/// GPUs. Throws if unreachable.
/// A route from a node to itself has no hops and an infinite bottleneck.
Route FindRoute(const Topology& topology, int src_node, int dst_node);

/// As FindRoute, but returns false instead of throwing when `dst_node`
/// cannot be reached (node ids must still be valid).
bool TryFindRoute(const Topology& topology, int src_node, int dst_node, Route* route);

/// Bottleneck GB/s of the widest route from `src_node` to every node, in one
/// pass (0 where unreachable, infinity at `src_node`): for all-pairs
/// questions such as the ring search, without building each route. Widths to
/// GPUs with their own NIC honour that NIC as FindRoute does (one more pass
/// per such NIC).
std::vector<Gbps> WidestBandwidthsFrom(const Topology& topology, int src_node);

struct RouteGraph;  // adjacency lists, built once per RouteTable

/// Caches routes between GPUs (by rank), computed on first use: a 1,024-GPU
/// cluster has a million pairs and a ring needs only a thousand of them.
class RouteTable {
 public:
  explicit RouteTable(const Topology& topology);
  ~RouteTable();
  RouteTable(RouteTable&&) noexcept;
  RouteTable& operator=(RouteTable&&) noexcept;

  /// The route from GPU `src_rank` to GPU `dst_rank` (ranks index
  /// topology.gpus); throws Error for a rank out of range or no route.
  /// The reference stays valid for the table's lifetime.
  const Route& Between(int src_rank, int dst_rank);

 private:
  const Topology* topology_;
  std::unordered_map<std::uint64_t, Route> cache_;
  std::unique_ptr<RouteGraph> graph_;
};

}  // namespace shardlab
