// EventQueue: the simulator's pending events, earliest first.
//
// Events are ordered by (time, seq): seq is the order they were pushed, so
// two events at one time come out in push order and a run is deterministic.
// That order is total (no two events share a seq), so any correct heap pops
// the same sequence; this one is built for the simulator's loop:
//
//   - the loop takes the earliest event (Take) and its handler usually
//     pushes one or more new ones: the first push replaces the taken event
//     at the root (one sift instead of a pop and a push); Settle() ends the
//     handler and pops the taken event if nothing replaced it;
//   - entries are 24 bytes (the kind rides in seq's low bits), and the
//     comparison does not branch on ties of time, which are common.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/units.h"

namespace shardlab {

enum class SimEventKind : std::uint8_t { kOpEnd, kLatencyDone, kFlowEnd, kIssued };

struct SimEvent {
  TimeNs time;
  std::uint64_t seq;     // ties broken by insertion order: deterministic runs
  SimEventKind kind;
  std::int32_t id;       // op id (kOpEnd, kLatencyDone: the send) or flow id
  std::uint32_t version; // kFlowEnd: valid only if it matches the flow's
};

class EventQueue {
 public:
  /// Pending events (after Settle(): the taken one no longer counts).
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void clear() {
    heap_.clear();
    taken_ = false;
  }

  /// `seq` must be below 2^62 and differ from every other pending event's.
  void Push(const SimEvent& e) {
    const Entry entry{e.time, (e.seq << 2) | static_cast<std::uint64_t>(e.kind), e.id, e.version};
    if (taken_) {  // the taken event's slot is free: sift the new one down from the root
      taken_ = false;
      SiftDown(entry);
      return;
    }
    heap_.push_back(entry);
    SiftUp(heap_.size() - 1, entry);
  }

  /// The earliest event; it leaves the queue by the next Push or Settle().
  /// Call Settle() before the next Take().
  SimEvent Take() {
    taken_ = true;
    const Entry& e = heap_.front();
    return SimEvent{e.time, e.key >> 2, static_cast<SimEventKind>(e.key & 3), e.id, e.version};
  }

  /// Ends the handling of the taken event: removes it if no Push replaced it.
  void Settle() {
    if (!taken_) return;
    taken_ = false;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(last);
  }

 private:
  struct Entry {
    TimeNs time;
    std::uint64_t key;  // seq << 2 | kind
    std::int32_t id;
    std::uint32_t version;
  };
  static_assert(sizeof(Entry) == 24);
  static bool Before(const Entry& a, const Entry& b) {
    return (a.time < b.time) | ((a.time == b.time) & (a.key < b.key));
  }

  void SiftUp(std::size_t i, const Entry& e) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!Before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Places `e` in the hole at the root: the hole goes down to a leaf along
  // the earlier children, then `e` rises from there (it usually belongs
  // near the bottom, so this compares less than stopping on the way down).
  void SiftDown(const Entry& e) {
    const std::size_t n = heap_.size();
    std::size_t hole = 0;
    std::size_t child = 1;
    while (child + 1 < n) {
      if (Before(heap_[child + 1], heap_[child])) ++child;
      heap_[hole] = heap_[child];
      hole = child;
      child = 2 * hole + 1;
    }
    if (child < n) {
      heap_[hole] = heap_[child];
      hole = child;
    }
    SiftUp(hole, e);
  }

  std::vector<Entry> heap_;
  bool taken_ = false;  // heap_[0] is the taken event, to be replaced or popped
};

}  // namespace shardlab
