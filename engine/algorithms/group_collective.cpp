// Group collectives: ring.cpp's schedule, run on slices of a larger plan.
//
// Positions are member indices: member i sends to member i+1 (mod n), and
// chunk k is the k-th of n parts of each slice (not of the buffer), so
// after a reduce-scatter member i holds the sum of chunk i of everyone's
// slice, and an all-gather starts from member i's chunk i.
//
// Ordering with the rest of the plan. Lanes run in plan order (op_kinds.h),
// so on member i:
//   - its first send and first recv wait for after[i]: nothing reads the
//     slice before the work that writes it is done, and nothing writes it
//     while that work may still read it;
//   - every later send waits for the recv that produced its chunk (as in
//     ring.cpp), every later recv follows the first one on the recv lane;
//   - the last send and the last recv are therefore after every op of the
//     collective on member i: they are what later work must wait for.
#include "engine/algorithms/group_collective.h"

#include <string>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/collective_internal.h"
#include "engine/core/error.h"

namespace shardlab {
namespace {

void Check(const PlanBuilder& builder, const GroupCollective& c) {
  const std::size_t n = c.ranks.size();
  if (n == 0) throw Error("group collective: the group has no ranks");
  if (c.slices.size() != n || c.after.size() != n)
    throw Error("group collective: " + std::to_string(n) + " ranks but " +
                std::to_string(c.slices.size()) + " slices and " + std::to_string(c.after.size()) +
                " dependency lists (one of each per member)");
  const int num_ranks = builder.plan().num_ranks;
  const std::int64_t count = c.slices[0].count;
  for (std::size_t i = 0; i < n; ++i) {
    const int rank = c.ranks[i];
    if (rank < 0 || rank >= num_ranks)
      throw Error("group collective: rank " + std::to_string(rank) + " is outside the plan's " +
                  std::to_string(num_ranks) + " ranks");
    for (std::size_t j = 0; j < i; ++j)
      if (c.ranks[j] == rank)
        throw Error("group collective: rank " + std::to_string(rank) + " is in the group twice");
    const BufferSlice& s = c.slices[i];
    if (s.buffer < 0 || s.buffer >= static_cast<BufferId>(builder.plan().buffers.size()))
      throw Error("group collective: member " + std::to_string(i) + "'s slice names no buffer");
    const Buffer& b = builder.buffer(s.buffer);
    if (b.rank != rank)
      throw Error("group collective: member " + std::to_string(i) + " is rank " +
                  std::to_string(rank) + " but its slice is in '" + b.name + "' on rank " +
                  std::to_string(b.rank));
    if (s.offset < 0 || s.count < 0 || s.offset + s.count > b.count)
      throw Error("group collective: member " + std::to_string(i) + "'s slice [" +
                  std::to_string(s.offset) + ", " + std::to_string(s.offset + s.count) +
                  ") is outside '" + b.name + "' of " + std::to_string(b.count) + " elements");
    if (s.count != count)
      throw Error("group collective: slices differ in length (" + std::to_string(count) +
                  " and " + std::to_string(s.count) + " elements)");
  }
}

BufferSlice ChunkOfSlice(const BufferSlice& slice, int parts, int k) {
  return BufferSlice{slice.buffer, slice.offset + ChunkBegin(slice.count, parts, k),
                     ChunkCount(slice.count, parts, k)};
}

}  // namespace

GroupCollectiveOps AppendGroupCollective(PlanBuilder& builder, const GroupCollective& c) {
  Check(builder, c);
  const int n = static_cast<int>(c.ranks.size());
  GroupCollectiveOps out;
  out.done = c.after;
  if (n == 1) return out;

  const bool reduce_scatter = c.kind != GroupCollectiveKind::kAllGather;
  const bool all_gather = c.kind != GroupCollectiveKind::kReduceScatter;
  const int passes = (reduce_scatter ? 1 : 0) + (all_gather ? 1 : 0);
  const std::size_t transfers = static_cast<std::size_t>(passes) * n * (n - 1);
  builder.Reserve(builder.op_count() + 2 * transfers, builder.plan().deps.size() + 2 * transfers);

  // produced[i]: the recv that wrote the chunk member i sends next.
  std::vector<OpId> produced(static_cast<std::size_t>(n), kNoOp);
  std::vector<OpId> produced_next(static_cast<std::size_t>(n), kNoOp);
  std::vector<OpId> last_send(static_cast<std::size_t>(n), kNoOp);
  std::vector<OpId> last_recv(static_cast<std::size_t>(n), kNoOp);
  std::vector<OpId> send_deps, recv_deps;

  int step = c.first_step;
  bool first = true;
  auto pass = [&](Phase phase, ReduceOp reduce, int shift) {
    for (int s = 0; s < n - 1; ++s, ++step) {
      for (int i = 0; i < n; ++i) {
        const int next = i + 1 == n ? 0 : i + 1;
        const int chunk = detail::Mod(i - shift - s, n);
        send_deps.clear();
        recv_deps.clear();
        if (first) {
          send_deps = c.after[static_cast<std::size_t>(i)];
          recv_deps = c.after[static_cast<std::size_t>(next)];
        } else if (produced[i] != kNoOp) {
          send_deps.push_back(produced[i]);
        }
        OpTags tags = c.tags;
        if (tags.phase == Phase::kNone) tags.phase = phase;
        tags.chunk = chunk;
        const auto transfer = builder.AddTransfer(
            c.ranks[i], c.ranks[next], ChunkOfSlice(c.slices[i], n, chunk),
            ChunkOfSlice(c.slices[next], n, chunk), reduce, step, tags, send_deps, recv_deps,
            c.collective_seq);
        produced_next[next] = transfer.recv;
        last_send[i] = transfer.send;
        last_recv[next] = transfer.recv;
      }
      produced.swap(produced_next);
      first = false;
    }
  };
  if (reduce_scatter) pass(Phase::kReduceScatter, c.op, 1);
  if (all_gather) pass(Phase::kAllGather, ReduceOp::kNone, 0);

  out.steps = passes * (n - 1);
  for (int i = 0; i < n; ++i) out.done[i] = {last_send[i], last_recv[i]};
  return out;
}

}  // namespace shardlab
