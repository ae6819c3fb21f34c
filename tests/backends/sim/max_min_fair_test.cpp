// Water-filling on hand-built cases whose max-min fair rates are known, and
// its invariants on random networks (no resource oversubscribed, every flow
// has a bottleneck resource that is full and where no flow gets more).
#include <gtest/gtest.h>

#include <random>

#include "engine/backends/sim/flow_network.h"
#include "engine/backends/sim/max_min_fair.h"

namespace shardlab {
namespace {

using Path = std::vector<std::int32_t>;

std::vector<double> Rates(const std::vector<Gbps>& capacity, const std::vector<Path>& paths) {
  std::vector<std::span<const std::int32_t>> spans(paths.begin(), paths.end());
  std::vector<double> rates;
  MaxMinScratch scratch;
  MaxMinFairRates(capacity, spans, rates, scratch);
  return rates;
}

// Three flows, two links, one flow bottlenecked elsewhere: link 0 (100)
// carries f0, f1, f2; link 1 (20) carries f0 only. f0 is held to 20 by
// link 1, so f1 and f2 share the remaining 80 of link 0: 40 each. The old
// equal split (capacity / flows) gave them 100 / 3.
TEST(MaxMinFair, AFlowHeldBackElsewhereHandsItsShareToTheOthers) {
  const auto rates = Rates({100.0, 20.0}, {{0, 1}, {0}, {0}});
  EXPECT_DOUBLE_EQ(rates[0], 20.0);
  EXPECT_DOUBLE_EQ(rates[1], 40.0);
  EXPECT_DOUBLE_EQ(rates[2], 40.0);
}

// The textbook parking lot: links 0 and 1 of 10; the long flow crosses
// both, one short flow on each. Every link has two flows: 5 each.
TEST(MaxMinFair, ParkingLotSplitsEveryLinkInHalf) {
  const auto rates = Rates({10.0, 10.0}, {{0, 1}, {0}, {1}});
  EXPECT_DOUBLE_EQ(rates[0], 5.0);
  EXPECT_DOUBLE_EQ(rates[1], 5.0);
  EXPECT_DOUBLE_EQ(rates[2], 5.0);
}

// Links 0 (12) and 1 (30): f0 on both, f1 and f2 on 0, f3 on 1. Link 0
// fills first at 4 (f0, f1, f2), link 1 then gives f3 the 26 left.
TEST(MaxMinFair, TheSecondLinkGivesWhatTheFirstLeft) {
  const auto rates = Rates({12.0, 30.0}, {{0, 1}, {0}, {0}, {1}});
  EXPECT_DOUBLE_EQ(rates[0], 4.0);
  EXPECT_DOUBLE_EQ(rates[1], 4.0);
  EXPECT_DOUBLE_EQ(rates[2], 4.0);
  EXPECT_DOUBLE_EQ(rates[3], 26.0);
}

TEST(MaxMinFair, AFlowWithNoResourceIsUnbounded) {
  const auto rates = Rates({10.0}, {{}, {0}});
  EXPECT_TRUE(std::isinf(rates[0]));
  EXPECT_DOUBLE_EQ(rates[1], 10.0);
}

// Random networks: the allocation is feasible and every flow has a
// bottleneck (a full resource on its path where it gets the most).
TEST(MaxMinFair, RandomNetworksAreFeasibleAndEveryFlowHasABottleneck) {
  std::mt19937 rng(7);
  MaxMinScratch scratch;
  for (int trial = 0; trial < 200; ++trial) {
    const int resources = 1 + static_cast<int>(rng() % 8);
    const int flows = 1 + static_cast<int>(rng() % 12);
    std::vector<Gbps> capacity(static_cast<std::size_t>(resources));
    for (auto& c : capacity) c = 1.0 + static_cast<double>(rng() % 100);
    std::vector<Path> paths(static_cast<std::size_t>(flows));
    for (auto& p : paths) {
      for (int r = 0; r < resources; ++r)
        if (rng() % 3 == 0) p.push_back(r);
      if (p.empty()) p.push_back(static_cast<int>(rng() % resources));
    }
    std::vector<std::span<const std::int32_t>> spans(paths.begin(), paths.end());
    std::vector<double> rates;
    MaxMinFairRates(capacity, spans, rates, scratch);
    std::vector<double> load(static_cast<std::size_t>(resources), 0.0);
    for (int f = 0; f < flows; ++f)
      for (int r : paths[f]) load[r] += rates[f];
    for (int r = 0; r < resources; ++r) EXPECT_LE(load[r], capacity[r] * (1 + 1e-12));
    for (int f = 0; f < flows; ++f) {
      EXPECT_GT(rates[f], 0.0);
      bool bottleneck = false;
      for (int r : paths[f]) {
        const bool full = load[r] >= capacity[r] * (1 - 1e-9);
        bool largest = true;
        for (int g = 0; g < flows; ++g)
          for (int q : paths[g])
            if (q == r && rates[g] > rates[f] * (1 + 1e-9)) largest = false;
        bottleneck = bottleneck || (full && largest);
      }
      EXPECT_TRUE(bottleneck) << "trial " << trial << " flow " << f;
    }
  }
}

// The same three flows through the FlowNetwork over time: f0 (link 0 then
// the slow link 1) and f1, f2 on link 0. When f0 ends, f1 and f2 speed up.
TEST(FlowNetworkMaxMin, ThreeFlowsTwoLinksFinishWhenWaterFillingSaysSo) {
  FlowNetwork net;
  net.Reset({100.0, 20.0});
  const std::vector<std::int32_t> both = {0, 1}, link0 = {0};
  std::vector<std::int32_t> changed;
  const auto f0 = net.Add(0, 200.0, both, changed);   // 20 B/ns: done at 10
  const auto f1 = net.Add(0, 1000.0, link0, changed);
  const auto f2 = net.Add(0, 1000.0, link0, changed);
  EXPECT_DOUBLE_EQ(net.FinishTime(f0), 10.0);
  // 40 B/ns each until 10 (400 B moved), then 50 each: 600 / 50 = 12 more.
  EXPECT_DOUBLE_EQ(net.FinishTime(f1), 25.0);
  changed.clear();
  net.Remove(10.0, f0, changed);
  EXPECT_EQ(changed.size(), 2u);
  EXPECT_DOUBLE_EQ(net.FinishTime(f1), 22.0);
  EXPECT_DOUBLE_EQ(net.FinishTime(f2), 22.0);
}

// A flow that shares nothing with the one that ends is not re-timed, and
// neither is one whose rate does not change.
TEST(FlowNetworkMaxMin, OnlyFlowsWhoseRateChangesAreRetimed) {
  FlowNetwork net;
  net.Reset({10.0, 10.0, 5.0});
  const std::vector<std::int32_t> r0 = {0}, r1 = {1}, r12 = {1, 2};
  std::vector<std::int32_t> changed;
  net.Add(0, 100.0, r0, changed);
  const auto b = net.Add(0, 100.0, r12, changed);  // 5 B/ns, held by resource 2
  changed.clear();
  const auto c = net.Add(0, 100.0, r1, changed);   // gets 5 on resource 1; b keeps 5
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], c);
  EXPECT_DOUBLE_EQ(net.FinishTime(b), 20.0);
  EXPECT_DOUBLE_EQ(net.FinishTime(c), 20.0);
}

}  // namespace
}  // namespace shardlab
