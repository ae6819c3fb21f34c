#include "app/gui/model/event_flood.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace shardlab::gui {
namespace {

double MiB(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

std::string Line(const char* format, auto... args) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

}  // namespace

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

EventFlood::EventFlood(EventQueue& queue, std::vector<Event> run, TimeNs span_ns)
    : queue_(queue), run_(std::move(run)), span_ns_(span_ns) {
  for (const Event& e : run_) span_ns_ = std::max(span_ns_, e.end_ns);
  if (span_ns_ <= 0) span_ns_ = 1;
  // Time order within a round, so each row's events arrive in order.
  std::stable_sort(run_.begin(), run_.end(),
                   [](const Event& a, const Event& b) { return a.start_ns < b.start_ns; });
  if (!run_.empty()) producer_ = std::thread([this] { Produce(); });
}

EventFlood::~EventFlood() { Stop(); }

void EventFlood::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (producer_.joinable()) producer_.join();
}

void EventFlood::Produce() {
  // One writer: attempted_ is published after every push, and a stop is
  // seen within one event, however large the run.
  std::uint64_t n = 0;
  for (std::uint64_t round = 0;; ++round) {
    const TimeNs shift = static_cast<TimeNs>(round) * span_ns_;
    for (const Event& original : run_) {
      if (stop_.load(std::memory_order_relaxed)) return;
      Event e = original;
      e.start_ns += shift;
      e.end_ns += shift;
      queue_.Push(e);
      attempted_.store(++n, std::memory_order_release);
    }
  }
}

std::size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size_pages = 0;
  std::size_t resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

void FloodMeter::MaybeSample(double now_s) {
  if (last_sample_s_ >= 0 && now_s - last_sample_s_ < 1.0) return;
  last_sample_s_ = now_s;
  rss_bytes_.push_back(ResidentBytes());
}

FloodReport FormatFloodReport(double seconds, const FloodCounters& counters,
                              const FloodMeter& meter, std::size_t slack_bytes) {
  FloodReport report;
  const std::vector<double>& frames = meter.frame_ms();
  const std::vector<std::size_t>& rss = meter.rss_bytes();
  const double max_ms = frames.empty() ? 0.0 : *std::max_element(frames.begin(), frames.end());
  const auto over = std::count_if(frames.begin(), frames.end(), [](double ms) { return ms > 33.0; });
  report.text += Line("event flood: %.0f s while drawing\n", seconds);
  report.text += Line("  produced %llu, ingested %llu, dropped %llu (%.1f%%)\n",
                      static_cast<unsigned long long>(counters.attempted),
                      static_cast<unsigned long long>(counters.ingested),
                      static_cast<unsigned long long>(counters.dropped),
                      counters.attempted ? 100.0 * static_cast<double>(counters.dropped) /
                                               static_cast<double>(counters.attempted)
                                         : 0.0);
  report.text += Line("  frames %zu: p50 %.2f ms, p99 %.2f ms, max %.2f ms; %lld over 33 ms\n",
                      frames.size(), Percentile(frames, 0.5), Percentile(frames, 0.99), max_ms,
                      static_cast<long long>(over));
  report.text += Line("    of which ingest (Session::Poll): p50 %.2f ms, p99 %.2f ms\n",
                      Percentile(meter.ingest_ms(), 0.5), Percentile(meter.ingest_ms(), 0.99));
  if (!meter.baseline_ms().empty()) {
    report.text += Line("  before the flood, frames %zu: p50 %.2f ms, p99 %.2f ms\n",
                        meter.baseline_ms().size(), Percentile(meter.baseline_ms(), 0.5),
                        Percentile(meter.baseline_ms(), 0.99));
  }
  if (!rss.empty()) {
    const std::size_t base = rss.size() > 1 ? rss[1] : rss[0];
    const std::size_t peak = *std::max_element(rss.begin(), rss.end());
    report.text += Line(
        "  resident memory: at start %.1f MiB, after 1 s %.1f MiB, max %.1f MiB, at end %.1f MiB "
        "(%zu samples)\n",
        MiB(rss.front()), MiB(base), MiB(peak), MiB(rss.back()), rss.size());
    if (peak > base + counters.queue_bytes + slack_bytes) {
      report.text += Line("  FAIL: memory grew by %.1f MiB after the first second (allowed %.1f)\n",
                          MiB(peak - base), MiB(counters.queue_bytes + slack_bytes));
      report.ok = false;
    }
  }
  if (counters.dropped != counters.attempted - counters.ingested) {
    report.text += Line("  FAIL: dropped %llu != produced - ingested %llu\n",
                        static_cast<unsigned long long>(counters.dropped),
                        static_cast<unsigned long long>(counters.attempted - counters.ingested));
    report.ok = false;
  }
  return report;
}

}  // namespace shardlab::gui
