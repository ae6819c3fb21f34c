#include "engine/core/event_queue.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace shardlab {
namespace {

Event Numbered(int i) {
  Event e;
  e.op = i;
  e.bytes = static_cast<Bytes>(i) * 3;
  return e;
}

TEST(EventQueue, RoundsCapacityUpToAPowerOfTwo) {
  EXPECT_EQ(EventQueue(0).capacity(), 2u);
  EXPECT_EQ(EventQueue(5).capacity(), 8u);
  EXPECT_EQ(EventQueue(1024).capacity(), 1024u);
}

TEST(EventQueue, ReturnsEventsInOrderAndCountsDropsWhenFull) {
  EventQueue q(4);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(q.Push(Numbered(i)));
  EXPECT_FALSE(q.Push(Numbered(4)));
  EXPECT_FALSE(q.Push(Numbered(5)));
  EXPECT_EQ(q.dropped(), 2u);
  EXPECT_EQ(q.size_approx(), 4u);

  std::vector<Event> out;
  EXPECT_EQ(q.PopBatch(out, 3), 3u);
  ASSERT_EQ(out.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i].op, i);

  // Room again: the ring wraps around and keeps order.
  EXPECT_TRUE(q.Push(Numbered(6)));
  EXPECT_TRUE(q.Push(Numbered(7)));
  EXPECT_TRUE(q.Push(Numbered(8)));
  EXPECT_FALSE(q.Push(Numbered(9)));
  out.clear();
  EXPECT_EQ(q.PopBatch(out), 4u);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].op, 3);
  EXPECT_EQ(out[1].op, 6);
  EXPECT_EQ(out[3].op, 8);
  EXPECT_EQ(q.dropped(), 3u);
  EXPECT_EQ(q.PopBatch(out), 0u);
}

// One producer, one consumer on separate threads: every event that was
// accepted arrives exactly once, in order, intact; the rest are counted.
TEST(EventQueue, ProducerAndConsumerThreadsLoseNothingUncounted) {
  constexpr int kCount = 200000;
  EventQueue q(64);
  int accepted = 0;
  std::thread producer([&] {
    for (int i = 0; i < kCount; ++i) accepted += q.Push(Numbered(i)) ? 1 : 0;
  });
  std::vector<Event> got;
  std::vector<Event> batch;
  bool producer_done = false;
  while (true) {
    batch.clear();
    q.PopBatch(batch, 17);
    got.insert(got.end(), batch.begin(), batch.end());
    if (producer_done && batch.empty()) break;
    if (!producer_done && got.size() + q.dropped() >= static_cast<std::size_t>(kCount)) {
      producer_done = true;
    }
  }
  producer.join();
  batch.clear();
  q.PopBatch(batch);
  got.insert(got.end(), batch.begin(), batch.end());

  EXPECT_EQ(got.size(), static_cast<std::size_t>(accepted));
  EXPECT_EQ(got.size() + q.dropped(), static_cast<std::size_t>(kCount));
  for (std::size_t i = 1; i < got.size(); ++i) {
    ASSERT_LT(got[i - 1].op, got[i].op) << "out of order at " << i;
  }
  for (const Event& e : got) ASSERT_EQ(e.bytes, static_cast<Bytes>(e.op) * 3);
}

TEST(EventQueue, QueueSinkPushesIntoTheQueue) {
  EventQueue q(2);
  QueueSink sink(q);
  for (int i = 0; i < 3; ++i) sink.OnEvent(Numbered(i));
  EXPECT_EQ(q.dropped(), 1u);
  std::vector<Event> out;
  EXPECT_EQ(q.PopBatch(out), 2u);
}

}  // namespace
}  // namespace shardlab
