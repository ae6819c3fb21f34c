// Text views of a topology, in the style of `nvidia-smi topo -m`.
#pragma once

#include <string>

#include "engine/topology/topology.h"

namespace shardlab {

/// GPU-by-GPU matrix of connection kinds (NV12, PIX, PXB, NODE, SYS, NET),
/// the legend, then every link with its per-direction bandwidth and latency.
std::string FormatTopology(const Topology& topology);

/// The matrix code of one route between two GPUs: "NV#" (every hop NVLink;
/// # = fewest bonded links on the way), "PIX" (one PCIe switch), "PXB"
/// (several switches, no CPU), "NODE" (one CPU), "SYS" (across CPUs), "NET"
/// (through a NIC or to another host).
std::string RouteCode(const Topology& topology, const Route& route);

}  // namespace shardlab
