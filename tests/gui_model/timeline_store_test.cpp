#include "app/gui/model/timeline_store.h"

#include <gtest/gtest.h>

#include <vector>

namespace shardlab::gui {
namespace {

Event At(int rank, Lane lane, int step, TimeNs start_ns, TimeNs end_ns, int op = 0) {
  Event e;
  e.op = op;
  e.rank = rank;
  e.lane = lane;
  e.step = step;
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  return e;
}

TEST(TimelineStore, StartsEmpty) {
  TimelineStore store;
  EXPECT_TRUE(store.rows().empty());
  EXPECT_EQ(store.event_count(), 0u);
  EXPECT_EQ(store.end_ns(), 0);
  EXPECT_EQ(store.steps_seen(), 0);
  EXPECT_EQ(store.StepEndNs(0), -1);
  EXPECT_EQ(store.StepEndNs(-1), -1);
}

TEST(TimelineStore, RowsAreOrderedByRankThenLane) {
  TimelineStore store;
  const std::vector<Event> events = {
      At(2, Lane::kRecv, 0, 0, 10), At(0, Lane::kSend, 0, 0, 10), At(2, Lane::kSend, 0, 0, 10),
      At(0, Lane::kCompute, 0, 0, 5), At(1, Lane::kCopy, 0, 0, 5), At(0, Lane::kRecv, 0, 0, 10),
  };
  store.Add(events);
  ASSERT_EQ(store.rows().size(), 6u);
  const std::vector<std::pair<int, Lane>> expected = {
      {0, Lane::kCompute}, {0, Lane::kSend}, {0, Lane::kRecv},
      {1, Lane::kCopy},    {2, Lane::kSend}, {2, Lane::kRecv},
  };
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(store.rows()[i].rank, expected[i].first) << i;
    EXPECT_EQ(store.rows()[i].lane, expected[i].second) << i;
  }
  EXPECT_EQ(store.event_count(), 6u);
}

TEST(TimelineStore, EventsOfARowAreSortedByStartWhateverTheirArrivalOrder) {
  TimelineStore store;
  store.Add(std::vector<Event>{At(0, Lane::kSend, 2, 30, 40, 3), At(0, Lane::kSend, 0, 0, 10, 1)});
  store.Add(std::vector<Event>{At(0, Lane::kSend, 1, 10, 30, 2), At(0, Lane::kSend, 3, 40, 45, 4)});
  ASSERT_EQ(store.rows().size(), 1u);
  const std::vector<Event>& row = store.rows()[0].events;
  ASSERT_EQ(row.size(), 4u);
  for (std::size_t i = 0; i < row.size(); ++i) EXPECT_EQ(row[i].op, static_cast<int>(i) + 1);
  EXPECT_EQ(store.end_ns(), 45);
}

TEST(TimelineStore, StepEndIsTheLatestEndOfItsEventsAndNeverBeforeAnEarlierStep) {
  TimelineStore store;
  store.Add(std::vector<Event>{
      At(0, Lane::kSend, 0, 0, 10), At(1, Lane::kSend, 0, 0, 12),   // step 0 ends at 12
      At(0, Lane::kRecv, 1, 10, 11),                                // step 1's own end: 11
      At(1, Lane::kRecv, 3, 20, 30),                                // step 2: nothing yet
  });
  EXPECT_EQ(store.steps_seen(), 4);
  EXPECT_EQ(store.StepEndNs(0), 12);
  EXPECT_EQ(store.StepEndNs(1), 12);  // pipelined: raised to step 0's end
  EXPECT_EQ(store.StepEndNs(2), -1);
  EXPECT_EQ(store.StepEndNs(3), 30);
  EXPECT_EQ(store.StepEndNs(4), -1);

  store.Add(std::vector<Event>{At(2, Lane::kSend, 1, 12, 25), At(2, Lane::kSend, 2, 25, 28)});
  EXPECT_EQ(store.StepEndNs(1), 25);
  EXPECT_EQ(store.StepEndNs(2), 28);
  EXPECT_EQ(store.StepEndNs(3), 30);
}

TEST(TimelineStore, ClearForgetsEverything) {
  TimelineStore store;
  store.Add(std::vector<Event>{At(0, Lane::kSend, 0, 0, 10)});
  store.Clear();
  EXPECT_TRUE(store.rows().empty());
  EXPECT_EQ(store.event_count(), 0u);
  EXPECT_EQ(store.end_ns(), 0);
  EXPECT_EQ(store.steps_seen(), 0);
  store.Add(std::vector<Event>{At(0, Lane::kSend, 1, 5, 7)});
  EXPECT_EQ(store.StepEndNs(0), -1);
  EXPECT_EQ(store.StepEndNs(1), 7);
}

}  // namespace
}  // namespace shardlab::gui
