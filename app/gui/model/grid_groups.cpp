#include "app/gui/model/grid_groups.h"

#include <map>
#include <utility>

namespace shardlab::gui {

const char* GridColourModeName(GridColourMode mode) {
  switch (mode) {
    case GridColourMode::kRank: return "rank";
    case GridColourMode::kTpGroup: return "TP group";
    case GridColourMode::kPpStage: return "PP stage";
    case GridColourMode::kDpReplica: return "DP replica";
  }
  return "?";
}

std::string RankListText(const std::vector<int>& ranks) {
  constexpr std::size_t kShown = 3;
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks.size() > kShown + 1 && i == kShown) {
      text += ",..," + std::to_string(ranks.back());
      break;
    }
    text += (i ? "," : "") + std::to_string(ranks[i]);
  }
  return text;
}

GridColouring ColourByCoordinate(const ParallelGrid& grid, GridColourMode mode) {
  const int n = grid.ranks();
  GridColouring out;
  out.colour_of_rank.resize(static_cast<std::size_t>(n));
  std::vector<std::vector<int>> groups;
  if (mode == GridColourMode::kTpGroup) {
    groups = grid.TpGroups();
  } else {
    const int count = mode == GridColourMode::kRank ? n : mode == GridColourMode::kPpStage ? grid.pp : grid.dp;
    groups.resize(static_cast<std::size_t>(count));
    for (int r = 0; r < n; ++r) {
      const GridCoord c = grid.CoordOf(r);
      const int g = mode == GridColourMode::kRank ? r : mode == GridColourMode::kPpStage ? c.pp : c.dp;
      groups[static_cast<std::size_t>(g)].push_back(r);
    }
  }
  const char* word = mode == GridColourMode::kRank       ? "rank"
                     : mode == GridColourMode::kTpGroup  ? "TP group"
                     : mode == GridColourMode::kPpStage  ? "PP stage"
                                                         : "DP replica";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (int r : groups[g]) out.colour_of_rank[static_cast<std::size_t>(r)] = static_cast<int>(g);
    GridLegendEntry entry;
    entry.colour = static_cast<int>(g);
    entry.ranks = groups[g];
    entry.label = std::string(word) + " " + std::to_string(g);
    if (mode != GridColourMode::kRank) {
      entry.label += std::string(" = rank") + (groups[g].size() == 1 ? " " : "s ") + RankListText(groups[g]);
    }
    out.legend.push_back(std::move(entry));
  }
  return out;
}

std::vector<GridRowGroup> GanttGroupsByCoordinate(const ParallelGrid& grid) {
  std::vector<GridRowGroup> groups;
  for (int pp = 0; pp < grid.pp; ++pp) {
    for (int dp = 0; dp < grid.dp; ++dp) {
      GridRowGroup group;
      group.header = "stage " + std::to_string(pp) + " \xC2\xB7 replica " + std::to_string(dp);
      for (int tp = 0; tp < grid.tp; ++tp) group.ranks.push_back(grid.RankOf({dp, pp, tp}));
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

std::string CollectiveGroupText(const ThreeDPlan& plan, int collective_seq) {
  if (collective_seq < 0 || collective_seq >= static_cast<int>(plan.collectives.size())) return "";
  const ThreeDCollectiveInfo& info = plan.collectives[static_cast<std::size_t>(collective_seq)];
  const ParallelGrid& grid = plan.params.grid;
  const std::vector<std::vector<int>> groups = info.kind == GroupKind::kTensor     ? grid.TpGroups()
                                               : info.kind == GroupKind::kPipeline ? grid.PpGroups()
                                                                                   : grid.DpGroups();
  std::string text = std::string(GroupKindName(info.kind)) + " group " + std::to_string(info.group);
  if (info.group >= 0 && info.group < static_cast<int>(groups.size())) {
    text += " (ranks " + RankListText(groups[static_cast<std::size_t>(info.group)]) + ")";
  }
  return text;
}

std::array<std::vector<bool>, kGroupKindCount> LinksByGroupKind(const ThreeDPlan& plan, const Plan& ops,
                                                                 const Topology& topology) {
  std::array<std::vector<bool>, kGroupKindCount> used;
  for (std::vector<bool>& links : used) links.assign(topology.links.size(), false);
  std::map<std::pair<int, int>, Route> routes;  // by (rank, peer): a plan repeats its pairs
  const int gpus = topology.num_gpus();
  for (const Op& op : ops.ops) {
    if (op.kind != OpKind::kSend || op.peer < 0 || op.rank >= gpus || op.peer >= gpus) continue;
    if (op.collective_seq < 0 || op.collective_seq >= static_cast<int>(plan.collectives.size())) continue;
    const auto kind = static_cast<std::size_t>(plan.collectives[static_cast<std::size_t>(op.collective_seq)].kind);
    auto it = routes.find({op.rank, op.peer});
    if (it == routes.end()) {
      Route route;
      if (!TryFindRoute(topology, topology.gpus[static_cast<std::size_t>(op.rank)],
                        topology.gpus[static_cast<std::size_t>(op.peer)], &route)) {
        route.hops.clear();
      }
      it = routes.emplace(std::make_pair(op.rank, op.peer), std::move(route)).first;
    }
    for (const LinkHop& hop : it->second.hops) {
      if (hop.link >= 0 && hop.link < static_cast<int>(topology.links.size())) {
        used[kind][static_cast<std::size_t>(hop.link)] = true;
      }
    }
  }
  return used;
}

}  // namespace shardlab::gui
