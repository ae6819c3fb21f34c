// What a collective is, as data: its kind, its algorithm, its parameters,
// and nccl-tests' bus-bandwidth factor. Everything else about a kind is its
// def in the collectives' table (collective_def.h; one file per kind in
// engine/algorithms/collectives/); engine/algorithms/collective.h is the
// front door to it (names, steps, layouts, the generators).
//
// A new collective: a value here, its file in engine/algorithms/collectives/
// (docs/architecture.md, "Adding a collective").
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
/// all-gather, reduce-scatter and all-to-all, 1 for broadcast and reduce
/// (the def's busbw_factor; 1 for a kind with no def).
double BusBandwidthFactor(CollectiveKind kind, int ranks);

}  // namespace shardlab
