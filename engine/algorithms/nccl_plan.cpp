// The "nccl" algorithm: the whole collective as one library call per rank,
// so that a run can set NCCL's time beside the hand-written algorithms' on
// the same buffers and the same layout (collective.h):
//
//   rank 0:  [ ncclAllReduce(data) ]
//   rank 1:  [ ncclAllReduce(data) ]     one kCollective op per rank, step 0,
//   ...                                  all with the same collective_seq
//
// The cuda backend (and mpi with GPUs) calls NCCL; the simulator times each
// call with its model of NCCL (backends/sim/nccl_model.h: algorithm and
// protocol chosen by size) and computes the data on the host. NCCL's
// all-gather and reduce-scatter need equal chunks, so the count must divide
// by the ranks there.
#include "engine/algorithms/collective_internal.h"
#include "engine/core/error.h"

namespace shardlab {

LibraryCollective LibraryCallOf(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return LibraryCollective::kAllReduce;
    case CollectiveKind::kReduceScatter: return LibraryCollective::kReduceScatter;
    case CollectiveKind::kAllGather: return LibraryCollective::kAllGather;
    case CollectiveKind::kBroadcast: return LibraryCollective::kBroadcast;
    case CollectiveKind::kReduce: return LibraryCollective::kReduce;
    case CollectiveKind::kAllToAll: return LibraryCollective::kAllToAll;
  }
  return LibraryCollective::kNone;
}

namespace detail {

namespace {

Phase PhaseOf(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kReduceScatter: return Phase::kReduceScatter;
    case CollectiveKind::kAllGather: return Phase::kAllGather;
    case CollectiveKind::kBroadcast: return Phase::kBroadcast;
    case CollectiveKind::kReduce: return Phase::kReduce;
    case CollectiveKind::kAllToAll: return Phase::kAllToAll;
    case CollectiveKind::kAllReduce: return Phase::kNone;
  }
  return Phase::kNone;
}

}  // namespace

Plan BuildNcclCollective(const CollectiveParams& params) {
  const int n = params.ranks;
  if ((params.kind == CollectiveKind::kAllGather || params.kind == CollectiveKind::kReduceScatter) &&
      params.count % n != 0)
    throw Error("size: NCCL's " + std::string(CollectiveTitle(params.kind)) +
                " needs equal chunks: " + std::to_string(params.count) +
                " elements do not divide by " + std::to_string(n) + " ranks");
  PlanBuilder builder(CollectivePlanName(params), n);
  AddCollectiveBuffers(builder, params);
  const bool all_to_all = params.kind == CollectiveKind::kAllToAll;
  const Bytes element = DTypeBytes(params.dtype);
  for (int r = 0; r < n; ++r) {
    Op op;
    op.kind = OpKind::kCollective;
    op.lane = Lane::kSend;
    op.library = LibraryCallOf(params.kind);
    op.reduce = CollectiveReduces(params.kind) ? params.op : ReduceOp::kNone;
    op.rank = r;
    op.peer = CollectiveHasRoot(params.kind) ? params.root : -1;
    op.step = 0;
    op.collective_seq = params.collective_seq;
    op.src = BufferSlice{r, 0, params.count};
    op.dst = BufferSlice{all_to_all ? n + r : r, 0, params.count};
    // Bytes this rank sends, as the ring would (nccl-tests' bus bytes per rank).
    op.bytes = static_cast<Bytes>(BusBandwidthFactor(params.kind, n) *
                                  static_cast<double>(params.count * element));
    op.tags.phase = PhaseOf(params.kind);
    builder.AddOp(op);
  }
  return builder.Finish();
}

}  // namespace detail
}  // namespace shardlab
