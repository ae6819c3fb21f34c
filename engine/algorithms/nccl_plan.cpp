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
// by the ranks there. The call, its phase and that rule are the kind's def's
// (collectives/*.cpp).
#include "engine/algorithms/collective_internal.h"
#include "engine/core/error.h"

namespace shardlab {

LibraryCollective LibraryCallOf(CollectiveKind kind) {
  const CollectiveDef* def = FindCollective(kind);
  return def != nullptr ? def->library : LibraryCollective::kNone;
}

namespace detail {

Plan BuildNcclCollective(const CollectiveParams& params) {
  const int n = params.ranks;
  const CollectiveDef& def = CollectiveDefOf(params.kind);
  if (def.nccl_equal_chunks && params.count % n != 0)
    throw Error("size: NCCL's " + std::string(def.title) +
                " needs equal chunks: " + std::to_string(params.count) +
                " elements do not divide by " + std::to_string(n) + " ranks");
  PlanBuilder builder(CollectivePlanName(params), n);
  AddCollectiveBuffers(builder, params);
  const Bytes element = DTypeBytes(params.dtype);
  for (int r = 0; r < n; ++r) {
    Op op;
    op.kind = OpKind::kCollective;
    op.lane = Lane::kSend;
    op.library = def.library;
    op.reduce = def.reduces ? params.op : ReduceOp::kNone;
    op.rank = r;
    op.peer = def.root != RootRole::kNone ? params.root : -1;
    op.step = 0;
    op.collective_seq = params.collective_seq;
    op.src = BufferSlice{r, 0, params.count};
    op.dst = BufferSlice{def.separate_output() ? n + r : r, 0, params.count};
    // Bytes this rank sends, as the ring would (nccl-tests' bus bytes per rank).
    op.bytes = static_cast<Bytes>(BusBandwidthFactor(params.kind, n) *
                                  static_cast<double>(params.count * element));
    op.tags.phase = def.nccl_phase;
    builder.AddOp(op);
  }
  return builder.Finish();
}

}  // namespace detail
}  // namespace shardlab
