// A lab can run dp-train (lab 13, "Saving communication", builds on it):
// its parameters are lab parameters and its measured quantities come back
// for formulas and checks.
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"

namespace shardlab {
namespace {

LabParam Text(const std::string& name, const std::string& value) {
  return {name, LabParamType::kString, value, 0, false, 0};
}
LabParam Number(const std::string& name, double value) {
  return {name, LabParamType::kNumber, "", value, false, 0};
}

TEST(DpTrainLab, ALabRunsEachTechniqueAndReadsItsQuantities) {
  const LabRunResult plain = RunLabScenario("dp-train", {Number("steps", 5)});
  const LabRunResult int8 = RunLabScenario("dp-train", {Number("steps", 5), Text("compress", "int8")});
  // Ψ = 4·(32² + 32) = 4224; the ring sends 2(N−1)/N·4Ψ bytes per step.
  EXPECT_EQ(plain.measured.at("bytes_per_step"), 1.5 * 4 * 4224);
  EXPECT_LT(int8.measured.at("bytes_per_step"), 0.26 * plain.measured.at("bytes_per_step"));
  EXPECT_LT(int8.measured.at("time_ms"), plain.measured.at("time_ms"));
  const LabRunResult accumulate =
      RunLabScenario("dp-train", {Number("steps", 3), Number("accumulate", 4), Number("batch", 128)});
  EXPECT_EQ(accumulate.measured.at("bytes_per_sample") * 4, plain.measured.at("bytes_per_sample"));
  EXPECT_EQ(accumulate.measured.at("correct"), 1);
  EXPECT_THROW(RunLabScenario("dp-train", {Text("compress", "int3")}), Error);
  EXPECT_THROW(RunLabScenario("dp-train", {Number("accumulate", 0)}), Error);
}

}  // namespace
}  // namespace shardlab
