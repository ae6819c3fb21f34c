#include "engine/run/memory_tracker.h"

#include <algorithm>

namespace shardlab {

Bytes RankMemory::persistent_total() const {
  Bytes total = 0;
  for (const Bytes b : persistent) total += b;
  return total;
}

void MemoryTracker::Load(const Plan& plan) {
  plan_ = &plan;
  const std::size_t buffers = plan.buffers.size();
  uses_.assign(buffers, 0);
  op_begin_.clear();
  op_buffers_.clear();
  // No transient buffer (collectives, most scenarios): nothing to track per
  // op, and OnOpStart/OnOpEnd return at once on the empty op_begin_.
  const bool any_transient = std::any_of(plan.buffers.begin(), plan.buffers.end(),
                                         [](const Buffer& b) { return b.transient; });
  if (!any_transient) {
    Reset();
    return;
  }
  op_begin_.assign(plan.ops.size() + 1, 0);
  for (std::size_t id = 0; id < plan.ops.size(); ++id) {
    op_begin_[id] = static_cast<std::uint32_t>(op_buffers_.size());
    const Op& op = plan.ops[id];
    auto touch = [&](const BufferSlice& s) {
      if (!s.valid() || s.buffer >= static_cast<BufferId>(buffers)) return;
      if (!plan.buffers[s.buffer].transient) return;
      const auto first = op_buffers_.begin() + op_begin_[id];
      if (std::find(first, op_buffers_.end(), s.buffer) != op_buffers_.end()) return;
      op_buffers_.push_back(s.buffer);
      ++uses_[s.buffer];
    };
    touch(op.src);
    touch(op.dst);
    for (std::int32_t k = 0; k < op.kernel_count; ++k) {
      const KernelCall& call = plan.kernels[op.kernel_begin + k];
      touch(call.a);
      touch(call.b);
      touch(call.c);
      touch(call.d);
    }
  }
  op_begin_[plan.ops.size()] = static_cast<std::uint32_t>(op_buffers_.size());
  Reset();
}

void MemoryTracker::Reset() {
  const Plan& plan = *plan_;
  const std::size_t ranks = static_cast<std::size_t>(std::max(plan.num_ranks, 0));
  usage_.ranks.assign(ranks, RankMemory{});
  for (auto& per_rank : current_) per_rank.assign(ranks, 0);
  left_ = uses_;
  live_.assign(plan.buffers.size(), 0);
  for (BufferId id = 0; id < static_cast<BufferId>(plan.buffers.size()); ++id) {
    const Buffer& b = plan.buffers[id];
    if (b.transient || b.rank < 0 || static_cast<std::size_t>(b.rank) >= ranks) continue;
    usage_.ranks[b.rank].persistent[static_cast<int>(b.category)] += b.size_bytes();
    Change(id, true);
  }
}

void MemoryTracker::Change(BufferId id, bool allocate) {
  const Buffer& b = plan_->buffers[id];
  const int c = static_cast<int>(b.category);
  RankMemory& rank = usage_.ranks[b.rank];
  const Bytes delta = allocate ? b.size_bytes() : -b.size_bytes();
  live_[id] = allocate ? 1 : 0;
  current_[c][b.rank] += delta;
  rank.current_total += delta;
  rank.peak[c] = std::max(rank.peak[c], current_[c][b.rank]);
  rank.peak_total = std::max(rank.peak_total, rank.current_total);
}

void MemoryTracker::OnOpStart(OpId id) {
  if (op_begin_.empty()) return;
  for (std::uint32_t i = op_begin_[id]; i < op_begin_[id + 1]; ++i)
    if (!live_[op_buffers_[i]]) Change(op_buffers_[i], true);
}

void MemoryTracker::OnOpEnd(OpId id) {
  if (op_begin_.empty()) return;
  for (std::uint32_t i = op_begin_[id]; i < op_begin_[id + 1]; ++i) {
    const BufferId b = op_buffers_[i];
    if (--left_[b] == 0 && live_[b]) Change(b, false);
  }
}

}  // namespace shardlab
