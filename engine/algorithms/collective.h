// Collectives as Plans: one entry point, a parameter struct, and the facts
// every front end needs (bus-bandwidth factor, buffer layout, reference).
//
// Buffer layout (in place, as NCCL's in-place mode and nccl-tests' "size"):
//   all-reduce, broadcast, reduce: every rank has "data" of `count` elements.
//   all-gather:     "data" of `count`; rank r's input is chunk r of it.
//   reduce-scatter: "data" of `count`; rank r's output is chunk r of it.
//   all-to-all:     "send" and "recv" of `count`; chunk j of rank i's send
//                   lands in chunk i of rank j's recv. Here every chunk is
//                   count/n elements, [j*(count/n), (j+1)*(count/n)), so
//                   that the pieces fit; as in nccl-tests, the last
//                   count % n elements take no part (recv's stay zero).
// Chunk c of a buffer of `count` elements split n ways is (all other kinds)
//   [c*count/n, (c+1)*count/n)  (sizes differ by at most one element).
//
// The algorithms, their step structure and costs are described at the top
// of ring.cpp, tree.cpp (with double_binary_tree.h) and all_to_all.cpp;
// ExpectedSteps lists the step counts.
//
// Every fact below is read from the collective's def in the collectives'
// table (engine/plan/collective_def.h), one file per collective in
// engine/algorithms/collectives/: these functions are its front door.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/plan/collective_def.h"
#include "engine/plan/collective_kind.h"
#include "engine/plan/plan.h"

namespace shardlab {

// CollectiveKind, CollectiveAlgo, CollectiveParams and BusBandwidthFactor
// are in engine/plan/collective_kind.h (the executor's metrics use them),
// the table in engine/plan/collective_def.h.

const char* CollectiveKindName(CollectiveKind kind);  // "allreduce", ... (CLI spelling)
const char* CollectiveAlgoName(CollectiveAlgo algo);  // "ring", "tree", "direct"
/// Parse the CLI spellings; throw shardlab::Error listing the valid ones.
CollectiveKind ParseCollectiveKind(const std::string& text);
CollectiveAlgo ParseCollectiveAlgo(const std::string& text);
/// The algorithm used when none is asked for (ring; direct for all-to-all).
CollectiveAlgo DefaultAlgo(CollectiveKind kind);
/// "all-reduce", "reduce-scatter", ... (the words used in text, not the CLI spelling).
const char* CollectiveTitle(CollectiveKind kind);
/// The library call (NCCL's) that performs `kind` in one op per rank.
LibraryCollective LibraryCallOf(CollectiveKind kind);
/// Whether a kind has an algorithm: ring for all but all-to-all, tree for
/// all-reduce, direct for all-to-all; nccl for every kind with a library call.
bool CollectiveHasAlgo(CollectiveKind kind, CollectiveAlgo algo);
/// The kind's hand-written algorithms in a fixed order (ring, tree, direct),
/// and as text ("ring, tree"); kNccl, which every kind has, is not listed.
std::vector<CollectiveAlgo> CollectiveAlgosFor(CollectiveKind kind);
std::string CollectiveAlgoList(CollectiveKind kind);
/// Broadcast and reduce have a root; all-reduce, reduce-scatter and reduce a reduction.
bool CollectiveHasRoot(CollectiveKind kind);
bool CollectiveReduces(CollectiveKind kind);

/// Throws shardlab::Error on impossible parameters (ranks < 1, count < 0,
/// an algorithm the kind does not have, a root out of range, a ring order
/// that is not a permutation).
void CheckCollectiveParams(const CollectiveParams& params);

/// The Plan of one collective. Buffers are created in rank order, so
/// buffer id r is rank r's "data" (or "send"; "recv" is ranks + r).
Plan BuildCollective(const CollectiveParams& params);

/// Number of logical steps the algorithm takes, = the built Plan's
/// num_steps: ring all-reduce 2(n-1); ring reduce-scatter and all-gather
/// n-1; ring broadcast and reduce 2(n-1) (n pipeline pieces along n-1
/// hops); tree all-reduce K + 2*floor(log2 n) - 1 for K pieces; direct
/// all-to-all max(n-1, 1). One rank: 0 (nothing moves), all-to-all 1.
/// Throws like CheckCollectiveParams.
int ExpectedSteps(const CollectiveParams& params);

/// Bytes of one rank's buffer as nccl-tests reports "size".
Bytes CollectiveSizeBytes(const CollectiveParams& params);

/// Offset and length of chunk c of `count` elements split n ways.
std::int64_t ChunkBegin(std::int64_t count, int n, int c);
std::int64_t ChunkCount(std::int64_t count, int n, int c);

}  // namespace shardlab
