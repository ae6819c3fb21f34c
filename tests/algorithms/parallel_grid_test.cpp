// The DP × PP × TP grid: Megatron's rank order and every group of 64 ranks
// against membership computed independently, by brute force over all
// pairs of ranks.
#include "engine/algorithms/parallel_grid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "engine/core/error.h"

namespace shardlab {
namespace {

// Megatron's order written out as nested loops, tp innermost: the n-th
// triple visited is rank n.
std::vector<GridCoord> CoordsByNestedLoops(int dp, int pp, int tp) {
  std::vector<GridCoord> coords;
  for (int p = 0; p < pp; ++p)
    for (int d = 0; d < dp; ++d)
      for (int t = 0; t < tp; ++t) coords.push_back({d, p, t});
  return coords;
}

void CheckEveryGroup(const ParallelGrid grid) {
  const auto coords = CoordsByNestedLoops(grid.dp, grid.pp, grid.tp);
  ASSERT_EQ(static_cast<int>(coords.size()), grid.ranks());
  for (int r = 0; r < grid.ranks(); ++r) {
    const GridCoord c = grid.CoordOf(r);
    EXPECT_EQ(c.dp, coords[r].dp) << r;
    EXPECT_EQ(c.pp, coords[r].pp) << r;
    EXPECT_EQ(c.tp, coords[r].tp) << r;
    EXPECT_EQ(grid.RankOf(c), r);
    // Members by definition: same (dp, pp) for TP, same (pp, tp) for DP,
    // same (dp, tp) for PP; in order of the varying index.
    std::vector<int> tp, dp, pp;
    for (int q = 0; q < grid.ranks(); ++q) {
      const GridCoord o = coords[q];
      if (o.dp == c.dp && o.pp == c.pp) tp.push_back(q);
      if (o.pp == c.pp && o.tp == c.tp) dp.push_back(q);
      if (o.dp == c.dp && o.tp == c.tp) pp.push_back(q);
    }
    auto by = [&](auto key) {
      return [&, key](int a, int b) { return key(coords[a]) < key(coords[b]); };
    };
    std::sort(tp.begin(), tp.end(), by([](GridCoord g) { return g.tp; }));
    std::sort(dp.begin(), dp.end(), by([](GridCoord g) { return g.dp; }));
    std::sort(pp.begin(), pp.end(), by([](GridCoord g) { return g.pp; }));
    const RankGroups g = grid.GroupsOf(r);
    EXPECT_EQ(g.tp, tp) << "rank " << r;
    EXPECT_EQ(g.dp, dp) << "rank " << r;
    EXPECT_EQ(g.pp, pp) << "rank " << r;
    // The ids agree exactly when the groups do.
    for (int q = 0; q < grid.ranks(); ++q) {
      const RankGroups o = grid.GroupsOf(q);
      EXPECT_EQ(o.tp_group == g.tp_group, o.tp == g.tp);
      EXPECT_EQ(o.dp_group == g.dp_group, o.dp == g.dp);
      EXPECT_EQ(o.pp_group == g.pp_group, o.pp == g.pp);
    }
  }
  // The group lists partition the ranks.
  for (const auto& groups : {grid.TpGroups(), grid.DpGroups(), grid.PpGroups()}) {
    std::set<int> seen;
    for (const auto& group : groups)
      for (int r : group) EXPECT_TRUE(seen.insert(r).second) << r;
    EXPECT_EQ(static_cast<int>(seen.size()), grid.ranks());
  }
}

TEST(ParallelGrid, EveryGroupOf64RanksFollowsItsCoordinates) {
  CheckEveryGroup({4, 2, 8});
  CheckEveryGroup({2, 4, 8});
  CheckEveryGroup({8, 4, 2});
  CheckEveryGroup({64, 1, 1});
  CheckEveryGroup({1, 64, 1});
  CheckEveryGroup({1, 1, 64});
}

TEST(ParallelGrid, MatchesMegatronsDocumentedExample) {
  // Megatron's initialize_model_parallel docstring: 16 GPUs, tp 2, pp 4
  // (so dp 2): TP groups [g0,g1] [g2,g3] ..., PP groups [g0,g4,g8,g12] ...,
  // DP groups [g0,g2] [g1,g3] [g4,g6] ...
  const ParallelGrid grid{2, 4, 2};
  EXPECT_EQ(grid.GroupsOf(0).tp, (std::vector<int>{0, 1}));
  EXPECT_EQ(grid.GroupsOf(2).tp, (std::vector<int>{2, 3}));
  EXPECT_EQ(grid.GroupsOf(0).pp, (std::vector<int>{0, 4, 8, 12}));
  EXPECT_EQ(grid.GroupsOf(3).pp, (std::vector<int>{3, 7, 11, 15}));
  EXPECT_EQ(grid.GroupsOf(0).dp, (std::vector<int>{0, 2}));
  EXPECT_EQ(grid.GroupsOf(5).dp, (std::vector<int>{5, 7}));
}

TEST(ParallelGrid, TpGroupsStayInsideEightGpuBoxes) {
  const ParallelGrid grid{64, 1, 8};
  for (const auto& group : grid.TpGroups())
    for (int r : group) EXPECT_EQ(r / 8, group.front() / 8);
}

TEST(ParallelGrid, RejectsAProductThatIsNotTheRankCount) {
  EXPECT_NO_THROW(CheckParallelGrid({4, 2, 8}, 64));
  try {
    CheckParallelGrid({4, 2, 8}, 32, "the topology has");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("= 64 ranks"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CheckParallelGrid({0, 1, 1}), Error);
  EXPECT_THROW(ParallelGrid({2, 2, 2}).CoordOf(8), Error);
  EXPECT_THROW(ParallelGrid({2, 2, 2}).RankOf({0, 2, 0}), Error);
}

}  // namespace
}  // namespace shardlab
