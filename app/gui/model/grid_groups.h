// Grid groups for the views of a DP x PP x TP run: which group of the
// chosen kind each rank belongs to (the topology view colours GPU tiles by
// it, with a legend "TP group 3 = ranks 6,7"), the Gantt's row order by
// coordinate with its group headers, and a collective's group in words.
// Ranks follow ParallelGrid's Megatron order (rank r on GPU r).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/algorithms/three_d.h"
#include "engine/topology/topology.h"

namespace shardlab::gui {

/// What the topology view colours GPU tiles by in a 3D run.
enum class GridColourMode { kRank, kTpGroup, kPpStage, kDpReplica };
const char* GridColourModeName(GridColourMode mode);  // "rank", "TP group", "PP stage", "DP replica"

struct GridLegendEntry {
  int colour = 0;              // index for Theme::RankColor
  std::string label;           // "TP group 3 = ranks 6,7"
  std::vector<int> ranks;
};

struct GridColouring {
  std::vector<int> colour_of_rank;      // [rank]: index for Theme::RankColor
  std::vector<GridLegendEntry> legend;  // one entry per group (per rank in kRank mode)
};

/// TP group: ParallelGrid's TP group id (pp·dp_size + dp); PP stage: the
/// rank's pp; DP replica: its dp.
GridColouring ColourByCoordinate(const ParallelGrid& grid, GridColourMode mode);

/// "6,7" or "0,2,4,..,14" for long lists.
std::string RankListText(const std::vector<int>& ranks);

struct GridRowGroup {
  std::string header;          // "stage 0 · replica 1"
  std::vector<int> ranks;      // by tp
};

/// The Gantt's rows grouped by coordinate: sorted by pp, then dp, then tp;
/// one group per (pp, dp) pair.
std::vector<GridRowGroup> GanttGroupsByCoordinate(const ParallelGrid& grid);

/// A collective of the 3D plan in words: "TP group 3 (ranks 6,7)";
/// "" when `collective_seq` is not one of the plan's.
std::string CollectiveGroupText(const ThreeDPlan& plan, int collective_seq);

/// [GroupKind][link id]: whether a send of that kind in the 3D plan (a
/// TP all-reduce, a stage-to-stage transfer, a DP gradient collective)
/// crosses the link on its route from GPU `rank` to GPU `peer`. `ops`: the
/// plan's ops (plan.plan, or the Prepared's plan it was moved to).
std::array<std::vector<bool>, kGroupKindCount> LinksByGroupKind(const ThreeDPlan& plan, const Plan& ops,
                                                                 const Topology& topology);

}  // namespace shardlab::gui
