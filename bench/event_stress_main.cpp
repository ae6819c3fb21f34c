// shardlab_event_stress: the app's event stream under a producer that
// pushes as fast as it can, for the reliability goal "memory stays flat,
// drops are counted, frames stay under 33 ms at the 99th percentile".
//
//   producer thread ──Push (never blocks)──► EventQueue (Session's capacity)
//   frame loop, 60 Hz ──PopBatch──► TimelineStore::Add      (the app's Poll)
//
// What it does not do: draw. The frame time is the UI thread's ingest work
// per frame (PopBatch + TimelineStore::Add), which is what a flood adds to
// a frame; `shardlab --event-flood SECONDS` runs the same flood inside the
// app while it draws. The store is cleared
// every kStoreWindow events so memory measures the stream, not a history
// that would grow without end (a real run ends; a flood does not).
//
//   shardlab_event_stress --seconds 60 [--max-per-frame N]
//
// --max-per-frame caps the events ingested per frame (default: Session's
// kMaxEventsPerFrame, as Session::Poll does; the queue's capacity shows
// what ingesting everything each frame would cost).
//
// Prints produced / consumed / dropped, frame p50 / p99 / max and resident
// memory (from /proc/self/statm) sampled every second. Exits 1 when an
// invariant breaks: dropped != attempted - consumed, or memory after the
// first second grows by more than the queue's own size.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "app/gui/model/event_flood.h"
#include "app/gui/model/session.h"
#include "app/gui/model/timeline_store.h"
#include "engine/core/event_queue.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kStoreWindow = shardlab::gui::Session::kQueueCapacity;
constexpr auto kFramePeriod = std::chrono::microseconds(16667);
constexpr int kRanks = 64;
constexpr std::uint64_t kSteps = 1024;

double MiB(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

int main(int argc, char** argv) {
  double seconds = 60;
  unsigned long long max_per_frame_flag = shardlab::gui::Session::kMaxEventsPerFrame;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--seconds" && i + 1 < argc) {
      char* end = nullptr;
      seconds = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(seconds > 0 && seconds <= 3600)) {
        std::fprintf(stderr, "shardlab_event_stress: --seconds: must be in (0, 3600] (got '%s')\n",
                     argv[i]);
        return 2;
      }
    } else if (flag == "--max-per-frame" && i + 1 < argc) {
      char* end = nullptr;
      max_per_frame_flag = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0' || argv[i][0] == '-' || max_per_frame_flag == 0) {
        std::fprintf(
            stderr,
            "shardlab_event_stress: --max-per-frame: must be a positive integer (got '%s')\n",
            argv[i]);
        return 2;
      }
    } else {
      std::fprintf(
          stderr,
          "shardlab_event_stress: unknown flag %s (usage: --seconds S [--max-per-frame N])\n",
          argv[i]);
      return 2;
    }
  }

  shardlab::EventQueue queue(shardlab::gui::Session::kQueueCapacity);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> attempted{0};
  std::thread producer([&] {
    shardlab::Event e;
    e.clock = shardlab::ClockKind::kSimulated;
    std::uint64_t n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      e.op = static_cast<std::int32_t>(n & 0x7fffffff);
      e.rank = static_cast<std::int32_t>(n % kRanks);
      e.step = static_cast<std::int32_t>((n / kRanks) % kSteps);  // a run has few steps
      e.start_ns = static_cast<double>(n);
      e.end_ns = e.start_ns + 100;
      e.bytes = 4096;
      queue.Push(e);
      ++n;
      if ((n & 1023) == 0) attempted.store(n, std::memory_order_relaxed);
    }
    attempted.store(n, std::memory_order_relaxed);
  });

  shardlab::gui::TimelineStore store;
  std::vector<shardlab::Event> batch;
  std::vector<double> frame_ms;
  std::vector<std::size_t> rss_samples{shardlab::gui::ResidentBytes()};
  std::uint64_t consumed = 0;
  std::uint64_t in_store = 0;
  std::uint64_t max_per_frame = 0;
  const auto start = Clock::now();
  auto next_frame = start;
  auto next_sample = start + std::chrono::seconds(1);
  while (Clock::now() - start < std::chrono::duration<double>(seconds)) {
    const auto frame_start = Clock::now();
    batch.clear();
    const std::size_t got = queue.PopBatch(batch, max_per_frame_flag);
    consumed += got;
    if (in_store + got > kStoreWindow) {
      store.Clear();
      in_store = 0;
    }
    store.Add(batch);
    in_store += got;
    const auto frame_end = Clock::now();
    max_per_frame = std::max<std::uint64_t>(max_per_frame, got);
    frame_ms.push_back(std::chrono::duration<double, std::milli>(frame_end - frame_start).count());
    if (frame_end >= next_sample) {
      rss_samples.push_back(shardlab::gui::ResidentBytes());
      next_sample += std::chrono::seconds(1);
    }
    // A late frame is followed at once by the next, never by a burst of
    // catch-up frames (a vsynced loop skips, it does not replay).
    next_frame = std::max(next_frame + kFramePeriod, Clock::now());
    std::this_thread::sleep_until(next_frame);
  }
  const std::uint64_t consumed_in_frames = consumed;
  stop = true;
  producer.join();
  while (true) {  // what was left in the queue is consumed, not lost
    batch.clear();
    const std::size_t got = queue.PopBatch(batch);
    if (got == 0) break;
    consumed += got;
  }

  const std::uint64_t tried = attempted.load();
  const std::uint64_t dropped = queue.dropped();
  const std::size_t rss_base = rss_samples.size() > 1 ? rss_samples[1] : rss_samples[0];
  const std::size_t rss_max = *std::max_element(rss_samples.begin(), rss_samples.end());
  const std::size_t queue_bytes = queue.capacity() * sizeof(shardlab::Event);
  std::printf("event stress: %.0f s, queue %zu events (%.1f MiB)\n", seconds, queue.capacity(),
              MiB(queue_bytes));
  std::printf("  produced %llu, consumed %llu, dropped %llu (%.1f%%)\n",
              static_cast<unsigned long long>(tried), static_cast<unsigned long long>(consumed),
              static_cast<unsigned long long>(dropped),
              tried ? 100.0 * static_cast<double>(dropped) / static_cast<double>(tried) : 0.0);
  std::printf("  frames %zu: ingest p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", frame_ms.size(),
              shardlab::gui::Percentile(frame_ms, 0.5), shardlab::gui::Percentile(frame_ms, 0.99),
              frame_ms.empty() ? 0.0 : *std::max_element(frame_ms.begin(), frame_ms.end()));
  std::printf(
      "  events per frame: mean %.0f, max %llu\n",
      frame_ms.empty() ? 0.0 : static_cast<double>(consumed_in_frames) / static_cast<double>(frame_ms.size()),
      static_cast<unsigned long long>(max_per_frame));
  std::printf(
      "  resident memory: at start %.1f MiB, after 1 s %.1f MiB, max %.1f MiB, at end %.1f MiB "
      "(%zu samples)\n",
      MiB(rss_samples.front()), MiB(rss_base), MiB(rss_max), MiB(rss_samples.back()),
      rss_samples.size());

  int failures = 0;
  if (dropped != tried - consumed) {
    std::fprintf(stderr, "event stress: dropped %llu != produced - consumed %llu\n",
                 static_cast<unsigned long long>(dropped),
                 static_cast<unsigned long long>(tried - consumed));
    ++failures;
  }
  if (rss_max > rss_base + queue_bytes) {
    std::fprintf(stderr,
                 "event stress: memory grew by %.1f MiB after the first second (more than the "
                 "queue's %.1f MiB)\n",
                 MiB(rss_max - rss_base), MiB(queue_bytes));
    ++failures;
  }
  if (consumed == 0) {
    std::fprintf(stderr, "event stress: the frame loop consumed nothing\n");
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}
