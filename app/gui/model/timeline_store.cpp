#include "app/gui/model/timeline_store.h"

#include <algorithm>

namespace shardlab::gui {
namespace {

bool RowBefore(const TimelineRow& row, int rank, Lane lane) {
  if (row.rank != rank) return row.rank < rank;
  return static_cast<int>(row.lane) < static_cast<int>(lane);
}

}  // namespace

void TimelineStore::Clear() {
  rows_.clear();
  step_end_ns_.clear();
  step_max_end_ns_.clear();
  event_count_ = 0;
  end_ns_ = 0;
}

void TimelineStore::Add(std::span<const Event> events) {
  if (events.empty()) return;
  bool steps_changed = false;
  for (const Event& e : events) {
    // The row of (rank, lane): rows stay sorted, so search, insert if new.
    auto row = std::lower_bound(
        rows_.begin(), rows_.end(), e,
        [](const TimelineRow& r, const Event& ev) { return RowBefore(r, ev.rank, ev.lane); });
    if (row == rows_.end() || row->rank != e.rank || row->lane != e.lane) {
      TimelineRow fresh;
      fresh.rank = e.rank;
      fresh.lane = e.lane;
      row = rows_.insert(row, std::move(fresh));
    }
    // Events mostly arrive in order: append, else insert after equal starts.
    std::vector<Event>& list = row->events;
    if (list.empty() || list.back().start_ns <= e.start_ns) {
      list.push_back(e);
    } else {
      auto at = std::upper_bound(
          list.begin(), list.end(), e.start_ns,
          [](TimeNs start, const Event& other) { return start < other.start_ns; });
      list.insert(at, e);
    }
    ++event_count_;
    end_ns_ = std::max(end_ns_, e.end_ns);

    if (e.step < 0) continue;
    const auto step = static_cast<std::size_t>(e.step);
    if (step >= step_max_end_ns_.size()) step_max_end_ns_.resize(step + 1, -1);
    if (e.end_ns > step_max_end_ns_[step]) {
      step_max_end_ns_[step] = e.end_ns;
      steps_changed = true;
    }
  }
  if (!steps_changed) return;

  // step_end_ns_[k] = max over steps <= k that have events; -1 where step k has none.
  step_end_ns_.resize(step_max_end_ns_.size(), -1);
  TimeNs running = -1;
  for (std::size_t k = 0; k < step_max_end_ns_.size(); ++k) {
    if (step_max_end_ns_[k] >= 0) running = std::max(running, step_max_end_ns_[k]);
    step_end_ns_[k] = step_max_end_ns_[k] >= 0 ? running : -1;
  }
}

TimeNs TimelineStore::StepEndNs(int step) const {
  if (step < 0 || static_cast<std::size_t>(step) >= step_end_ns_.size()) return -1;
  return step_end_ns_[static_cast<std::size_t>(step)];
}

}  // namespace shardlab::gui
