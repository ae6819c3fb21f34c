// Scenario specs: every built-in scenario's defaults are values its own
// spec accepts and describe a run its engine scenario accepts; old
// spellings and value aliases land on the new names; bad values are
// refused with the parameter named.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "engine/core/error.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/memory_scenario.h"
#include "engine/scenarios/moe_scenario.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/plan_scenario.h"
#include "engine/scenarios/three_d_scenario.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab {
namespace {

const ScenarioSpec& Spec(const char* name) {
  const ScenarioSpec* spec = FindScenario(name);
  if (spec == nullptr) throw Error(std::string("no scenario ") + name);
  return *spec;
}

TEST(ScenarioSpecs, EveryScenarioIsRegisteredOnce) {
  std::set<std::string> names;
  for (const ScenarioSpec& s : Scenarios()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_FALSE(s.title.empty()) << s.name;
    EXPECT_FALSE(s.summary.empty()) << s.name;
  }
  for (const char* name : {"collective", "pipeline", "tp", "zero", "3d", "moe", "memory", "plan"})
    EXPECT_EQ(names.count(name), 1u) << name;
}

TEST(ScenarioSpecs, EveryDefaultIsAValueOfItsOwnSpec) {
  for (const ScenarioSpec& s : Scenarios()) {
    std::set<std::string> seen;
    for (const ParamSpec& p : s.params) {
      SCOPED_TRACE(s.name + "." + p.name);
      EXPECT_TRUE(seen.insert(p.name).second) << "two parameters named so";
      for (const std::string& old : p.old_names) EXPECT_TRUE(seen.insert(old).second) << old;
      EXPECT_EQ(CheckParamValue(p, p.default_text), "");
      EXPECT_FALSE(p.help.empty());
      EXPECT_LE(p.min, p.max);
      if (p.type == ParamType::kChoice) EXPECT_FALSE(p.choices.empty());
    }
  }
}

TEST(ScenarioSpecs, DefaultsDescribeARunTheEngineAccepts) {
  const Topology dgx = LoadScenarioTopology("dgx-a100");
  const ScenarioParams collective(Spec("collective"));
  const CollectiveScenario c = CollectiveFromParams(collective);
  EXPECT_EQ(c.ranks, dgx.num_gpus());  // ranks 0: every GPU of the topology
  EXPECT_EQ(c.size_bytes, Bytes{16} << 20);
  EXPECT_NO_THROW(CheckCollectiveScenario(c, dgx));

  const PipelineScenario pipeline = PipelineFromParams(ScenarioParams(Spec("pipeline")));
  EXPECT_EQ(pipeline.params.shape.chunks, 1);
  EXPECT_NO_THROW(CheckPipelineScenario(pipeline, dgx));
  EXPECT_NO_THROW(CheckTpScenario(TpFromParams(ScenarioParams(Spec("tp"))), dgx));
  const ZeroScenario zero = ZeroFromParams(ScenarioParams(Spec("zero")));
  EXPECT_EQ(zero.params.model.batch, kZeroDefaultRowsPerRank * zero.params.ranks);
  EXPECT_NO_THROW(CheckZeroScenario(zero, dgx));
  EXPECT_NO_THROW(CheckMoeScenario(MoeFromParams(ScenarioParams(Spec("moe"))), dgx));
  EXPECT_NO_THROW(PrepareThreeD(ThreeDFromParams(ScenarioParams(Spec("3d")))));

  const MemoryScenario memory = MemoryFromParams(ScenarioParams(Spec("memory")));
  EXPECT_EQ(memory.parameters, 7.5e9);
  const ScenarioParams plan(Spec("plan"));
  const Topology cluster = LoadScenarioTopology(plan.Text("topology"));
  EXPECT_EQ(PlanFromParams(plan, cluster).gpus, cluster.num_gpus());
}

TEST(ScenarioSpecs, PresetsAreValuesOfTheirSpecAndDescribeARunTheEngineAccepts) {
  int presets = 0;
  for (const ScenarioSpec& s : Scenarios()) {
    for (const auto& [name, values] : s.presets) {
      SCOPED_TRACE(s.name + " preset " + name);
      ++presets;
      ScenarioParams params(s);
      ASSERT_NO_THROW(params.ApplyPreset(name));
      for (const auto& [param, text] : values) {
        EXPECT_EQ(params.Text(param), text);
        EXPECT_FALSE(params.IsSet(param)) << "a preset is a starting point, not the user's choice";
      }
    }
  }
  EXPECT_GE(presets, 1);
  // The tp layer of the seed text: a run the engine accepts on its topology.
  ScenarioParams gpt3(Spec("tp"));
  gpt3.ApplyPreset("gpt3-layer");
  gpt3.Set("tp", "16");
  const TpScenario tp = TpFromParams(gpt3);
  EXPECT_EQ(tp.layer.hidden, 12288);
  EXPECT_TRUE(tp.timing_only);
  EXPECT_NO_THROW(CheckTpScenario(tp, LoadScenarioTopology(tp.topology)));

  try {
    ScenarioParams(Spec("tp")).ApplyPreset("gpt4");
    ADD_FAILURE() << "an unknown preset was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown preset 'gpt4' of scenario tp (gpt3-layer)"),
              std::string::npos) << e.what();
  }
}

TEST(ScenarioSpecs, DerivedDefaultsFollowTheOtherParameters) {
  ScenarioParams pipeline(Spec("pipeline"));
  pipeline.Set("schedule", "interleaved");
  EXPECT_EQ(PipelineFromParams(pipeline).params.shape.chunks, 2);
  pipeline.Set("optimizer", "adam");
  EXPECT_FLOAT_EQ(PipelineFromParams(pipeline).params.model.learning_rate, 1e-3f);
  pipeline.Set("lr", "0.25");
  EXPECT_FLOAT_EQ(PipelineFromParams(pipeline).params.model.learning_rate, 0.25f);

  ScenarioParams collective(Spec("collective"));
  collective.Set("kind", "alltoall");
  EXPECT_EQ(CollectiveFromParams(collective).algo, CollectiveAlgo::kDirect);
  collective.Set("topology", "pcie-gen3-4gpu");
  EXPECT_EQ(CollectiveFromParams(collective).ranks, 4);

  ScenarioParams tp(Spec("tp"));
  tp.Set("layer", "attention");
  EXPECT_EQ(TpFromParams(tp).layer.heads, 4);  // H = 64 is no multiple of 128
  tp.Set("hidden", "256");
  EXPECT_EQ(TpFromParams(tp).layer.heads, 0);  // the engine's H/128

  ScenarioParams zero(Spec("zero"));
  zero.Set("ranks", "8");
  EXPECT_EQ(ZeroFromParams(zero).params.model.batch, 64);
}

TEST(ScenarioSpecs, OldSpellingsAndAliasesLandOnTheNewNames) {
  ScenarioParams zero(Spec("zero"));
  zero.Set("stage", "1");
  EXPECT_TRUE(zero.IsSet("zero_stage"));
  EXPECT_EQ(ZeroFromParams(zero).params.stage, 1);
  ScenarioParams three_d(Spec("3d"));
  three_d.Set("zero", "1");
  EXPECT_EQ(ThreeDFromParams(three_d).zero_stage, 1);
  ScenarioParams plan(Spec("plan"));
  plan.Set("gpus", "64");
  EXPECT_EQ(plan.Int("ranks"), 64);

  ScenarioParams collective(Spec("collective"));
  collective.Set("dtype", "f16");
  EXPECT_EQ(collective.Text("dtype"), "fp16");
  EXPECT_EQ(CollectiveFromParams(collective).dtype, DType::kF16);
  collective.Set("dtype", "bf16");
  EXPECT_EQ(CollectiveFromParams(collective).dtype, DType::kBF16);
}

TEST(ScenarioSpecs, BadValuesNameTheParameter) {
  ScenarioParams pipeline(Spec("pipeline"));
  auto message = [&](const char* name, const char* text) {
    try {
      pipeline.Set(name, text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("stages", "0"), "stages: must be at least 1 (got 0)");
  EXPECT_EQ(message("stages", "4097"), "stages: must be at most 4096 (got 4097)");
  EXPECT_EQ(message("stages", "two"), "stages: must be an integer (got 'two')");
  EXPECT_EQ(message("schedule", "zb"),
            "schedule: unknown schedule 'zb' (gpipe, 1f1b, interleaved, zb-h1 or naive)");
  EXPECT_EQ(message("lr", "fast"), "lr: not a number: 'fast'");
  EXPECT_EQ(message("timing_only", "yes"), "timing_only: 'yes' is not true or false");
  EXPECT_EQ(message("dtype", "fp16"), "dtype: scenario 'pipeline' has no such parameter");
  EXPECT_FALSE(pipeline.IsSet("stages"));  // refused values leave the default
  EXPECT_EQ(pipeline.Int("stages"), 4);
}

TEST(ScenarioSpecs, ATestScenarioRegisteredAtRunTimeIsFound) {
  ScenarioSpec s;
  s.name = "spec-test-only";
  s.title = "Test";
  s.summary = "registered by scenario_spec_test";
  s.params = {Param("n", ParamType::kInteger, "3", "a number").Range(1, 9)};
  RegisterScenario(s);
  ASSERT_NE(FindScenario("spec-test-only"), nullptr);
  EXPECT_NE(ScenarioNames().find("spec-test-only"), std::string::npos);
  EXPECT_NE(FindScenario("collective"), nullptr);  // the built-ins are still there
  EXPECT_EQ(ParamDefaultText(FindScenario("spec-test-only")->params[0]), "(default: 3; 1 .. 9)");
}

}  // namespace
}  // namespace shardlab
