// Small EventSinks the front ends, tests and benchmarks share: keep every
// event, count them, or hand them on to several sinks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "engine/core/event.h"

namespace shardlab {

class VectorSink : public EventSink {
 public:
  void OnEvent(const Event& event) override { events.push_back(event); }
  std::vector<Event> events;
};

/// Fans one event out to several sinks.
class TeeSink : public EventSink {
 public:
  TeeSink(EventSink& a, EventSink& b) : a_(a), b_(b) {}
  void OnEvent(const Event& event) override {
    a_.OnEvent(event);
    b_.OnEvent(event);
  }

 private:
  EventSink& a_;
  EventSink& b_;
};

/// Counts events and keeps the latest end (the run's span) without storing
/// them: metrics for runs too large to keep.
class CountingSink : public EventSink {
 public:
  void OnEvent(const Event& event) override {
    if (count == 0) clock = event.clock;
    ++count;
    end_ns = std::max(end_ns, event.end_ns);
  }
  std::size_t count = 0;
  TimeNs end_ns = 0;
  ClockKind clock = ClockKind::kSimulated;  // of the first event
};

/// Hands each event to every sink added, in order.
class FanOutSink : public EventSink {
 public:
  void Add(EventSink* sink) { sinks_.push_back(sink); }
  void OnEvent(const Event& event) override {
    for (EventSink* s : sinks_) s->OnEvent(event);
  }

 private:
  std::vector<EventSink*> sinks_;
};

}  // namespace shardlab
