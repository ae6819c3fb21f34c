// Tree all-reduce over NCCL's double binary tree (double_binary_tree.h).
//
// Tree A reduces and broadcasts the first half of the buffer, tree B the
// second half, at the same time. Each half is cut into K pieces that follow
// each other through the tree (K = tree_chunks, or automatic: one piece per
// 64 KiB of a half, 1 to 8 pieces):
//
//   reduce (up)                              broadcast (down)
//            root                                   root
//           ^    ^       partial sums               /    \      the full sum
//         x        y     flow to the root         x        y    flows back
//        ^ ^      ^ ^                            / \      / \   (leaves)
//       l   l    l   l                          l   l    l   l
//
// A rank of height h (edges down to its deepest leaf) sends piece k up in
// step k+h, once both its children's partial sums of piece k have arrived.
// The root holds the full sum of piece k after step k+d-1 (d = depth =
// floor(log2 n)), and a rank at depth e sends piece k down in step k+d+e.
// So with K pieces:
//
//   steps = K + 2d - 1          (ring all-reduce: 2(n-1))
//
//   n = 8, K = 2, d = 3    step:  0 1 2 3 4 5 6
//                    piece 0 up:  # # #
//                  piece 0 down:        # # #
//                    piece 1 up:    # # #
//                  piece 1 down:          # # #
//
// Latency is O(log2 n) hops instead of the ring's O(n), which is why NCCL
// picks trees for small messages at scale; for large messages the ring is
// bandwidth-optimal. Because a leaf in one tree is an inner node in the
// other, the load is spread evenly: with S bytes per rank, a rank that is
// inner in tree A sends A's half (S/2) once up and twice down, and as a
// leaf of tree B sends B's half once up: about 2S in all, like the ring's
// 2(n-1)/n * S (the roots, one-child nodes and odd n differ slightly).
//
// Every op of a step is emitted before any op of the next step, and every
// dependency points to an earlier step, so the lanes' serial order never
// deadlocks: the first unfinished transfer in emission order can always run.
#include <array>
#include <vector>

#include "engine/algorithms/collective_internal.h"
#include "engine/algorithms/double_binary_tree.h"

namespace shardlab::detail {

Plan BuildTreeAllReduce(const CollectiveParams& params) {
  PlanBuilder builder(CollectivePlanName(params), params.ranks);
  AddCollectiveBuffers(builder, params);
  const int n = params.ranks;
  if (n == 1) return builder.Finish();

  const std::vector<int> rank_at = RingRanks(params);
  const std::array<BinaryTree, 2> trees = BuildDoubleBinaryTree(rank_at);
  const int pieces = TreePieces(params);
  const int depth = DoubleBinaryTreeDepth(n);
  const int steps = pieces + 2 * depth - 1;

  const std::size_t transfers = 2 * static_cast<std::size_t>(pieces) * 2 * (n - 1);
  builder.Reserve(2 * transfers, 2 * transfers);

  // Per tree, rank and piece: the recvs of the children's partial sums
  // (slot 0 and 1 follow children[0] and [1]) and of the broadcast.
  const std::size_t slots = static_cast<std::size_t>(n) * pieces;
  std::array<std::vector<std::array<OpId, 2>>, 2> up_recv;
  std::array<std::vector<OpId>, 2> down_recv;
  for (int t = 0; t < 2; ++t) {
    up_recv[t].assign(slots, {kNoOp, kNoOp});
    down_recv[t].assign(slots, kNoOp);
  }

  std::vector<OpId> send_deps;
  send_deps.reserve(2);
  const std::vector<OpId> no_deps;
  auto piece_of = [&](BufferId buffer, int t, int k) {
    const std::int64_t half_begin = ChunkBegin(params.count, 2, t);
    const std::int64_t half_count = ChunkCount(params.count, 2, t);
    return BufferSlice{buffer, half_begin + ChunkBegin(half_count, pieces, k),
                       ChunkCount(half_count, pieces, k)};
  };

  for (int step = 0; step < steps; ++step) {
    for (int t = 0; t < 2; ++t) {
      const BinaryTree& tree = trees[t];
      for (int pos = 0; pos < n; ++pos) {
        const int v = rank_at[pos];
        const std::size_t v_slot = static_cast<std::size_t>(v) * pieces;

        // Up: v's partial sum of piece k goes to its parent.
        const int up_piece = step - tree.height[v];
        if (v != tree.root && up_piece >= 0 && up_piece < pieces) {
          send_deps.clear();
          for (const OpId id : up_recv[t][v_slot + up_piece])
            if (id != kNoOp) send_deps.push_back(id);
          const int parent = tree.parent[v];
          const auto transfer = builder.AddTransfer(
              v, parent, piece_of(v, t, up_piece), piece_of(parent, t, up_piece), params.op, step,
              OpTags{Phase::kReduce, t * pieces + up_piece}, send_deps, no_deps,
              params.collective_seq);
          const int slot = tree.children[parent][0] == v ? 0 : 1;
          up_recv[t][static_cast<std::size_t>(parent) * pieces + up_piece][slot] = transfer.recv;
        }

        // Down: the full sum of piece k goes to v's children.
        const int down_piece = step - depth - tree.depth[v];
        if (!tree.is_leaf(v) && down_piece >= 0 && down_piece < pieces) {
          send_deps.clear();
          if (v == tree.root) {
            for (const OpId id : up_recv[t][v_slot + down_piece])
              if (id != kNoOp) send_deps.push_back(id);
          } else {
            send_deps.push_back(down_recv[t][v_slot + down_piece]);
          }
          for (const int child : tree.children[v]) {
            if (child < 0) continue;
            const auto transfer = builder.AddTransfer(
                v, child, piece_of(v, t, down_piece), piece_of(child, t, down_piece),
                ReduceOp::kNone, step, OpTags{Phase::kBroadcast, t * pieces + down_piece},
                send_deps, no_deps, params.collective_seq);
            down_recv[t][static_cast<std::size_t>(child) * pieces + down_piece] = transfer.recv;
          }
        }
      }
    }
  }
  return builder.Finish();
}

}  // namespace shardlab::detail
