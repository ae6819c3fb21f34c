// Lab 15 (model vs measurement) and its scenario, trace-compare: the lab's
// hand prediction of the ring's model time (HBM traffic at the profile's
// rate plus 3 graph nodes per dependent step, computed here from the
// profile file) is what the model says, within the 5% the question allows;
// the claims its text makes (the ring within a few percent, the 1F1B step
// about six times too fast because of compute) hold; paths outside the
// repository are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "engine/core/error.h"
#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/scenarios/trace_compare_scenario.h"
#include "engine/topology/device_profile.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

const LabAnswer& Answer(const LabAnswers& key, const std::string& id) {
  for (const LabAnswer& a : key.answers)
    if (a.question_id == id) return a;
  throw std::runtime_error("no question " + id);
}

TEST(Lab15, TheHandPredictionOfTheRingIsTheModelsTimeAndTheTextsClaimsHold) {
  const LabAnswers key = LabAnswerKey(LoadLab((fs::path(SHARDLAB_LABS_DIR) / "15-model-vs-measurement").string()));
  const DeviceProfile profile = LoadDeviceProfile(
      (fs::path(SHARDLAB_LABS_DIR) / ".." / "bench/results/2026-11-26-h200-merged/device-graph.toml").string());
  // 56 reducing copies of 8 MiB (3 x traffic) and 56 plain ones (2 x).
  const double mib8 = 8.0 * 1024 * 1024;
  const double traffic = 56 * 3 * mib8 + 56 * 2 * mib8;
  EXPECT_DOUBLE_EQ(Answer(key, "traffic").number, traffic);
  const double by_hand_us = traffic / (*profile.memory_gbps * 1e3) + 14 * 3 * *profile.graph_node_ns / 1e3;
  const double model_us = Answer(key, "model_time").number;
  EXPECT_LE(std::fabs(by_hand_us - model_us), 0.05 * model_us) << by_hand_us << " vs " << model_us;
  // Eight copies share the HBM: each takes 8 x 3 x 8 MiB at the full rate.
  EXPECT_NEAR(Answer(key, "copy_model").number, 8 * 3 * mib8 / (*profile.memory_gbps * 1e3), 0.01);
  // "within a few percent", "about six times too fast", "about 0.05 TFLOP/s".
  EXPECT_NEAR(Answer(key, "ratio").number, 1.0, 0.05);
  EXPECT_GT(Answer(key, "pipe_ratio").number, 1.0 / 8);
  EXPECT_LT(Answer(key, "pipe_ratio").number, 1.0 / 5);
  EXPECT_LT(Answer(key, "gemm_rate").number, 0.1);
  EXPECT_EQ(Answer(key, "concurrency").text, "between 1.5 and 6");
  EXPECT_EQ(Answer(key, "cause").text, "compute ops far slower on the GPU than the profile's GEMM rate");
}

TEST(TraceCompareScenario, PathsOutsideTheRepositoryAndMissingFilesAreRefusedNamingTheField) {
  const ScenarioSpec* spec = FindScenario("trace-compare");
  ASSERT_NE(spec, nullptr);
  ASSERT_TRUE(spec->check);
  auto refused = [&](const std::string& field, const std::string& value, const std::string& part) {
    ScenarioParams p(*spec);
    p.Set(field, value);
    try {
      spec->check(p);
      ADD_FAILURE() << field << " = " << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(field + ": ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused("trace_file", "/etc/passwd", "absolute");
  refused("trace_file", "tests/../../x.json", "'..'");
  refused("trace_file", "tests/data/traces/no-such.json", "no file");
  refused("profile_file", "no-such.toml", "no file");
  refused("plan_settings", "pipeline stagez=4", "stagez");
  ScenarioParams good(*spec);
  EXPECT_NO_THROW(spec->check(good));
}

}  // namespace
}  // namespace shardlab
