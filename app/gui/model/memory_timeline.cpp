// MemoryTimeline: see memory_timeline.h.
#include "app/gui/model/memory_timeline.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace shardlab::gui {
namespace {

constexpr TimeNs kForever = std::numeric_limits<TimeNs>::infinity();

/// Calls `visit(buffer)` once for each transient buffer op `op` touches:
/// its slices and its kernels' operands, as the tracker counts them.
template <typename Visit>
void ForEachTransient(const Plan& plan, const Op& op, std::vector<BufferId>& seen, Visit visit) {
  seen.clear();
  auto touch = [&](const BufferSlice& s) {
    if (!s.valid() || s.buffer < 0 || static_cast<std::size_t>(s.buffer) >= plan.buffers.size()) return;
    if (!plan.buffers[static_cast<std::size_t>(s.buffer)].transient) return;
    if (std::find(seen.begin(), seen.end(), s.buffer) != seen.end()) return;
    seen.push_back(s.buffer);
    visit(s.buffer);
  };
  touch(op.src);
  touch(op.dst);
  for (std::int32_t k = 0; k < op.kernel_count; ++k) {
    const auto index = static_cast<std::size_t>(op.kernel_begin + k);
    if (index >= plan.kernels.size()) break;
    const KernelCall& call = plan.kernels[index];
    touch(call.a);
    touch(call.b);
    touch(call.c);
    touch(call.d);
  }
}

}  // namespace

void MemoryTimeline::Build(const Plan& plan, const TimelineStore& store) {
  const auto ranks = static_cast<std::size_t>(std::max(plan.num_ranks, 0));
  persistent_.assign(ranks, CategoryBytes{});
  transient_.clear();
  for (const Buffer& b : plan.buffers) {
    if (b.transient || b.rank < 0 || static_cast<std::size_t>(b.rank) >= ranks) continue;
    persistent_[static_cast<std::size_t>(b.rank)][static_cast<std::size_t>(b.category)] += b.size_bytes();
  }

  // Uses per transient buffer over the whole plan, then the recorded ones
  // with their earliest start and latest end.
  const std::size_t buffers = plan.buffers.size();
  std::vector<std::int32_t> uses(buffers, 0), recorded(buffers, 0);
  std::vector<TimeNs> first_start(buffers, kForever), last_end(buffers, -kForever);
  std::vector<BufferId> seen;
  for (const Op& op : plan.ops) ForEachTransient(plan, op, seen, [&](BufferId id) { ++uses[id]; });
  for (const TimelineRow& row : store.rows()) {
    for (const Event& e : row.events) {
      if (e.op < 0 || static_cast<std::size_t>(e.op) >= plan.ops.size()) continue;
      ForEachTransient(plan, plan.ops[static_cast<std::size_t>(e.op)], seen, [&](BufferId id) {
        ++recorded[id];
        first_start[id] = std::min(first_start[id], e.start_ns);
        last_end[id] = std::max(last_end[id], e.end_ns);
      });
    }
  }
  for (std::size_t id = 0; id < buffers; ++id) {
    const Buffer& b = plan.buffers[id];
    if (recorded[id] == 0 || b.rank < 0 || static_cast<std::size_t>(b.rank) >= ranks) continue;
    Lifetime life;
    life.buffer = static_cast<BufferId>(id);
    life.rank = b.rank;
    life.category = static_cast<int>(b.category);
    life.bytes = b.size_bytes();
    life.start_ns = first_start[id];
    life.end_ns = recorded[id] < uses[id] ? kForever : last_end[id];
    transient_.push_back(life);
  }
}

const CategoryBytes& MemoryTimeline::persistent(int rank) const {
  static const CategoryBytes kNone{};
  if (rank < 0 || rank >= ranks()) return kNone;
  return persistent_[static_cast<std::size_t>(rank)];
}

CategoryBytes MemoryTimeline::LiveAt(int rank, TimeNs t_ns) const {
  CategoryBytes live = persistent(rank);
  for (const Lifetime& life : transient_) {
    if (life.rank == rank && life.start_ns <= t_ns && t_ns < life.end_ns) {
      live[static_cast<std::size_t>(life.category)] += life.bytes;
    }
  }
  return live;
}

std::vector<BufferId> MemoryTimeline::TransientLiveAt(int rank, TimeNs t_ns) const {
  std::vector<BufferId> live;
  for (const Lifetime& life : transient_) {
    if (life.rank == rank && life.start_ns <= t_ns && t_ns < life.end_ns) live.push_back(life.buffer);
  }
  return live;
}

template <typename Take>
Bytes MemoryTimeline::PeakOf(int rank, Bytes base, Take take) const {
  // Sweep the lifetimes' ends and starts in time order; at one instant the
  // frees go first, as [start, end) says.
  std::vector<std::pair<TimeNs, Bytes>> changes;
  for (const Lifetime& life : transient_) {
    if (life.rank != rank || !take(life)) continue;
    changes.emplace_back(life.start_ns, life.bytes);
    if (life.end_ns < kForever) changes.emplace_back(life.end_ns, -life.bytes);
  }
  std::sort(changes.begin(), changes.end());  // at equal times the negative (free) first
  Bytes now = base, peak = base;
  for (const auto& [t, delta] : changes) {
    now += delta;
    peak = std::max(peak, now);
  }
  return peak;
}

CategoryBytes MemoryTimeline::Peak(int rank) const {
  CategoryBytes peak = persistent(rank);
  for (int c = 0; c < kMemoryCategoryCount; ++c) {
    peak[static_cast<std::size_t>(c)] =
        PeakOf(rank, peak[static_cast<std::size_t>(c)], [c](const Lifetime& life) { return life.category == c; });
  }
  return peak;
}

Bytes MemoryTimeline::PeakTotal(int rank) const {
  Bytes base = 0;
  for (const Bytes b : persistent(rank)) base += b;
  return PeakOf(rank, base, [](const Lifetime&) { return true; });
}

}  // namespace shardlab::gui
