// The simulator's event queue against a plain reference: the same events,
// pushed and taken in the simulator's pattern (take one, push some, settle),
// must come out in the same (time, seq) order as from a sorted list.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/backends/sim/event_queue.h"

namespace shardlab {
namespace {

bool Earlier(const SimEvent& a, const SimEvent& b) {
  return a.time != b.time ? a.time < b.time : a.seq < b.seq;
}

// The reference: a vector scanned for its earliest event.
SimEvent TakeEarliest(std::vector<SimEvent>& pending) {
  auto it = std::min_element(pending.begin(), pending.end(), Earlier);
  const SimEvent e = *it;
  pending.erase(it);
  return e;
}

void ExpectSame(const SimEvent& got, const SimEvent& want) {
  EXPECT_EQ(got.time, want.time);
  EXPECT_EQ(got.seq, want.seq);
  EXPECT_EQ(got.kind, want.kind);
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.version, want.version);
}

TEST(EventQueue, TakesInTimeThenPushOrderLikeASortedList) {
  std::mt19937 rng(7);
  EventQueue queue;
  std::vector<SimEvent> reference;
  std::uint64_t seq = 0;
  double now = 0;
  // Times on a coarse grid, so that ties (broken by seq) are common.
  auto push = [&] {
    const SimEvent e{now + static_cast<double>(rng() % 8), seq++, static_cast<SimEventKind>(rng() % 4),
                     static_cast<std::int32_t>(rng() % 1000), static_cast<std::uint32_t>(rng())};
    queue.Push(e);
    reference.push_back(e);
  };
  for (int i = 0; i < 50; ++i) push();
  int taken = 0;
  while (!queue.empty()) {
    ASSERT_EQ(queue.size(), reference.size());
    const SimEvent got = queue.Take();
    const SimEvent want = TakeEarliest(reference);
    ExpectSame(got, want);
    now = got.time;
    // The handler pushes none, one or several events (the first replaces
    // the taken one in the queue), until 5,000 have been taken.
    if (++taken < 5000) {
      const int pushes = static_cast<int>(rng() % 3) + (rng() % 4 == 0 ? 1 : 0);
      for (int p = 0; p < pushes; ++p) push();
    }
    queue.Settle();
  }
  EXPECT_TRUE(reference.empty());
  EXPECT_GE(taken, 5000);
}

TEST(EventQueue, SettleWithoutPushRemovesTheTakenEvent) {
  EventQueue queue;
  queue.Push(SimEvent{5.0, 0, SimEventKind::kOpEnd, 1, 0});
  queue.Push(SimEvent{5.0, 1, SimEventKind::kFlowEnd, 2, 3});
  EXPECT_EQ(queue.Take().id, 1);
  queue.Settle();
  ASSERT_EQ(queue.size(), 1u);
  const SimEvent e = queue.Take();
  EXPECT_EQ(e.id, 2);
  EXPECT_EQ(e.kind, SimEventKind::kFlowEnd);
  EXPECT_EQ(e.version, 3u);
  queue.Settle();
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueue, APushDuringHandlingReplacesTheTakenEvent) {
  EventQueue queue;
  queue.Push(SimEvent{1.0, 0, SimEventKind::kLatencyDone, 10, 0});
  queue.Push(SimEvent{3.0, 1, SimEventKind::kOpEnd, 11, 0});
  EXPECT_EQ(queue.Take().id, 10);
  queue.Push(SimEvent{2.0, 2, SimEventKind::kFlowEnd, 12, 0});  // in the taken one's place
  queue.Settle();
  ASSERT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.Take().id, 12);
  queue.Settle();
  EXPECT_EQ(queue.Take().id, 11);
  queue.Settle();
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace shardlab
