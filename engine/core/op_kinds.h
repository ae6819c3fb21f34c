// The small enums shared by Plans and Events.
#pragma once

#include <cstdint>

namespace shardlab {

/// A lane is one in-order queue of work on a rank: it becomes a CUDA stream
/// on a GPU. Ops on the same (rank, lane) run in the order the Plan lists
/// them; ops on different lanes may overlap.
enum class Lane : std::uint8_t { kCompute, kSend, kRecv, kCopy };
inline constexpr int kLaneCount = 4;

enum class OpKind : std::uint8_t {
  kCompute,     // FLOPs and memory traffic on one rank (no data semantics yet)
  kSend,        // half of a transfer: reads src on this rank
  kRecv,        // other half: writes (or reduces into) dst on this rank
  kReduce,      // dst = dst (op) src, both on this rank
  kCopy,        // dst = src, both on this rank
  kCollective,  // a whole library collective (NCCL) as one op
};

/// How a Recv or Reduce combines incoming data with what dst holds.
/// kNone means overwrite. Sum is fused into the receive, as NCCL's
/// kernels reduce while they receive.
enum class ReduceOp : std::uint8_t { kNone, kSum, kMax, kMin };

enum class DType : std::uint8_t { kF32, kF16, kBF16 };

/// Which library call a kCollective op makes (in place, on its src/dst
/// slices; the root of broadcast and reduce is the op's `peer`).
enum class LibraryCollective : std::uint8_t {
  kNone, kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce, kAllToAll,
};

const char* LaneName(Lane lane);
const char* OpKindName(OpKind kind);
const char* ReduceOpName(ReduceOp op);
const char* DTypeName(DType dtype);
int DTypeBytes(DType dtype);

}  // namespace shardlab
