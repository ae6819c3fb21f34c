// Text views of a topology, in the style of `nvidia-smi topo -m`.
#pragma once

#include <string>

#include "engine/topology/topology.h"

namespace shardlab {

/// GPU-by-GPU matrix of connection kinds (NV12, PIX, PXB, NODE, SYS, NET),
/// the legend, then every link with its per-direction bandwidth and latency.
std::string FormatTopology(const Topology& topology);

}  // namespace shardlab
