#include "engine/core/event_queue.h"

namespace shardlab {

static std::size_t RoundUpPow2(std::size_t n) {
  std::size_t p = 2;
  while (p < n) p <<= 1;
  return p;
}

EventQueue::EventQueue(std::size_t capacity)
    : slots_(RoundUpPow2(capacity)), mask_(slots_.size() - 1) {}

bool EventQueue::Push(const Event& event) {
  const std::uint64_t head = head_.load(std::memory_order_relaxed);
  const std::uint64_t tail = tail_.load(std::memory_order_acquire);
  if (head - tail >= slots_.size()) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  slots_[head & mask_] = event;
  head_.store(head + 1, std::memory_order_release);
  return true;
}

std::size_t EventQueue::PopBatch(std::vector<Event>& out, std::size_t max_count) {
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  const std::uint64_t head = head_.load(std::memory_order_acquire);
  std::uint64_t n = head - tail;
  if (n > max_count) n = max_count;
  for (std::uint64_t i = 0; i < n; ++i) out.push_back(slots_[(tail + i) & mask_]);
  tail_.store(tail + n, std::memory_order_release);
  return static_cast<std::size_t>(n);
}

std::size_t EventQueue::size_approx() const {
  return static_cast<std::size_t>(head_.load(std::memory_order_acquire) -
                                  tail_.load(std::memory_order_acquire));
}

}  // namespace shardlab
