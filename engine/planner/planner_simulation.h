// Cross-checks planner layouts with the simulator: the timing-only 3D step
// (engine/algorithms/three_d.h) of the same model, batch split and ranks,
// run on the same topology with link contention.
//
// What the simulation can run: 1F1B without interleaving (v = 1), ZeRO 0
// or 1, no recomputation. It also models differently on purpose: matmuls
// at the GPU's full fp16 peak (the analytic model takes a share), one TP
// all-reduce per stage and pass carrying all its layers' bytes, and DP
// gradients after the last backward, not overlapped. So compare rankings
// and the communication that shows, not the absolute seconds.
#pragma once

#include <string>

#include "engine/planner/planner.h"

namespace shardlab {

struct SimulatedLayout {
  bool simulated = false;
  std::string not_simulated;  // why, when it was not: "interleaving v 2", ...
  TimeNs step_ns = 0;         // last event's end
  double mfu = 0;             // model FLOPs / (step · GPUs · peak)
  std::size_t events = 0;
};

/// Empty when the simulation can run `candidate`, else the reason.
std::string WhyNotSimulable(const PlanCandidate& candidate);

/// Runs the candidate's timing-only step on the simulator (seconds for
/// hundreds of ranks). Never throws for an unsupported layout: it says why.
SimulatedLayout SimulatePlanCandidate(const PlannerRequest& request, const Topology& topology,
                                      const PlanCandidate& candidate);

}  // namespace shardlab
