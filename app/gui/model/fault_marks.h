// Stragglers and failures in the app: which scenario parameters are fault
// switches (the Faults panel groups them), the links a teacher can pick,
// and what the views mark on the machine and the timeline.
//
//   slow_rank "2:4"        GPU2's tile framed, "x4 slow"; its Gantt rows tagged
//   throttle_link "0-3:5"  the link's lanes striped, "5 GB/s"
//   fail_link "1-2@3"      the link crossed out, "fails at step 3"
//   fail_rank "5@4"        GPU5's tile crossed out, "fails at step 4"
//
// The switches are the specs' own parameters (engine/scenarios/
// fault_params.h), so a scenario that gains them shows them in the panel.
#pragma once

#include <string>
#include <vector>

#include "engine/run/faults.h"
#include "engine/topology/topology.h"

namespace shardlab::gui {

/// True for slow_rank, throttle_link, fail_link, fail_rank (FaultParams()).
bool IsFaultParam(const std::string& name);

/// A link a fault can name: its reference as the switch spells it
/// ("gpu0-gpu3") and in words ("gpu0 <-> gpu3, NVLink2 x2, 50 GB/s").
struct FaultLinkChoice {
  int link = -1;
  std::string ref;
  std::string words;
};

/// Every link with a GPU at one end, in the topology's order.
std::vector<FaultLinkChoice> FaultLinkChoices(const Topology& topology);

/// What the views mark for a run's faults (resolved: ResolveFaults).
struct FaultMarks {
  std::vector<double> slow_factor;        // by rank; 1 for none
  std::vector<int> fail_step;             // by rank; -1 for none
  std::vector<double> throttle_gbps;      // by link; 0 for none
  std::vector<int> link_fail_step;        // by link; -1 for none
  bool any = false;
  bool RankMarked(int rank) const {
    return rank >= 0 && static_cast<std::size_t>(rank) < slow_factor.size() &&
           (slow_factor[static_cast<std::size_t>(rank)] != 1.0 || fail_step[static_cast<std::size_t>(rank)] >= 0);
  }
  bool LinkMarked(int link) const {
    return link >= 0 && static_cast<std::size_t>(link) < throttle_gbps.size() &&
           (throttle_gbps[static_cast<std::size_t>(link)] > 0 || link_fail_step[static_cast<std::size_t>(link)] >= 0);
  }
};

FaultMarks MarkFaults(const Faults& faults, const Topology& topology, int ranks);

/// "x4 slow", "fails at step 3", "x2 slow, fails at step 1": a rank's badge ("" for none).
std::string RankFaultText(const FaultMarks& marks, int rank);
/// "5 GB/s (throttled)", "fails at step 3" ("" for none).
std::string LinkFaultText(const FaultMarks& marks, int link);

}  // namespace shardlab::gui
