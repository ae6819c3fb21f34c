// Group collectives: a ring all-reduce, reduce-scatter or all-gather among
// some ranks of a larger plan, on slices of buffers that plan already has,
// ordered after ops that plan already holds.
//
// The training scenarios (tensor parallel, data parallel and ZeRO, their
// compositions) are compute ops joined by collectives: a row-parallel
// linear's partial outputs are all-reduced before the next layer reads
// them. BuildCollective makes a whole plan of one collective on fresh
// buffers; these append the same ring passes (ring.cpp's schedule) to a
// PlanBuilder instead:
//
//   ranks   {2, 3}          the group, in ring order
//   slices  [rank 2: h2[0..n), rank 3: h3[0..n)]   one per member, equal counts
//   after   [ops rank 2 waits for, ops rank 3 waits for]
//     -> done[i]: the ops member i's later work must wait for
//
// Every op of the collective on member i waits, directly or through its
// lane, for after[i]; done[i] holds member i's last send and last recv:
// lanes run in plan order, so once both are done every read and write of
// the slice is.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/plan/plan.h"

namespace shardlab {

enum class GroupCollectiveKind : std::uint8_t { kAllReduce, kReduceScatter, kAllGather };

struct GroupCollective {
  GroupCollectiveKind kind = GroupCollectiveKind::kAllReduce;
  std::vector<int> ranks;                 // members, in ring order; size n >= 1
  std::vector<BufferSlice> slices;        // slices[i] on ranks[i]; equal counts
  std::vector<std::vector<OpId>> after;   // after[i]: deps of member i (may be empty)
  ReduceOp op = ReduceOp::kSum;
  int first_step = 0;                     // op.step of the first ring step
  OpTags tags;                            // stamped on every op; phase is set per pass
                                          // unless tags.phase != kNone
  int collective_seq = -1;
};

struct GroupCollectiveOps {
  std::vector<std::vector<OpId>> done;  // done[i]: member i's last send and recv
  int steps = 0;                        // ring steps used: 2(n-1), or n-1
};

/// Appends `c` to `builder`. Chunk k of every slice is the k-th of n equal
/// parts (ChunkBegin/ChunkCount), so after a reduce-scatter member i holds
/// the reduced chunk i of its slice, and an all-gather sends member i's
/// chunk i to every member. A group of one adds no ops. Throws
/// Error(kInvalidInput) on mismatched sizes, repeated ranks or slices on
/// another rank than their member.
GroupCollectiveOps AppendGroupCollective(PlanBuilder& builder, const GroupCollective& c);

}  // namespace shardlab
