// Lab 14 ("Who does what") teaches that a small all-reduce is bound by the
// host's calls and a large one by the links. Each pair below is a
// prediction (an `expected` formula) and the question that reads the run;
// their keys must agree within the bound the lab's text claims, and the
// text's claims about the host lane must hold, so a lab whose story stops
// matching the simulator's host model fails.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

double Number(const LabAnswers& key, const std::string& id) {
  for (const LabAnswer& a : key.answers)
    if (a.question_id == id) return a.number;
  ADD_FAILURE() << "no question " << id;
  return NAN;
}

TEST(Lab14, TheHostBoundsTheSmallRingAndTheLinksTheLargeOne) {
  const LabAnswers key = LabAnswerKey(LoadLab((fs::path(SHARDLAB_LABS_DIR) / "14-who-does-what").string()));
  struct Pair {
    const char* predicted;
    const char* measured;
    double bound;
  };
  for (const Pair& c : {Pair{"calls", "calls_measured", 0}, Pair{"time_predicted", "time_measured", 0.02},
                        Pair{"bw_predicted", "big_measured", 0.05}, Pair{"graph_predicted", "graph_measured", 0.02}}) {
    const double p = Number(key, c.predicted), m = Number(key, c.measured);
    EXPECT_LE(std::fabs(p - m), c.bound * std::fabs(m)) << c.predicted << " " << p << " vs " << c.measured << " " << m;
  }
  // The text's claims: 112 calls; the 8-byte ring is almost all host time,
  // and without the host's cost a few microseconds; the 1 GiB ring's host
  // lane is the same total, hidden under the transfers.
  EXPECT_EQ(Number(key, "calls"), 112);
  EXPECT_GT(Number(key, "share"), 0.95);
  EXPECT_LT(Number(key, "free_time"), 0.05 * Number(key, "time_measured"));
  EXPECT_NEAR(Number(key, "big_lane"), Number(key, "time_predicted"), 1e-6 * Number(key, "time_predicted"));
  EXPECT_GT(Number(key, "big_measured"), 5 * Number(key, "big_lane"));
  EXPECT_EQ(Number(key, "graph_calls"), 0);
  EXPECT_LT(Number(key, "graph_measured"), 0.2 * Number(key, "time_measured"));
}

}  // namespace
}  // namespace shardlab
