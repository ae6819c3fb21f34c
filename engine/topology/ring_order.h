// Choosing the order of ranks around a ring so that it uses the fast links.
//
// On a hybrid cube-mesh (DGX-1) some GPU pairs share NVLinks and others must
// cross PCIe and the CPUs' UPI; a ring in rank order would cross the slow
// path. ChooseRingOrder maximizes the ring's slowest hop (then the sum of
// hop bandwidths), which is what NCCL's ring search optimises for.
#pragma once

#include <vector>

#include "engine/topology/topology.h"

namespace shardlab {

/// A permutation of 0..ranks-1 (rank order around the ring, starting at 0)
/// for the first `ranks` GPUs of the topology.
std::vector<int> ChooseRingOrder(const Topology& topology, int ranks);

/// The slowest hop of a ring order, in GB/s (for tests and the CLI).
Gbps RingBottleneckGbps(const Topology& topology, const std::vector<int>& order);

}  // namespace shardlab
