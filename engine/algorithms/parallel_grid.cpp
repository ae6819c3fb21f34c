#include "engine/algorithms/parallel_grid.h"

#include "engine/core/error.h"

namespace shardlab {

void CheckParallelGrid(const ParallelGrid& grid, int ranks, const std::string& ranks_what) {
  auto positive = [](int value, const char* field) {
    if (value < 1)
      throw Error(std::string(field) + ": must be at least 1 (got " + std::to_string(value) + ")");
  };
  positive(grid.dp, "dp");
  positive(grid.pp, "pp");
  positive(grid.tp, "tp");
  if (ranks > 0 && grid.ranks() != ranks)
    throw Error("grid: dp " + std::to_string(grid.dp) + " x pp " + std::to_string(grid.pp) +
                " x tp " + std::to_string(grid.tp) + " = " + std::to_string(grid.ranks()) +
                " ranks, but " + (ranks_what.empty() ? std::string("there are") : ranks_what) +
                " " + std::to_string(ranks) + (ranks_what.empty() ? " ranks" : ""));
}

int ParallelGrid::RankOf(GridCoord c) const {
  if (c.dp < 0 || c.dp >= dp || c.pp < 0 || c.pp >= pp || c.tp < 0 || c.tp >= tp)
    throw Error("grid: coordinates (dp " + std::to_string(c.dp) + ", pp " + std::to_string(c.pp) +
                ", tp " + std::to_string(c.tp) + ") lie outside " + Text());
  return (c.pp * dp + c.dp) * tp + c.tp;
}

GridCoord ParallelGrid::CoordOf(int rank) const {
  if (rank < 0 || rank >= ranks())
    throw Error("grid: rank " + std::to_string(rank) + " lies outside " + Text() + " (" +
                std::to_string(ranks()) + " ranks)");
  GridCoord c;
  c.tp = rank % tp;
  c.dp = (rank / tp) % dp;
  c.pp = rank / (tp * dp);
  return c;
}

RankGroups ParallelGrid::GroupsOf(int rank) const {
  const GridCoord c = CoordOf(rank);
  RankGroups g;
  for (int t = 0; t < tp; ++t) g.tp.push_back(RankOf({c.dp, c.pp, t}));
  for (int d = 0; d < dp; ++d) g.dp.push_back(RankOf({d, c.pp, c.tp}));
  for (int p = 0; p < pp; ++p) g.pp.push_back(RankOf({c.dp, p, c.tp}));
  g.tp_group = c.pp * dp + c.dp;
  g.dp_group = c.pp * tp + c.tp;
  g.pp_group = c.dp * tp + c.tp;
  return g;
}

std::vector<std::vector<int>> ParallelGrid::TpGroups() const {
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(dp) * pp);
  for (int r = 0; r < ranks(); ++r) groups[GroupsOf(r).tp_group].push_back(r);
  return groups;
}

std::vector<std::vector<int>> ParallelGrid::DpGroups() const {
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(pp) * tp);
  for (int r = 0; r < ranks(); ++r) groups[GroupsOf(r).dp_group].push_back(r);
  return groups;
}

std::vector<std::vector<int>> ParallelGrid::PpGroups() const {
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(dp) * tp);
  for (int r = 0; r < ranks(); ++r) groups[GroupsOf(r).pp_group].push_back(r);
  return groups;
}

std::string ParallelGrid::Text() const {
  return "dp" + std::to_string(dp) + " x pp" + std::to_string(pp) + " x tp" + std::to_string(tp);
}

}  // namespace shardlab
