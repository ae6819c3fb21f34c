// The fair-share model on its own: shares, rate changes, finish times.
#include <gtest/gtest.h>

#include "engine/backends/sim/flow_network.h"

namespace shardlab {
namespace {

TEST(FlowNetwork, OneFlowRunsAtFullCapacity) {
  FlowNetwork net;
  net.Reset({100.0});
  std::vector<std::int32_t> res = {0}, changed;
  const auto f = net.Add(0, 1000.0, res, changed);
  EXPECT_DOUBLE_EQ(net.FinishTime(f), 10.0);
}

TEST(FlowNetwork, FourFlowsOnOneResourceEachGetAQuarter) {
  FlowNetwork net;
  net.Reset({100.0, 1000.0});
  std::vector<std::int32_t> res = {0, 1}, changed;
  std::vector<std::int32_t> flows;
  for (int i = 0; i < 4; ++i) flows.push_back(net.Add(0, 1000.0, res, changed));
  for (auto f : flows) EXPECT_DOUBLE_EQ(net.FinishTime(f), 40.0);
}

TEST(FlowNetwork, ARemovedFlowSpeedsUpTheOthers) {
  FlowNetwork net;
  net.Reset({10.0});
  std::vector<std::int32_t> res = {0}, changed;
  const auto a = net.Add(0, 100.0, res, changed);  // alone: 10 B/ns
  changed.clear();
  const auto b = net.Add(5, 100.0, res, changed);  // a has 50 left, now 5 B/ns each
  EXPECT_EQ(changed.size(), 2u);
  EXPECT_DOUBLE_EQ(net.FinishTime(a), 15.0);
  EXPECT_DOUBLE_EQ(net.FinishTime(b), 25.0);
  changed.clear();
  net.Remove(15, a, changed);  // b has 50 left at 10 B/ns
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_DOUBLE_EQ(net.FinishTime(b), 20.0);
}

TEST(FlowNetwork, DisjointFlowsDoNotTouchEachOther) {
  FlowNetwork net;
  net.Reset({10.0, 10.0});
  std::vector<std::int32_t> r0 = {0}, r1 = {1}, changed;
  net.Add(0, 100.0, r0, changed);
  changed.clear();
  net.Add(0, 100.0, r1, changed);
  EXPECT_EQ(changed.size(), 1u);  // only the new flow was (re)timed
}

}  // namespace
}  // namespace shardlab
