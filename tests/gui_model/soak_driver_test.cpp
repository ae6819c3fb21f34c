// The soak driver: random UI commands are reproducible (same seed, same
// trace) and the seed matters (different seeds, different traces). The
// 10^5-command soak on a sanitizer build is `shardlab_soak` (docs/testing.md).
#include "app/gui/model/soak_driver.h"

#include <gtest/gtest.h>

#include <vector>

namespace shardlab::gui {
namespace {

constexpr int kCommands = 1000;

std::vector<std::uint64_t> Trace(std::uint64_t seed, SoakCounts* counts = nullptr,
                                 int commands = kCommands) {
  SoakDriver driver(seed);
  std::vector<std::uint64_t> trace;
  for (int i = 0; i < commands; ++i) trace.push_back(driver.Next());
  if (counts) *counts = driver.counts();
  return trace;
}

TEST(SoakDriver, TheSameSeedGivesTheSameTrace) {
  SoakCounts counts;
  const std::vector<std::uint64_t> first = Trace(7, &counts);
  EXPECT_EQ(Trace(7), first);
  // Every command was drawn, and runs happened: the soak exercised something.
  EXPECT_EQ(counts.commands, static_cast<std::uint64_t>(kCommands));
  for (int c = 0; c < kSoakCommandCount; ++c) {
    EXPECT_GT(counts.by_command[c], 0u) << SoakCommandName(static_cast<SoakCommand>(c));
  }
  EXPECT_GT(counts.runs, 10u);
  EXPECT_GT(counts.boxes, 0u);
}

TEST(SoakDriver, DifferentSeedsGiveDifferentTraces) {
  // The seed is not hashed, so this differs only because the commands did.
  EXPECT_NE(Trace(7, nullptr, 200).back(), Trace(8, nullptr, 200).back());
}

}  // namespace
}  // namespace shardlab::gui
