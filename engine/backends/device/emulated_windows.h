// Link emulation's model: how long each transfer of a plan would take on a
// topology, taken from the simulator on the same plan (timing only), so a
// real run under --emulate-links holds every transfer for exactly the time
// the simulator gives it: route latency plus bytes over the bandwidth it
// gets while sharing links with the transfers beside it (fair share, as
// FlowNetwork computes), and a device copy's time between two ranks on one
// model GPU. The CUDA backend holds a transfer's stream for its window with
// the real copy inside it (cuda_backend.cpp, TransferWork).
#pragma once

#include <vector>

#include "engine/core/units.h"
#include "engine/plan/plan.h"
#include "engine/topology/topology.h"

namespace shardlab::device {

/// Per op id: the modelled duration of each Recv's transfer, and the
/// simulator's duration of every other op (a Send's entry equals its
/// Recv's). `rank_to_gpu` as in RunOptions.
std::vector<TimeNs> EmulatedTransferWindows(const Plan& plan, const Topology& topology,
                                            const std::vector<int>& rank_to_gpu);

}  // namespace shardlab::device
