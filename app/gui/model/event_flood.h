// EventFlood: the app's event stream under a producer that pushes as fast as
// it can, for the reliability check `shardlab --event-flood SECONDS`:
// memory stays flat, drops are counted and shown, frames stay short.
//
//   producer thread ──Push (never blocks)──► EventQueue ──Poll, capped──► TimelineStore
//
// The producer re-emits the events of the run on screen (valid ops, ranks
// and steps, so every view can draw them), round after round, each round
// shifted by the run's span so a row's events keep arriving in time order.
// The session keeps a window of them (FloodWindow) and clears the store
// when it is full: a flood never ends, a run does.
//
// FloodMeter collects what the check reports: frame times, resident memory
// once a second, and the counters; FormatFloodReport turns them into the
// lines the app prints and says whether the invariants held.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/event.h"
#include "engine/core/event_queue.h"

namespace shardlab::gui {

class EventFlood {
 public:
  /// Starts the producer at once; `run` must not be empty. span_ns is the
  /// shift per round (at least the latest end in `run`).
  EventFlood(EventQueue& queue, std::vector<Event> run, TimeNs span_ns);
  ~EventFlood();  // stops the producer
  EventFlood(const EventFlood&) = delete;
  EventFlood& operator=(const EventFlood&) = delete;

  /// Stops and joins the producer; attempted() is final afterwards.
  void Stop();
  /// Events the producer tried to push (pushed + dropped).
  std::uint64_t attempted() const { return attempted_.load(std::memory_order_acquire); }
  /// The shift between rounds, which the consumer uses to rebase its window.
  TimeNs span_ns() const { return span_ns_; }

 private:
  void Produce();

  EventQueue& queue_;
  std::vector<Event> run_;
  TimeNs span_ns_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> attempted_{0};
  std::thread producer_;
};

/// Counters of a flood, as the session reports them.
struct FloodCounters {
  std::uint64_t attempted = 0;  // the producer's pushes, dropped ones included
  std::uint64_t ingested = 0;   // events the UI thread took from the queue
  std::uint64_t dropped = 0;    // the queue's drop count
  std::size_t queue_bytes = 0;  // the queue's own size
  std::size_t window_bytes = 0; // the events the store keeps at most
};

/// The p-quantile (0..1) of `values`, nearest rank below; 0 when empty.
double Percentile(std::vector<double> values, double p);

/// Frame times and memory samples of a flood (UI thread).
class FloodMeter {
 public:
  /// One frame: its whole time and the part Session::Poll took (ingest).
  void AddFrame(double frame_ms, double ingest_ms) {
    frame_ms_.push_back(frame_ms);
    ingest_ms_.push_back(ingest_ms);
  }
  /// Samples resident memory (/proc/self/statm) when a second has passed
  /// since the last sample; now_s is any monotonic clock in seconds.
  void MaybeSample(double now_s);
  /// For tests: a sample of a given size.
  void AddMemorySample(std::size_t bytes) { rss_bytes_.push_back(bytes); }
  /// A frame drawn before the flood began, for comparison.
  void AddBaselineFrame(double frame_ms) { baseline_ms_.push_back(frame_ms); }
  const std::vector<double>& frame_ms() const { return frame_ms_; }
  const std::vector<double>& baseline_ms() const { return baseline_ms_; }
  const std::vector<double>& ingest_ms() const { return ingest_ms_; }
  const std::vector<std::size_t>& rss_bytes() const { return rss_bytes_; }

 private:
  std::vector<double> frame_ms_;
  std::vector<double> ingest_ms_;
  std::vector<double> baseline_ms_;
  std::vector<std::size_t> rss_bytes_;
  double last_sample_s_ = -1;
};

/// Resident memory of this process in bytes (0 where /proc is unreadable).
std::size_t ResidentBytes();

struct FloodReport {
  std::string text;  // lines for stdout, each ending in '\n'
  bool ok = true;    // every invariant held
};

/// The report: produced / ingested / dropped, frame p50 / p99 / max,
/// memory. Fails when drops do not equal attempted - ingested (an event
/// lost without being counted), or when memory after the first second grows
/// by more than the queue's own size plus `slack_bytes`. The frame-time goal
/// is reported, not enforced: speed goals belong to benchmarks.
FloodReport FormatFloodReport(double seconds, const FloodCounters& counters,
                              const FloodMeter& meter, std::size_t slack_bytes);

}  // namespace shardlab::gui
