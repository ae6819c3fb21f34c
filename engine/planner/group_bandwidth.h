// Bandwidth a ring collective gets when many groups run one at once: the
// planner's view of "the group's links", read off the topology's routes.
//
//   groups {0 1 2 3} {4 5 6 7} ...   each a ring in the order given:
//   0→1→2→3→0, 4→5→6→7→4, ...        every hop follows RouteTable's route
//
//   load(link direction) = ring hops of all groups whose route crosses it
//   share(hop)           = min over its route's link directions of gbps / load
//                          (and gbps / load of a node with forward_gbps)
//   group bandwidth      = min over its hops of share(hop)
//
// That is the simulator's fair sharing evaluated once, in steady state, for
// the heaviest hop: a ring moves at its slowest hop. Latency is the largest
// route latency in the ring (the α of the ring formula).
#pragma once

#include <vector>

#include "engine/topology/topology.h"

namespace shardlab {

struct GroupBandwidth {
  Gbps gbps = 0;            // the ring's per-direction bandwidth under the shared load
  Gbps alone_gbps = 0;      // the same ring with no other group running
  TimeNs alpha_ns = 0;      // slowest hop's route latency
  bool nvlink_only = true;  // every hop's route uses NVLink links only
  bool one_host = true;     // all members sit in one host
};

/// One entry per group (in the order given), all groups running at once.
/// Ranks index topology.gpus; a group of one member gets infinite bandwidth.
std::vector<GroupBandwidth> ConcurrentRingBandwidth(RouteTable& routes, const Topology& topology,
                                                    const std::vector<std::vector<int>>& groups);

/// The slowest of `ConcurrentRingBandwidth`'s groups (largest α of all).
GroupBandwidth SlowestGroup(const std::vector<GroupBandwidth>& groups);

}  // namespace shardlab
