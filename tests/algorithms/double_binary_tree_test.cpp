// The shape of NCCL's double binary tree: two spanning binary trees of depth
// floor(log2 n) in which no rank is an inner node twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "engine/algorithms/double_binary_tree.h"

namespace shardlab {
namespace {

std::vector<int> Identity(int n) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

// A tree over 0..n-1: one root, consistent parent/child links, every rank
// reachable from the root, depth and height as the links say.
void ExpectSpanningBinaryTree(const BinaryTree& tree, int n) {
  ASSERT_EQ(static_cast<int>(tree.parent.size()), n);
  EXPECT_EQ(tree.parent[tree.root], -1);
  EXPECT_EQ(tree.depth[tree.root], 0);
  std::vector<int> seen(n, 0);
  std::vector<int> stack = {tree.root};
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    ++seen[v];
    int height = 0;
    for (const int c : tree.children[v]) {
      if (c < 0) continue;
      EXPECT_EQ(tree.parent[c], v);
      EXPECT_EQ(tree.depth[c], tree.depth[v] + 1);
      height = std::max(height, tree.height[c] + 1);
      stack.push_back(c);
    }
    EXPECT_EQ(tree.height[v], height);
    if (tree.children[v][0] < 0) {
      EXPECT_LT(tree.children[v][1], 0) << "child [1] without [0]";
    }
  }
  for (int r = 0; r < n; ++r) EXPECT_EQ(seen[r], 1) << "rank " << r;
  EXPECT_EQ(tree.height[tree.root], DoubleBinaryTreeDepth(n));
  EXPECT_EQ(*std::max_element(tree.depth.begin(), tree.depth.end()), DoubleBinaryTreeDepth(n));
}

TEST(DoubleBinaryTree, BothTreesSpanEveryRankWithLogDepth) {
  for (int n = 1; n <= 70; ++n) {
    SCOPED_TRACE(n);
    const auto trees = BuildDoubleBinaryTree(Identity(n));
    ExpectSpanningBinaryTree(trees[0], n);
    ExpectSpanningBinaryTree(trees[1], n);
  }
}

TEST(DoubleBinaryTree, NoRankIsAnInnerNodeInBothTrees) {
  for (int n = 2; n <= 70; ++n) {
    const auto trees = BuildDoubleBinaryTree(Identity(n));
    int leaf_in_both = 0;
    for (int r = 0; r < n; ++r) {
      EXPECT_FALSE(!trees[0].is_leaf(r) && !trees[1].is_leaf(r)) << "n=" << n << " rank " << r;
      if (trees[0].is_leaf(r) && trees[1].is_leaf(r)) ++leaf_in_both;
    }
    // Mirrored (even n): every rank is a leaf in exactly one tree. Shifted
    // (odd n): one rank is a leaf in both.
    EXPECT_EQ(leaf_in_both, n % 2 == 0 ? 0 : 1) << "n=" << n;
  }
}

TEST(DoubleBinaryTree, EightRanksMatchTheDiagram) {
  const auto trees = BuildDoubleBinaryTree(Identity(8));
  EXPECT_EQ(trees[0].root, 7);
  EXPECT_EQ(trees[0].parent[3], 7);
  EXPECT_EQ(trees[0].parent[1], 3);
  EXPECT_EQ(trees[0].parent[5], 3);
  EXPECT_EQ(trees[0].parent[0], 1);
  EXPECT_EQ(trees[0].parent[6], 5);
  EXPECT_EQ(trees[1].root, 0);
  EXPECT_EQ(trees[1].parent[4], 0);
  EXPECT_EQ(trees[1].parent[2], 4);
  EXPECT_EQ(trees[1].parent[6], 4);
  EXPECT_EQ(trees[1].parent[7], 6);
  EXPECT_EQ(trees[1].parent[1], 2);
}

TEST(DoubleBinaryTree, FollowsTheRingOrder) {
  std::mt19937 rng(7);
  for (int n = 2; n <= 20; ++n) {
    std::vector<int> order = Identity(n);
    std::shuffle(order.begin(), order.end(), rng);
    const auto plain = BuildDoubleBinaryTree(Identity(n));
    const auto mapped = BuildDoubleBinaryTree(order);
    for (int t = 0; t < 2; ++t) {
      ExpectSpanningBinaryTree(mapped[t], n);
      EXPECT_EQ(mapped[t].root, order[plain[t].root]);
      for (int p = 0; p < n; ++p) {
        const int parent = plain[t].parent[p];
        EXPECT_EQ(mapped[t].parent[order[p]], parent < 0 ? -1 : order[parent]);
      }
    }
  }
}

TEST(DoubleBinaryTree, DepthIsFloorLog2) {
  EXPECT_EQ(DoubleBinaryTreeDepth(1), 0);
  EXPECT_EQ(DoubleBinaryTreeDepth(2), 1);
  EXPECT_EQ(DoubleBinaryTreeDepth(3), 1);
  EXPECT_EQ(DoubleBinaryTreeDepth(4), 2);
  EXPECT_EQ(DoubleBinaryTreeDepth(1023), 9);
  EXPECT_EQ(DoubleBinaryTreeDepth(1024), 10);
}

}  // namespace
}  // namespace shardlab
