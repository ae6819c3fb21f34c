// Labs 9 to 11 say that a prediction made on paper is what the run then
// measures (the bytes of an all-to-all, the dropped choices, a ring's busbw
// on each machine, where a dead rank's ring stops). Each pair below is a
// prediction (an `expected` formula on the parameters) and the question that
// reads the run; their answer keys must agree within the bound the lab's
// text claims, so a lab whose story stops matching the engine fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

double KeyOf(const LabAnswers& key, const std::string& id) {
  for (const LabAnswer& a : key.answers)
    if (a.question_id == id) return a.number;
  ADD_FAILURE() << "no question " << id;
  return std::nan("");
}

struct Claim {
  const char* predicted;
  const char* measured;
  double bound;  // relative
};

void ExpectClaims(const std::string& lab_id, std::initializer_list<Claim> claims) {
  SCOPED_TRACE(lab_id);
  const Lab lab = LoadLab((fs::path(SHARDLAB_LABS_DIR) / lab_id).string());
  const LabAnswers key = LabAnswerKey(lab);
  for (const Claim& c : claims) {
    const double p = KeyOf(key, c.predicted), m = KeyOf(key, c.measured);
    EXPECT_LE(std::fabs(p - m), c.bound * std::fabs(m)) << c.predicted << " " << p << " vs "
                                                        << c.measured << " " << m;
  }
}

TEST(Labs9To11, ExpertParallelPredictionsAreWhatTheRunsMeasure) {
  ExpectClaims("09-expert-parallel", {{"dispatch_predicted", "dispatch_measured", 0},
                                      {"dropped_predicted", "dropped_measured", 0},
                                      {"hot_load", "hot_slowdown", 0.05}});
  // The InfiniBand dispatch: predicted in ms, measured in us.
  const Lab lab = LoadLab((fs::path(SHARDLAB_LABS_DIR) / "09-expert-parallel").string());
  const LabAnswers key = LabAnswerKey(lab);
  EXPECT_NEAR(KeyOf(key, "ib_predicted") * 1e3, KeyOf(key, "ib_measured"),
              0.1 * KeyOf(key, "ib_measured"));
}

TEST(Labs9To11, NvlinkPredictionsAreWhatTheRunsMeasure) {
  ExpectClaims("10-nvlink-generations", {{"gen4_busbw_predicted", "gen4_busbw", 0.02},
                                         {"p100_ring_predicted", "p100_ring", 0.02},
                                         {"dgx2_busbw_predicted", "dgx2_busbw", 0.02},
                                         {"a100_per_direction", "a100_busbw", 0.02},
                                         {"h100_per_direction", "h100_busbw", 0.02},
                                         {"b200_time", "b200_measured", 0.02}});
}

TEST(Labs9To11, FaultPredictionsAreWhatTheRunsMeasure) {
  ExpectClaims("11-slow-and-failed-gpus", {{"slow_predicted", "slow_measured", 0.03},
                                           {"throttled_predicted", "throttled_busbw", 0.03},
                                           {"waiting", "waiting_measured", 0}});
}

}  // namespace
}  // namespace shardlab
