// An EventSink that keeps every event in memory (CLI runs, tests, traces).
#pragma once

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

}  // namespace shardlab
