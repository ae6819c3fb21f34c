// What a collective is, as data: its kind, its algorithm, its parameters,
// and the plain facts about a kind that need no generator (nccl-tests'
// bus-bandwidth factor). The executor's metrics and chunk state use these;
// the generators and the rest of the facts (names, steps, layouts) are in
// engine/algorithms/collective.h, which includes this file.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/op_kinds.h"

namespace shardlab {

enum class CollectiveKind : std::uint8_t {
  kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce, kAllToAll,
};

enum class CollectiveAlgo : std::uint8_t {
  kRing,    // every kind but all-to-all
  kTree,    // all-reduce only: double binary tree, pipelined in chunks
  kDirect,  // all-to-all: every pair exchanges directly
  kNccl,    // every kind: one NCCL call per rank (a kCollective op); real GPUs only
};

/// One collective's parameters; the buffer layout they describe is at the
/// top of engine/algorithms/collective.h.
struct CollectiveParams {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  int ranks = 2;
  std::int64_t count = 0;        // elements per rank buffer
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;                  // broadcast and reduce
  std::vector<int> ring_order;   // ranks around the ring; empty = 0..ranks-1
  int tree_chunks = 0;           // pipeline depth of tree; 0 = automatic
  int collective_seq = 0;        // stamped on every op
};

/// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all-reduce, (n-1)/n for
/// all-gather, reduce-scatter and all-to-all, 1 for broadcast and reduce.
double BusBandwidthFactor(CollectiveKind kind, int ranks);

}  // namespace shardlab
