// The event flood behind `shardlab --event-flood`: the producer, the
// session's capped ingest and store window, and the report's invariants.
#include "app/gui/model/event_flood.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "app/gui/model/session.h"
#include "tests/gui_model/ring_settings.h"

namespace shardlab::gui {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<Event> ThreeEvents() {
  std::vector<Event> run(3);
  for (int i = 0; i < 3; ++i) {
    run[static_cast<std::size_t>(i)].op = i;
    run[static_cast<std::size_t>(i)].rank = i % 2;
    run[static_cast<std::size_t>(i)].step = i;
    run[static_cast<std::size_t>(i)].start_ns = 10.0 * i;
    run[static_cast<std::size_t>(i)].end_ns = 10.0 * i + 5;
  }
  return run;
}

TEST(EventFlood, ReEmitsTheRunRoundAfterRoundShiftedBySpan) {
  EventQueue queue(64);
  EventFlood flood(queue, ThreeEvents(), 100);
  // Wait until the queue is full (the producer never blocks: it then drops).
  while (queue.dropped() == 0) std::this_thread::yield();
  flood.Stop();
  std::vector<Event> got;
  queue.PopBatch(got);
  ASSERT_EQ(got.size(), 64u);
  EXPECT_EQ(flood.attempted(), got.size() + queue.dropped());  // every push counted once
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Event& e = got[i];
    const double round = static_cast<double>(i / 3);
    EXPECT_EQ(e.op, static_cast<int>(i % 3));
    EXPECT_DOUBLE_EQ(e.start_ns, 100 * round + 10.0 * static_cast<double>(i % 3)) << i;
    EXPECT_DOUBLE_EQ(e.duration_ns(), 5);
  }
}

TEST(EventFlood, ReportPassesWhenCountsAddUpAndMemoryIsFlat) {
  FloodMeter meter;
  for (int i = 0; i < 100; ++i) meter.AddFrame(i < 99 ? 10.0 : 50.0, 1.0);
  for (int i = 0; i < 5; ++i) meter.AddMemorySample(std::size_t{100} << 20);
  FloodCounters counters{1000, 400, 600, std::size_t{16} << 20};
  const FloodReport report = FormatFloodReport(5, counters, meter, 0);
  EXPECT_TRUE(report.ok) << report.text;
  EXPECT_TRUE(Contains(report.text, "produced 1000, ingested 400, dropped 600 (60.0%)")) << report.text;
  EXPECT_TRUE(Contains(report.text, "frames 100: p50 10.00 ms")) << report.text;
  EXPECT_TRUE(Contains(report.text, "max 50.00 ms; 1 over 33 ms")) << report.text;
}

TEST(EventFlood, ReportFailsOnAnUncountedLoss) {
  FloodMeter meter;
  meter.AddFrame(1, 0.5);
  FloodCounters counters{1000, 400, 599, 0};  // one event vanished
  const FloodReport report = FormatFloodReport(1, counters, meter, 0);
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(Contains(report.text, "FAIL: dropped 599 != produced - ingested 600")) << report.text;
}

TEST(EventFlood, ReportFailsWhenMemoryGrowsPastTheQueueAndSlack) {
  FloodMeter meter;
  meter.AddMemorySample(std::size_t{50} << 20);   // at start
  meter.AddMemorySample(std::size_t{100} << 20);  // after 1 s: the base
  meter.AddMemorySample(std::size_t{115} << 20);  // +15 MiB: within 16 + 0
  FloodCounters counters{10, 10, 0, std::size_t{16} << 20};
  EXPECT_TRUE(FormatFloodReport(3, counters, meter, 0).ok);
  meter.AddMemorySample(std::size_t{130} << 20);  // +30 MiB
  const FloodReport report = FormatFloodReport(4, counters, meter, std::size_t{8} << 20);
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(Contains(report.text, "memory grew by 30.0 MiB")) << report.text;
}

ScenarioSettings SmallRing() { return test::RingAllReduce4x1K(); }

TEST(SessionPoll, IngestsAtMostTheCapPerFrameAndLosesNothing) {
  ScenarioSettings s = SmallRing();
  s.SetParam("ranks", "80");  // 2 (n-1) steps x n ranks x (send + recv) = 25,280 events
  s.topology = "10x-dgx-a100-ib";
  s.SetParam("size", "64M");
  s.SetParam("timing_only", "true");
  Session session;
  ASSERT_TRUE(session.Start(s)) << session.error();
  // Let the worker queue the whole run first, so the cap is what limits Poll.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (session.steps_done() < session.num_steps() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(session.steps_done(), session.num_steps());
  // The run's last record (run done) may still be on its way after the last
  // step: polls that take nothing wait a little and are not counted as frames.
  std::vector<std::size_t> taken;
  while (session.state() == SessionState::kRunning && std::chrono::steady_clock::now() < deadline) {
    const std::size_t before = session.store().event_count();
    session.Poll();
    const std::size_t took = session.store().event_count() - before;
    if (took > 0) taken.push_back(took);
    else std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  ASSERT_EQ(session.plan()->ops.size(), 25280u);
  ASSERT_GE(taken.size(), 2u);
  EXPECT_EQ(taken[0], Session::kMaxEventsPerFrame);  // the first frame takes the cap, no more
  for (const std::size_t t : taken) EXPECT_LE(t, Session::kMaxEventsPerFrame);
  EXPECT_EQ(session.store().event_count(), session.plan()->ops.size());  // nothing left behind
  EXPECT_EQ(session.dropped_events(), 0u);
}

TEST(SessionFlood, NeedsARecordedRun) {
  Session session;
  std::string why;
  EXPECT_FALSE(session.StartEventFlood(&why));
  EXPECT_TRUE(Contains(why, "needs a recorded run")) << why;
  EXPECT_FALSE(session.flooding());
}

TEST(SessionFlood, IngestIsCappedPerPollAndTheStoreStaysInItsWindow) {
  Session session;
  ASSERT_TRUE(session.Start(SmallRing())) << session.error();
  while (session.state() == SessionState::kRunning) session.Poll();
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  const std::size_t run_events = session.store().event_count();
  const TimeNs run_end = session.store().end_ns();
  std::string why;
  ASSERT_TRUE(session.StartEventFlood(&why)) << why;
  ASSERT_TRUE(session.flooding());
  std::size_t max_store = 0;
  // Poll like frames until the window has been filled and cleared at least
  // once (the producer thread may start late on a busy machine).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int frame = 0; frame < 200 || session.flood_counters().ingested < 2 * Session::kFloodWindow;
       ++frame) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    const std::uint64_t before = session.flood_counters().ingested;
    session.Poll();
    const std::uint64_t took = session.flood_counters().ingested - before;
    ASSERT_LE(took, Session::kMaxEventsPerFrame);
    max_store = std::max(max_store, session.store().event_count());
    ASSERT_LE(session.store().event_count(), Session::kFloodWindow);
    // Every event in the window is one of the run's ops, rebased to start
    // at or after 0 (the views index the plan with it).
    for (const TimelineRow& row : session.store().rows())
      for (const Event& e : row.events) {
        ASSERT_GE(e.op, 0);
        ASSERT_LT(e.op, static_cast<int>(run_events));
        ASSERT_GE(e.start_ns, 0);
      }
  }
  EXPECT_GT(max_store, run_events);  // it did flood
  // Rows stay in time order (the producer shifts each round by the span).
  for (const TimelineRow& row : session.store().rows())
    for (std::size_t i = 1; i < row.events.size(); ++i)
      ASSERT_LE(row.events[i - 1].start_ns, row.events[i].start_ns);
  session.StopEventFlood();
  EXPECT_FALSE(session.flooding());
  const FloodCounters counters = session.flood_counters();
  EXPECT_GT(counters.attempted, 0u);
  EXPECT_EQ(counters.dropped, counters.attempted - counters.ingested);
  EXPECT_EQ(session.dropped_events(), counters.dropped);  // what the UI shows
  EXPECT_GE(run_end, 0);
}

TEST(SessionFlood, StartingARunStopsTheFlood) {
  Session session;
  ASSERT_TRUE(session.Start(SmallRing())) << session.error();
  while (session.state() == SessionState::kRunning) session.Poll();
  std::string why;
  ASSERT_TRUE(session.StartEventFlood(&why)) << why;
  ASSERT_TRUE(session.Start(SmallRing())) << session.error();
  EXPECT_FALSE(session.flooding());
  while (session.state() == SessionState::kRunning) session.Poll();
  EXPECT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_EQ(session.dropped_events(), 0u);  // a fresh queue for the fresh run
}

}  // namespace
}  // namespace shardlab::gui
