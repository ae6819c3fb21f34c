// Ring collectives: all-reduce, reduce-scatter, all-gather, and the
// pipelined chains for broadcast and reduce.
//
// The ring. Position p holds rank R[p] (R = params.ring_order, or 0..n-1)
// and always sends to position p+1. The buffer is cut into n chunks and
// ring chunk k means buffer chunk R[k], so that whatever the order, rank r
// ends a reduce-scatter owning buffer chunk r.
//
//   reduce-scatter, step s:  position p sends ring chunk p-1-s; p+1 adds it
//   all-gather,     step s:  position p sends ring chunk p-s;   p+1 stores it
//
//   n = 4, identity order; cK = chunk K:
//
//   step 0 (RS)   r0 --c3--> r1   r1 --c0--> r2   r2 --c1--> r3   r3 --c2--> r0
//   step 1 (RS)   r0 --c2--> r1   r1 --c3--> r2   r2 --c0--> r3   r3 --c1--> r0
//   step 2 (RS)   r0 --c1--> r1   r1 --c2--> r2   r2 --c3--> r3   r3 --c0--> r0
//                 now rank r holds the full sum of chunk r
//   step 3..5 (AG) the same rotation, overwriting: rank r's chunk r goes round
//
// Costs (n ranks, S bytes per rank, link bandwidth B, per-hop latency a):
//   all-reduce       2(n-1) steps, each rank sends 2(n-1)/n * S
//                    time ~ 2(n-1)*a + 2(n-1)/n * S/B   -> bandwidth-optimal,
//                    but latency grows like n (tree.cpp: like log2 n)
//   reduce-scatter   n-1 steps, (n-1)/n * S per rank
//   all-gather       n-1 steps, (n-1)/n * S per rank
//
// Dependencies are per chunk, not per step: the send of a chunk waits only
// for the recv that produced that chunk on the same rank one step earlier,
// so on hardware step s+1 of one chunk overlaps step s of the others, as
// NCCL's ring kernels do. A recv waits for nothing but its lane: every
// chunk a recv overwrites has already been forwarded, which the chain of
// transfers around the ring guarantees.
//
// Broadcast and reduce run as a chain along the ring (broadcast: from the
// root onward; reduce: from the root's successor round to the root), with
// the buffer cut into n pieces that follow each other down the chain:
//
//   hop:      0      1      2            step t: piece t-h crosses hop h
//   step 0    p0
//   step 1    p1     p0                   n pieces over n-1 hops take
//   step 2    p2     p1     p0            n + (n-1) - 1 = 2(n-1) steps
//   step 3    p3     p2     p1
//   ...
//
// Every rank but the chain's last sends S bytes (bus factor 1, as
// nccl-tests). Each step moves one piece of S/n per hop, so the time is
// about 2(n-1) * (a + S/(nB)) ~ 2S/B: with only n pieces, filling and
// draining the pipeline costs as much as the streaming itself. NCCL cuts
// the buffer into many more pieces than ranks, approaching S/B; here the
// piece count is n so that each click of Step shows the pipeline advance.
//
// Invariants the tests check: results equal the single-buffer reference for
// any count (chunks of unequal or zero length included) and ring order; step
// counts as above; exact per-rank bytes when n divides the count; the peers
// of every send follow the ring order.
#include <vector>

#include "engine/algorithms/collective_internal.h"

namespace shardlab::detail {

namespace {

BufferSlice ChunkOf(BufferId buffer, std::int64_t count, int parts, int c) {
  return BufferSlice{buffer, ChunkBegin(count, parts, c), ChunkCount(count, parts, c)};
}

// Appends the reduce-scatter and/or all-gather passes of a ring. Buffer id
// r is rank r's "data".
void AddRingPasses(PlanBuilder& builder, const CollectiveParams& params,
                   const std::vector<int>& rank_at, bool reduce_scatter, bool all_gather) {
  const int n = params.ranks;
  const int passes = (reduce_scatter ? 1 : 0) + (all_gather ? 1 : 0);
  const std::size_t transfers = static_cast<std::size_t>(passes) * n * (n - 1);
  builder.Reserve(2 * transfers, transfers);

  // produced[p]: the recv that wrote the chunk position p sends next.
  std::vector<OpId> produced(static_cast<std::size_t>(n), kNoOp);
  std::vector<OpId> produced_next(static_cast<std::size_t>(n), kNoOp);
  std::vector<OpId> send_deps;
  send_deps.reserve(1);
  const std::vector<OpId> no_deps;

  int step = 0;
  auto pass = [&](Phase phase, ReduceOp reduce, int shift) {
    for (int s = 0; s < n - 1; ++s, ++step) {
      for (int pos = 0; pos < n; ++pos) {
        const int next = pos + 1 == n ? 0 : pos + 1;
        const int chunk = rank_at[Mod(pos - shift - s, n)];
        const int from = rank_at[pos];
        const int to = rank_at[next];
        send_deps.clear();
        if (produced[pos] != kNoOp) send_deps.push_back(produced[pos]);
        const BufferSlice src = ChunkOf(from, params.count, n, chunk);
        const BufferSlice dst = ChunkOf(to, params.count, n, chunk);
        const auto transfer =
            builder.AddTransfer(from, to, src, dst, reduce, step, OpTags{phase, chunk},
                                send_deps, no_deps, params.collective_seq);
        produced_next[next] = transfer.recv;
      }
      produced.swap(produced_next);
    }
  };
  if (reduce_scatter) pass(Phase::kReduceScatter, params.op, 1);
  if (all_gather) pass(Phase::kAllGather, ReduceOp::kNone, 0);
}

// Appends a pipelined chain: n pieces flow along chain[0] -> chain[1] ->
// ... -> chain[n-1]; piece k crosses hop h in step k+h.
void AddChain(PlanBuilder& builder, const CollectiveParams& params, const std::vector<int>& chain,
              Phase phase, ReduceOp reduce) {
  const int n = params.ranks;
  const int hops = n - 1;
  const int pieces = n;
  const std::size_t transfers = static_cast<std::size_t>(hops) * pieces;
  builder.Reserve(2 * transfers, transfers);

  // arrived[k]: the recv that brought piece k to the rank that sends it next.
  std::vector<OpId> arrived(static_cast<std::size_t>(pieces), kNoOp);
  std::vector<OpId> send_deps;
  send_deps.reserve(1);
  const std::vector<OpId> no_deps;

  const int steps = pieces + hops - 1;
  for (int step = 0; step < steps && hops > 0; ++step) {
    for (int h = 0; h < hops; ++h) {
      const int k = step - h;
      if (k < 0 || k >= pieces) continue;
      const int from = chain[h];
      const int to = chain[h + 1];
      send_deps.clear();
      if (arrived[k] != kNoOp) send_deps.push_back(arrived[k]);
      const auto transfer = builder.AddTransfer(
          from, to, ChunkOf(from, params.count, pieces, k), ChunkOf(to, params.count, pieces, k),
          reduce, step, OpTags{phase, k}, send_deps, no_deps, params.collective_seq);
      arrived[k] = transfer.recv;
    }
  }
}

int PositionOf(const std::vector<int>& rank_at, int rank) {
  for (std::size_t p = 0; p < rank_at.size(); ++p)
    if (rank_at[p] == rank) return static_cast<int>(p);
  return 0;
}

Plan BuildRing(const CollectiveParams& params, bool reduce_scatter, bool all_gather) {
  PlanBuilder builder(CollectivePlanName(params), params.ranks);
  AddCollectiveBuffers(builder, params);
  AddRingPasses(builder, params, RingRanks(params), reduce_scatter, all_gather);
  return builder.Finish();
}

}  // namespace

Plan BuildRingAllReduce(const CollectiveParams& params) { return BuildRing(params, true, true); }
Plan BuildRingReduceScatter(const CollectiveParams& params) { return BuildRing(params, true, false); }
Plan BuildRingAllGather(const CollectiveParams& params) { return BuildRing(params, false, true); }

Plan BuildRingBroadcast(const CollectiveParams& params) {
  PlanBuilder builder(CollectivePlanName(params), params.ranks);
  AddCollectiveBuffers(builder, params);
  const std::vector<int> rank_at = RingRanks(params);
  const int n = params.ranks;
  const int root_pos = PositionOf(rank_at, params.root);
  std::vector<int> chain(static_cast<std::size_t>(n));
  for (int h = 0; h < n; ++h) chain[h] = rank_at[(root_pos + h) % n];  // root first
  AddChain(builder, params, chain, Phase::kBroadcast, ReduceOp::kNone);
  return builder.Finish();
}

Plan BuildRingReduce(const CollectiveParams& params) {
  PlanBuilder builder(CollectivePlanName(params), params.ranks);
  AddCollectiveBuffers(builder, params);
  const std::vector<int> rank_at = RingRanks(params);
  const int n = params.ranks;
  const int root_pos = PositionOf(rank_at, params.root);
  std::vector<int> chain(static_cast<std::size_t>(n));
  for (int h = 0; h < n; ++h) chain[h] = rank_at[(root_pos + 1 + h) % n];  // root last
  AddChain(builder, params, chain, Phase::kReduce, params.op);
  return builder.Finish();
}

}  // namespace shardlab::detail
