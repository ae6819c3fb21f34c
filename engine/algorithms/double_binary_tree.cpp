#include "engine/algorithms/double_binary_tree.h"

#include <algorithm>
#include <cstdint>

#include "engine/core/error.h"

namespace shardlab {

namespace {

int LowestBit(int label) { return label & -label; }

// The in-order tree over labels 1..n: label i with lowest set bit b covers
// [i-b+1, i+b-1]; its left child is i-b/2 (always <= n), its right child
// the first of i+b/2, i+b/4, ..., i+1 that is <= n (labels past n are cut
// off, and the highest one left takes the place of the missing subtree).
// Fills `out` (indexed by label - 1, i.e. by index) with children.
void InOrderChildren(int n, std::vector<std::array<int, 2>>& out) {
  out.assign(static_cast<std::size_t>(n), {-1, -1});
  for (int label = 1; label <= n; ++label) {
    const int low = LowestBit(label);
    if (low == 1) continue;  // odd labels are leaves
    out[label - 1][0] = label - low / 2 - 1;
    for (int half = low / 2; half >= 1; half /= 2) {
      if (label + half <= n) {
        out[label - 1][1] = label + half - 1;
        break;
      }
    }
  }
}

int HighestPowerOfTwoAtMost(int n) {
  int p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

int FillDepthAndHeight(BinaryTree& tree, int rank, int depth) {
  tree.depth[rank] = depth;
  int height = 0;
  for (const int child : tree.children[rank])
    if (child >= 0) height = std::max(height, 1 + FillDepthAndHeight(tree, child, depth + 1));
  tree.height[rank] = height;
  return height;
}

// Tree over ranks from the in-order shape over indices, where index j sits
// at position position_of(j) and position p holds rank rank_at[p].
template <typename PositionOf>
BinaryTree MakeTree(const std::vector<int>& rank_at,
                    const std::vector<std::array<int, 2>>& shape, int root_index,
                    PositionOf position_of) {
  const int n = static_cast<int>(rank_at.size());
  auto rank_of = [&](int index) { return index < 0 ? -1 : rank_at[position_of(index)]; };
  BinaryTree tree;
  tree.parent.assign(static_cast<std::size_t>(n), -1);
  tree.children.assign(static_cast<std::size_t>(n), {-1, -1});
  tree.depth.assign(static_cast<std::size_t>(n), 0);
  tree.height.assign(static_cast<std::size_t>(n), 0);
  for (int index = 0; index < n; ++index) {
    const int rank = rank_of(index);
    for (int c = 0; c < 2; ++c) {
      const int child = rank_of(shape[index][c]);
      tree.children[rank][c] = child;
      if (child >= 0) tree.parent[child] = rank;
    }
  }
  tree.root = rank_of(root_index);
  FillDepthAndHeight(tree, tree.root, 0);
  return tree;
}

}  // namespace

std::array<BinaryTree, 2> BuildDoubleBinaryTree(const std::vector<int>& rank_at) {
  const int n = static_cast<int>(rank_at.size());
  if (n < 1) throw Error("a double binary tree needs at least one rank");
  std::vector<std::array<int, 2>> shape;
  InOrderChildren(n, shape);
  const int root_index = HighestPowerOfTwoAtMost(n) - 1;
  const bool even = n % 2 == 0;
  return {
      MakeTree(rank_at, shape, root_index, [](int j) { return j; }),
      MakeTree(rank_at, shape, root_index,
               [n, even](int j) { return even ? n - 1 - j : (j + 1) % n; }),
  };
}

int DoubleBinaryTreeDepth(int ranks) {
  int depth = 0;
  while ((std::int64_t{2} << depth) <= ranks) ++depth;  // floor(log2 ranks)
  return depth;
}

}  // namespace shardlab
