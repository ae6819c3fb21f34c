// Session's event flood (`shardlab --event-flood`, event_flood.h): a
// recorded run's events re-emitted as fast as a producer can, ingested by
// Poll a frame's worth at a time into a window of the store.
#include <cmath>

#include "app/gui/model/session.h"

namespace shardlab::gui {

bool Session::StartEventFlood(std::string* why) {
  if (state_ != SessionState::kDone || store_.event_count() == 0) {
    *why = "the event flood needs a recorded run with events";
    return false;
  }
  StopEventFlood();
  std::vector<Event> run;
  run.reserve(store_.event_count());
  for (const TimelineRow& row : store_.rows()) run.insert(run.end(), row.events.begin(), row.events.end());
  const TimeNs span_ns = store_.end_ns();
  store_.Clear();  // the flood's first round lands where the run was
  // A fresh queue: its drop count is the flood's alone.
  queue_ = std::make_unique<EventQueue>(kQueueCapacity);
  flood_counters_ = FloodCounters{};
  flood_counters_.queue_bytes = queue_->capacity() * sizeof(Event);
  flood_counters_.window_bytes = kFloodWindow * sizeof(Event);
  flood_base_ns_ = -1;
  flood_ = std::make_unique<EventFlood>(*queue_, std::move(run), span_ns);
  return true;
}

void Session::StopEventFlood() {
  if (!flood_) return;
  flood_->Stop();
  batch_.clear();
  flood_counters_.ingested += queue_->PopBatch(batch_);  // counted, not stored
  flood_counters_.attempted = flood_->attempted();
  flood_counters_.dropped = queue_->dropped();
  flood_.reset();
}

FloodCounters Session::flood_counters() const {
  FloodCounters counters = flood_counters_;
  if (flood_) {
    counters.attempted = flood_->attempted();
    counters.dropped = queue_->dropped();
  }
  return counters;
}

void Session::PollFlood() {
  batch_.clear();
  const std::size_t got = queue_->PopBatch(batch_, kMaxEventsPerFrame);
  flood_counters_.ingested += got;
  if (got == 0) return;
  if (store_.event_count() + got > kFloodWindow) {
    store_.Clear();
    flood_base_ns_ = -1;
  }
  // Each window starts at time 0: take off the first event's round.
  const TimeNs span = flood_->span_ns();
  if (flood_base_ns_ < 0) flood_base_ns_ = std::floor(batch_.front().start_ns / span) * span;
  for (Event& e : batch_) {
    e.start_ns -= flood_base_ns_;
    e.end_ns -= flood_base_ns_;
  }
  store_.Add(batch_);
}

}  // namespace shardlab::gui
