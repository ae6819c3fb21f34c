// ParallelGrid: ranks arranged as a DP × PP × TP grid in Megatron-LM's
// default order ("tp-cp-ep-dp-pp" in megatron/core/parallel_state.py with
// cp = ep = 1): the tensor-parallel index varies fastest, then the
// data-parallel index, then the pipeline stage.
//
//   rank = pp·(dp_size·tp_size) + dp·tp_size + tp
//
//   dp=2, pp=2, tp=2 (8 ranks):        stage 0          stage 1
//                                      dp0: [0 1]       dp0: [4 5]
//                                      dp1: [2 3]       dp1: [6 7]
//   TP groups   {0,1} {2,3} {4,5} {6,7}      consecutive ranks: one box's NVLink
//   DP groups   {0,2} {1,3} {4,6} {5,7}      same stage and TP index
//   PP groups   {0,4} {1,5} {2,6} {3,7}      same DP and TP index, stage order
//
// So with ranks on GPUs in order and tp ≤ GPUs per box, every TP group
// stays inside one box, where its all-reduces (the most frequent traffic)
// use NVLink; DP groups span boxes once dp·tp exceeds a box.
#pragma once

#include <string>
#include <vector>

namespace shardlab {

/// A rank's place in the grid.
struct GridCoord {
  int dp = 0, pp = 0, tp = 0;
};

/// The three groups a rank belongs to, each in index order (the TP group
/// by tp index, the DP group by dp index, the PP group by stage), and an
/// id per group kind that is equal exactly for ranks of the same group.
struct RankGroups {
  std::vector<int> tp, dp, pp;
  int tp_group = 0, dp_group = 0, pp_group = 0;
};

struct ParallelGrid {
  int dp = 1, pp = 1, tp = 1;

  int ranks() const { return dp * pp * tp; }
  /// The rank at `coord` (Megatron order). Throws when out of range.
  int RankOf(GridCoord coord) const;
  /// The coordinates of `rank`. Throws when out of range.
  GridCoord CoordOf(int rank) const;
  /// The TP, DP and PP groups of `rank` and their ids: the TP group of
  /// (dp, pp) has id pp·dp_size + dp; the DP group of (pp, tp) id
  /// pp·tp_size + tp; the PP group of (dp, tp) id dp·tp_size + tp.
  RankGroups GroupsOf(int rank) const;
  /// Members of each group of one kind, indexed by group id.
  std::vector<std::vector<int>> TpGroups() const;
  std::vector<std::vector<int>> DpGroups() const;
  std::vector<std::vector<int>> PpGroups() const;
  /// "dp2 x pp2 x tp2"
  std::string Text() const;
};

/// Checks every size is at least 1 and, when `ranks` > 0, that
/// dp·pp·tp == ranks: "grid: dp 4 x pp 2 x tp 8 = 64 ranks, but the
/// topology has 32 GPUs". Throws Error(kInvalidInput).
void CheckParallelGrid(const ParallelGrid& grid, int ranks = 0, const std::string& ranks_what = "");

}  // namespace shardlab
