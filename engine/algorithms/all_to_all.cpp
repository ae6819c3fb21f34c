// Direct all-to-all: every pair of ranks exchanges one block.
//
// Each rank's "send" and "recv" buffer is cut into n blocks of b = count/n
// elements (as nccl-tests, the last count % n elements take no part). Block
// j of rank i's send lands in block i of rank j's recv.
//
//   step s: rank i sends block (i+s+1)%n to rank (i+s+1)%n
//
//   n = 4     rank 0    rank 1    rank 2    rank 3
//   step 0    ->1       ->2       ->3       ->0       (+ local copy of own block)
//   step 1    ->2       ->3       ->0       ->1
//   step 2    ->3       ->0       ->1       ->2
//
// The shift makes every step a permutation: each rank sends one block and
// receives one, so no rank's links are oversubscribed and the send and recv
// lanes never wait on each other. The block a rank keeps is a local copy
// (Lane::kCopy) in step 0. Steps: max(n-1, 1); each rank sends
// (n-1)/n * S (bus factor (n-1)/n, as nccl-tests).
#include <vector>

#include "engine/algorithms/collective_internal.h"

namespace shardlab::detail {

Plan BuildDirectAllToAll(const CollectiveParams& params) {
  PlanBuilder builder(CollectivePlanName(params), params.ranks);
  AddCollectiveBuffers(builder, params);
  const int n = params.ranks;
  const std::int64_t block = AllToAllBlockCount(params.count, n);
  const Bytes block_bytes = block * DTypeBytes(params.dtype);
  auto send_buffer = [](int rank) { return static_cast<BufferId>(rank); };
  auto recv_buffer = [n](int rank) { return static_cast<BufferId>(n + rank); };

  const std::size_t transfers = static_cast<std::size_t>(n) * (n - 1);
  builder.Reserve(2 * transfers + n, 0);

  for (int i = 0; i < n; ++i) {
    Op copy;
    copy.kind = OpKind::kCopy;
    copy.lane = Lane::kCopy;
    copy.rank = i;
    copy.step = 0;
    copy.collective_seq = params.collective_seq;
    copy.src = BufferSlice{send_buffer(i), i * block, block};
    copy.dst = BufferSlice{recv_buffer(i), i * block, block};
    copy.bytes = block_bytes;
    copy.tags = OpTags{Phase::kAllToAll, i};
    builder.AddOp(copy);
  }

  const std::vector<OpId> no_deps;
  for (int s = 0; s < n - 1; ++s) {
    for (int i = 0; i < n; ++i) {
      const int j = (i + s + 1) % n;
      builder.AddTransfer(i, j, BufferSlice{send_buffer(i), j * block, block},
                          BufferSlice{recv_buffer(j), i * block, block}, ReduceOp::kNone, s,
                          OpTags{Phase::kAllToAll, j}, no_deps, no_deps, params.collective_seq);
    }
  }
  return builder.Finish();
}

}  // namespace shardlab::detail
