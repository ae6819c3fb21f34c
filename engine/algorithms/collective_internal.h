// Shared by the collective generators (ring.cpp, tree.cpp, all_to_all.cpp),
// the collectives' defs (collectives/*.cpp), collective.cpp and verify.cpp.
// Not for front ends: they use collective.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/algorithms/collective.h"

namespace shardlab::detail {

/// The most ops one collective's Plan may hold (about 30 GB of ops); a
/// 8,192-rank ring all-reduce (4n(n-1) ops) still fits.
inline constexpr std::int64_t kMaxCollectiveOps = std::int64_t{1} << 28;

/// Automatic tree pipeline: pieces of at least this many bytes, at most
/// kMaxAutoTreePieces of them per tree.
inline constexpr Bytes kTreeAutoPieceBytes = 64 * 1024;
inline constexpr int kMaxAutoTreePieces = 8;
/// Upper bound on an explicit tree_chunks.
inline constexpr int kMaxTreePieces = 1 << 16;

/// x mod n in [0, n) for any sign of x.
inline int Mod(int x, int n) {
  const int r = x % n;
  return r < 0 ? r + n : r;
}

/// The rank at each ring position: params.ring_order, or 0..ranks-1.
std::vector<int> RingRanks(const CollectiveParams& params);

/// "ring all-reduce, 8 ranks, 64 MiB" (+ ", root 3" for broadcast/reduce).
std::string CollectivePlanName(const CollectiveParams& params);


/// Pipeline pieces per tree of the double-binary-tree all-reduce.
int TreePieces(const CollectiveParams& params);

/// Elements each pair exchanges in all-to-all: count / ranks (the last
/// count % ranks elements of each buffer take no part, as in nccl-tests).
inline std::int64_t AllToAllBlockCount(std::int64_t count, int ranks) { return count / ranks; }

/// Number of ops BuildCollective will create (for the size guard).
std::int64_t EstimatedOpCount(const CollectiveParams& params);

// Pieces the collectives' defs share (collectives/*.cpp).

/// A def's `input` for a rank whose whole input buffer is its input.
inline ElementRange WholeInput(const CollectiveParams&, int, std::int64_t count) {
  return ElementRange{0, count};
}
/// Ranks 0..ranks-1, a def's `final_contributors` when a chunk holds every rank's input.
std::vector<int> AllRanks(int ranks);

/// Buffers of a collective in rank order ("data", or "send" then "recv").
void AddCollectiveBuffers(PlanBuilder& builder, const CollectiveParams& params);

/// The generators; params are already checked.
Plan BuildRingAllReduce(const CollectiveParams& params);
Plan BuildRingReduceScatter(const CollectiveParams& params);
Plan BuildRingAllGather(const CollectiveParams& params);
Plan BuildRingBroadcast(const CollectiveParams& params);
Plan BuildRingReduce(const CollectiveParams& params);
Plan BuildTreeAllReduce(const CollectiveParams& params);
Plan BuildDirectAllToAll(const CollectiveParams& params);
Plan BuildNcclCollective(const CollectiveParams& params);

}  // namespace shardlab::detail
