// NCCL's double binary tree: two binary trees over the same ranks, built so
// that a rank that is a leaf in one tree is an inner node in the other.
// Each tree carries half of the data, so every rank sends and receives about
// one buffer's worth in total (as in a ring), but the latency of one pass is
// the tree's depth, O(log2 n), instead of the ring's n-1 hops.
//
// Tree A is the in-order tree over positions 0..n-1 (label = position + 1):
// a label's height is its number of trailing zero bits, so every odd label
// (even position) is a leaf and the root is the largest power of two <= n.
//
//   n = 8, tree A (positions)            tree B = A mirrored (n even):
//                 7                       0
//               /                           \            depth 0 -> 1
//             3                               4
//           /   \                           /   \        depth 1 -> 2
//         1       5                       2       6
//        / \     / \                     / \     / \     depth 2 -> 3
//       0   2   4   6                   1   3   5   7
//
// Tree B mirrors A (position p -> n-1-p) when n is even, which turns A's
// leaves (even positions) into B's inner nodes and vice versa. When n is
// odd the mirror would map even positions to even positions, so B is A
// shifted by one instead (index j -> position (j+1) % n); then one rank
// (position 0) is a leaf in both trees and no rank is inner in both.
// Positions are mapped to ranks through the ring order, so a topology-aware
// order puts tree edges on fast links too.
#pragma once

#include <array>
#include <vector>

namespace shardlab {

/// One binary tree over ranks 0..n-1; every vector is indexed by rank and
/// -1 means "none".
struct BinaryTree {
  int root = 0;
  std::vector<int> parent;
  std::vector<std::array<int, 2>> children;  // [0] is filled before [1]
  std::vector<int> depth;   // edges from the root
  std::vector<int> height;  // edges down to the deepest leaf below

  int child_count(int rank) const {
    return (children[rank][0] >= 0 ? 1 : 0) + (children[rank][1] >= 0 ? 1 : 0);
  }
  bool is_leaf(int rank) const { return child_count(rank) == 0; }
};

/// The two complementary trees over `rank_at` (the rank at each position;
/// a permutation of 0..n-1, n >= 1).
std::array<BinaryTree, 2> BuildDoubleBinaryTree(const std::vector<int>& rank_at);

/// Depth of each tree over n ranks: floor(log2 n) (0 for one rank).
int DoubleBinaryTreeDepth(int ranks);

}  // namespace shardlab
