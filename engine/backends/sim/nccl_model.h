// NcclModel: what NCCL would take for one collective on a topology — its
// choice of algorithm and protocol by size, and the time — for the
// simulator's `--algo nccl` (the hand-written algorithms stay the teaching
// view: one transfer per chunk per step, at the links' full rate).
//
//   topology + ranks ──► NcclMachine: nodes, GPUs per node, the intra-node
//                        transport (NVLink, PCIe P2P, or staged through host
//                        memory), its per-GPU GB/s, NVLS, NIC GB/s per node
//   size ──► for every algorithm (ring, tree, NVLS) and protocol (LL,
//            LL128, Simple) NCCL could use there:
//
//     time = launch + base(intra, proto)
//                   + intra steps · hop(intra, proto) + inter steps · hop(net, proto)
//                   + bus bytes / (bandwidth of the path · efficiency(transport, proto))
//
//            and NCCL's pick is the fastest (as its tuner does).
//
// The structure follows NCCL's own cost model (src/graph/tuning.cc: a base
// latency per protocol, a per-hop latency per transport and protocol, a bus
// bandwidth per algorithm scaled by protocol efficiency, minimum time wins);
// the constants here are ShardLab's own, fitted to published nccl-tests
// tables (tests/data/nccl-published/README.md says which constant comes
// from which measurement). Slicing and pipelining: each step moves one
// slice per channel; the per-step latency is the time a slice needs to
// cross one hop before the next step can use it (the pipeline's fill) plus
// the protocol's signalling, the base latency the collective's setup; the
// bandwidth term is the pipeline's steady state, all channels together.
//
//   LL      8-byte lines, half of them flags: lowest latency, low bandwidth
//   LL128   128-byte lines, 120 bytes of data: NVLink only (as NCCL enables it)
//   Simple  large slices with fences: highest bandwidth, highest latency
//   NVLS    NVLink SHARP (NVLink 4+ switches): the switch reduces; each GPU
//           sends its data once and receives the result once
//
// Not modelled: CollNet/SHARP on InfiniBand, NVLS across nodes (NVLS tree),
// PXN, per-channel SM limits beyond the efficiency constants, contention
// with other traffic (a collective is timed alone).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/core/units.h"
#include "engine/core/op_kinds.h"
#include "engine/topology/topology.h"

namespace shardlab {

enum class NcclAlgo : std::uint8_t { kRing, kTree, kNvls };
enum class NcclProto : std::uint8_t { kLL, kLL128, kSimple };
enum class NcclTransport : std::uint8_t { kNvLink, kPcieP2p, kHostMemory, kNone };

const char* NcclAlgoName(NcclAlgo algo);         // "ring", "tree", "nvls"
const char* NcclProtoName(NcclProto proto);      // "LL", "LL128", "Simple"
const char* NcclTransportName(NcclTransport t);  // "NVLink", "PCIe P2P", "host memory"

/// The machine as NCCL sees it for one group of ranks.
struct NcclMachine {
  int ranks = 1;
  int nodes = 1;
  int gpus_per_node = 1;               // the most ranks on one node
  NcclTransport intra = NcclTransport::kNone;  // between ranks of one node
  Gbps intra_gbps = 0;                 // per GPU and direction: slowest ring hop in a node
  bool nvls = false;                   // every node's GPUs share an NVLink 4+ switch
  Gbps nic_gbps_per_node = 0;          // sum of the network bandwidth of a node's NICs
                                       // (the slowest node); 0 on one node
};

/// Reads the machine from the topology for ranks on `rank_gpu_nodes`
/// (node ids of the GPUs, in rank order). Throws Error when two ranks of
/// different nodes have no route.
NcclMachine DescribeNcclMachine(const Topology& topology, std::span<const std::int32_t> rank_gpu_nodes);

struct NcclModelOptions {
  bool allow_nvls = true;  // NCCL_NVLS_ENABLE=0 when false
};

/// One (algorithm, protocol) NCCL could use, timed.
struct NcclCandidate {
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
  TimeNs latency_ns = 0;     // the size-independent part
  Gbps bus_gbps = 0;         // bus bytes per ns in the steady state
  TimeNs time_ns = 0;        // latency + bus bytes / bus_gbps
};

struct NcclPrediction {
  NcclCandidate chosen;                  // the fastest
  std::vector<NcclCandidate> candidates; // every one considered, fastest first
  double bus_bytes = 0;                  // size x nccl-tests' bus factor
  std::string Describe() const;          // "ring/LL128"
};

/// NCCL's time for `kind` with `size_bytes` per rank (nccl-tests' size:
/// the buffer of one rank; for all-gather and reduce-scatter the whole
/// gathered buffer) on `machine`. kNone and one rank take no time.
NcclPrediction PredictNccl(LibraryCollective kind, double size_bytes, const NcclMachine& machine,
                           const NcclModelOptions& options = {});

}  // namespace shardlab
