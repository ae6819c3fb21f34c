// TimelineStore: the events of one run, as the views read them.
//
//   EventQueue ──drain each frame──► TimelineStore ──► Gantt, topology, buffer views
//
// One time-sorted vector per (rank, lane) row, as Tracy keeps one per
// thread, so a view finds what is visible with a binary search. Events of a
// lane never overlap (a lane runs one op at a time), so sorting by start
// also sorts by end. Lives on the UI thread; no locking.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/event.h"

namespace shardlab::gui {

struct TimelineRow {
  int rank = 0;
  Lane lane = Lane::kCompute;
  std::vector<Event> events;  // sorted by start_ns
};

class TimelineStore {
 public:
  /// Forgets everything; `ranks` rows per lane are made on demand.
  void Clear();
  /// Adds events in any order (they are inserted in start order per row).
  void Add(std::span<const Event> events);

  /// Rows that hold at least one event, ordered by rank, then lane
  /// (compute, send, recv, copy).
  const std::vector<TimelineRow>& rows() const { return rows_; }
  std::size_t event_count() const { return event_count_; }
  TimeNs end_ns() const { return end_ns_; }   // latest end of any event
  /// Events whose step == `step` end by this time (max end of the step's
  /// events, and never before an earlier step's end); -1 if none yet.
  TimeNs StepEndNs(int step) const;
  int steps_seen() const { return static_cast<int>(step_end_ns_.size()); }

 private:
  std::vector<TimelineRow> rows_;
  std::vector<TimeNs> step_end_ns_;      // as StepEndNs returns it
  std::vector<TimeNs> step_max_end_ns_;  // latest end of each step's own events; -1: none
  std::size_t event_count_ = 0;
  TimeNs end_ns_ = 0;
};

}  // namespace shardlab::gui
