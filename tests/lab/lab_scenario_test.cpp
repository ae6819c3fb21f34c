// Lab scenarios without running them: parameters as formula values (sizes
// in bytes, counts as counts, defaults filled in), the mapping onto the
// engine's scenario structs, and the names a step's formulas may read.
#include "engine/lab/lab_scenario.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "engine/core/error.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab {
namespace {

LabParam Text(const std::string& name, const std::string& value) {
  return {name, LabParamType::kString, value, 0, false, 0};
}
LabParam Number(const std::string& name, double value) {
  return {name, LabParamType::kNumber, "", value, false, 0};
}
LabParam Flag(const std::string& name, bool value) {
  return {name, LabParamType::kBool, "", 0, value, 0};
}

TEST(LabScenario, ParametersBecomeFormulaValuesWithDefaults) {
  const LabValues v = LabParamValues("collective", {Text("size", "64M"), Number("ranks", 4)});
  EXPECT_EQ(v.at("size"), 64.0 * 1024 * 1024);
  EXPECT_EQ(v.at("ranks"), 4);
  EXPECT_EQ(v.at("root"), 0);          // default
  EXPECT_EQ(v.at("timing_only"), 0);   // default, as 0/1
  EXPECT_EQ(v.count("topology"), 0u);  // not a number
  EXPECT_EQ(v.count("kind"), 0u);

  const LabValues m = LabParamValues("memory", {Text("params", "175B")});
  EXPECT_EQ(m.at("params"), 175e9);
  EXPECT_EQ(m.at("ranks"), 64);
  EXPECT_EQ(LabParamValues("zero", {}).at("params"), 0);
  EXPECT_EQ(LabParamValues("zero", {Number("params", 1e6)}).at("params"), 1e6);
}

TEST(LabScenario, MapsOntoTheEngineScenarios) {
  const CollectiveScenario c = CollectiveFromParams(LabScenarioParams(
      "collective", {Text("kind", "allgather"), Text("algo", "ring"), Number("ranks", 4),
                     Number("size", 4096), Text("dtype", "bf16"), Text("topology", "dgx1-v100"),
                     Text("ring_order", "rank"), Flag("timing_only", true)}));
  EXPECT_EQ(c.kind, CollectiveKind::kAllGather);
  EXPECT_EQ(c.ranks, 4);
  EXPECT_EQ(c.size_bytes, 4096);
  EXPECT_EQ(c.dtype, DType::kBF16);
  EXPECT_EQ(c.topology, "dgx1-v100");
  EXPECT_EQ(c.ring_order, "rank");
  EXPECT_EQ(c.backend, "sim");
  EXPECT_TRUE(c.timing_only);

  const PipelineScenario p = PipelineFromParams(LabScenarioParams(
      "pipeline", {Text("schedule", "interleaved"), Number("chunks", 2), Number("stages", 2)}));
  EXPECT_EQ(p.params.schedule, PipelineSchedule::kInterleaved1F1B);
  EXPECT_EQ(p.params.shape.chunks, 2);
  EXPECT_EQ(p.params.shape.stages, 2);
  EXPECT_EQ(p.params.shape.microbatches,
            std::stoi(FindScenario("pipeline")->FindParam("microbatches")->default_text));

  const TpScenario t =
      TpFromParams(LabScenarioParams("tp", {Number("tp", 4), Flag("sequence_parallel", true)}));
  EXPECT_EQ(t.layer.tp, 4);
  EXPECT_TRUE(t.layer.sequence_parallel);

  const ZeroScenario z =
      ZeroFromParams(LabScenarioParams("zero", {Number("stage", 3), Text("bucket", "1M")}));
  EXPECT_EQ(z.params.stage, 3);
  EXPECT_EQ(z.params.bucket_bytes, 1 << 20);
}

TEST(LabScenario, RejectsUnknownScenariosAndParameters) {
  EXPECT_THROW(LabParamValues("ring", {}), Error);
  try {
    LabParamValues("collective", {Number("gpus", 8)});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("gpus: unknown parameter of scenario 'collective'", 0), 0u)
        << e.what();
  }
  try {
    CheckLabScenario("collective", {Number("ranks", 9)});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("ranks: ", 0), 0u) << e.what();
  }
  EXPECT_NO_THROW(CheckLabScenario("collective", {Text("topology", "4x-dgx-h100-ib"), Number("ranks", 32),
                                                  Text("size", "1G"), Flag("timing_only", true)}));
}

TEST(LabScenario, StepNamesIncludeEachVariantsPrefix) {
  LabStep step;
  step.scenario = "collective";
  step.variants.push_back({"tree", {Text("algo", "tree")}, 0});
  const std::vector<std::string> names = LabStepValueNames(step);
  for (const char* name : {"ranks", "size", "time_ms", "busbw_gbps", "tree.time_ms", "tree.size"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(std::find(names.begin(), names.end(), "topology"), names.end());
  EXPECT_TRUE(LabStepValueNames(LabStep{}).empty());
}

TEST(LabScenario, EveryScenarioIsDocumentedAndHasUniqueNames) {
  // Every registered scenario runs through the registry, so a lab can use each.
  ASSERT_EQ(LabScenarioNames(), ScenarioNames());
  for (const char* name : {"collective", "pipeline", "tp", "zero", "memory", "3d", "plan", "moe",
                           "dp-train", "elastic", "inference", "trace-compare"})
    EXPECT_NE(FindLabScenario(name), nullptr) << name;
  for (const ScenarioSpec* spec : LabScenarios()) {
    std::vector<std::string> names;
    for (const ParamSpec& p : spec->params) names.push_back(p.name);
    for (const QuantitySpec& q : spec->measured) names.push_back(q.name);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << spec->name;
    // Defaults pass their own checks.
    EXPECT_NO_THROW(CheckLabScenario(spec->name, {})) << spec->name;
  }
}

}  // namespace
}  // namespace shardlab

namespace shardlab {
namespace {

// A lab can switch a straggler on: rank 2 at a quarter speed makes a
// 4-rank ring all-reduce's bandwidth term 4x longer (its 2(n-1) sends run
// one after the other on its own lane), and a rank out of range is the
// lab's error.
TEST(LabScenarioFaults, ASlowRankInALabSlowsTheRingByItsFactor) {
  const std::vector<LabParam> base = {Number("ranks", 4), Text("size", "64M"),
                                      Flag("timing_only", true)};
  std::vector<LabParam> slow = base;
  slow.push_back(Text("slow_rank", "2:4"));
  const LabRunResult a = RunLabScenario("collective", base);
  const LabRunResult b = RunLabScenario("collective", slow);
  // Per step: a 16 MiB chunk at the route's bandwidth (slowed 4x) plus its
  // latency alpha (not slowed): (4 beta + alpha) / (beta + alpha).
  const double beta_ns = 16.0 * 1024 * 1024 / a.measured.at("formula_bandwidth_gbps");
  const double alpha_ns = a.measured.at("formula_alpha_us") * 1e3;
  const double expected = (4 * beta_ns + alpha_ns) / (beta_ns + alpha_ns);
  EXPECT_NEAR(b.measured.at("time_ns") / a.measured.at("time_ns"), expected, 0.005 * expected);
  std::vector<LabParam> bad = base;
  bad.push_back(Text("slow_rank", "7:2"));
  EXPECT_THROW(RunLabScenario("collective", bad), Error);
}

}  // namespace
}  // namespace shardlab

namespace shardlab {
namespace {

// Every scenario a lab runs takes the four fault switches, so a step can
// lock "stage 1 at half speed" and ask for the step time.
TEST(LabScenarioFaults, EveryTrainingScenarioTakesTheFourSwitches) {
  for (const char* name : {"collective", "pipeline", "tp", "zero", "3d"}) {
    const ScenarioSpec* spec = FindLabScenario(name);
    ASSERT_NE(spec, nullptr) << name;
    for (const char* p : {"slow_rank", "throttle_link", "fail_link", "fail_rank"})
      EXPECT_NE(spec->FindParam(p), nullptr) << name << " has no " << p;
  }
}

// GPipe with p = 4, m = 8, compute-bound: stage 1 at half speed is the
// bottleneck of both passes, so the step grows by that stage's forward and
// backward work, which is m of the m + p - 1 slots of the plain step (and
// never more than the step itself): 1 + 0.9 m/(m+p-1) < ratio <= 2.
TEST(LabScenarioFaults, ASlowStageInAPipelineLabStretchesTheStep) {
  const std::vector<LabParam> base = {Text("schedule", "gpipe"), Number("stages", 4), Number("microbatches", 8),
                                      Number("width", 2048), Number("batch", 256), Flag("timing_only", true)};
  std::vector<LabParam> slow = base;
  slow.push_back(Text("slow_rank", "1:2"));
  const double a = RunLabScenario("pipeline", base).measured.at("time_ms");
  const double b = RunLabScenario("pipeline", slow).measured.at("time_ms");
  EXPECT_GT(b / a, 1 + 0.9 * 8.0 / 11.0);
  EXPECT_LE(b / a, 2.0 + 1e-9);
}

TEST(LabScenarioFaults, AFailedRankInAZeroLabEndsTheRunWithItsReport) {
  const std::vector<LabParam> params = {Number("ranks", 4), Text("fail_rank", "1@3")};
  try {
    RunLabScenario("zero", params);
    FAIL() << "the run did not stop";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 failed at step 3 (fail_rank 1@3) and never joined collective #"),
              std::string::npos)
        << e.what();
  }
  std::vector<LabParam> bad = {Number("ranks", 4), Text("slow_rank", "1:-2")};
  EXPECT_THROW(CheckLabScenario("zero", bad), Error);
}

TEST(LabScenarioFaults, TheElasticJobIsALabScenarioWithItsMeasurements) {
  const std::vector<LabParam> params = {Number("ranks", 4), Number("steps", 6), Number("checkpoint_every", 2),
                                        Text("fail_rank", "2@3")};
  const LabRunResult r = RunLabScenario("elastic", params);
  EXPECT_EQ(r.measured.at("lost_steps"), 1);
  EXPECT_EQ(r.measured.at("ranks_after"), 3);
  EXPECT_EQ(r.measured.at("checkpoints"), 2);
  EXPECT_GT(r.measured.at("recovery_ms"), 0);
}

}  // namespace
}  // namespace shardlab
