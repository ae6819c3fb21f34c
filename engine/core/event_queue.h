// EventQueue: a bounded single-producer / single-consumer ring of Events.
//
//   executor thread ──Push──► [ring of capacity 2^k] ──PopBatch──► UI thread
//
// The producer never blocks: when the ring is full the event is dropped and
// counted, and the views say how many were lost. Indices grow without bound
// (64-bit) and are masked, so full and empty are told apart without a spare
// slot. Acquire/release on the two indices is the whole protocol.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/core/event.h"

namespace shardlab {

class EventQueue {
 public:
  /// capacity is rounded up to a power of two (at least 2).
  explicit EventQueue(std::size_t capacity);

  /// Producer side. Returns false (and counts a drop) when full.
  bool Push(const Event& event);

  /// Consumer side: appends up to max_count events to out; returns how many.
  std::size_t PopBatch(std::vector<Event>& out, std::size_t max_count = SIZE_MAX);

  std::size_t capacity() const { return slots_.size(); }
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  std::size_t size_approx() const;

 private:
  std::vector<Event> slots_;
  std::size_t mask_;
  alignas(64) std::atomic<std::uint64_t> head_{0};  // next slot to write
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // next slot to read
  alignas(64) std::atomic<std::uint64_t> dropped_{0};
};

/// An EventSink that pushes into an EventQueue (for the app's views).
class QueueSink : public EventSink {
 public:
  explicit QueueSink(EventQueue& queue) : queue_(queue) {}
  void OnEvent(const Event& event) override { queue_.Push(event); }

 private:
  EventQueue& queue_;
};

}  // namespace shardlab
