// The registry's one path (engine/scenarios/scenario.h): every scenario
// runs through it, a run through it equals the scenario's own functions
// called by hand, a wrong result is a WRONG verdict that the labs refuse,
// and resolved values are what the run uses.
#include "engine/scenarios/scenario.h"

#include <gtest/gtest.h>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

TEST(ScenarioRegistry, EveryBuiltInScenarioRunsThroughTheRegistry) {
  for (const char* name : {"collective", "pipeline", "tp", "zero", "memory", "3d", "plan", "moe",
                           "dp-train", "elastic", "inference", "trace-compare"}) {
    const ScenarioSpec* spec = FindScenario(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_TRUE(ScenarioRuns(*spec)) << name;
  }
  // A scenario either runs a plan (both hooks) or measures itself.
  for (const ScenarioSpec& spec : Scenarios())
    EXPECT_EQ(static_cast<bool>(spec.prepare), static_cast<bool>(spec.summarize)) << spec.name;
}

TEST(ScenarioRegistry, ARunThroughTheRegistryEqualsThePipelineRunByHand) {
  ScenarioParams params(*FindScenario("pipeline"));
  params.Set("stages", "2");
  params.Set("microbatches", "4");
  params.Set("width", "64");
  const ScenarioOutcome outcome = RunScenario(params);
  ASSERT_NE(outcome.prepared, nullptr);
  EXPECT_TRUE(outcome.summary.verdict.correct()) << outcome.summary.verdict.Text();

  std::unique_ptr<PreparedPipeline> by_hand = PreparePipeline(PipelineFromParams(params));
  Executor executor(CreateBackend("sim"), std::move(by_hand->pipeline.plan), by_hand->topology,
                    RunOptions{});
  VectorSink sink;
  executor.RunToEnd(sink);
  const PipelineOutcomeSummary s =
      SummarizePipeline(*by_hand, sink.events, executor.backend(), &executor.plan());
  EXPECT_EQ(outcome.events.size(), sink.events.size());
  EXPECT_EQ(outcome.summary.values.at("bubble_fraction"), s.metrics.bubble_over_useful);
  EXPECT_EQ(outcome.summary.values.at("time_ms"), s.metrics.step_ns / 1e6);
  EXPECT_EQ(outcome.summary.values.at("steps"), executor.plan().num_steps);
  // Every quantity the spec lists, with its unit, in the spec's order.
  const std::vector<Quantity> q = outcome.summary.Quantities(params.spec());
  ASSERT_EQ(q.size(), params.spec().measured.size());
  EXPECT_EQ(q.front().name, params.spec().measured.front().name);
  EXPECT_EQ(q.front().unit, params.spec().measured.front().unit);
}

TEST(ScenarioRegistry, ResolvedValuesAreTheOnesTheRunUses) {
  ScenarioParams params(*FindScenario("pipeline"));
  params.Set("schedule", "interleaved");
  EXPECT_EQ(params.Number("chunks"), 0);  // "0: 2 there"
  const std::map<std::string, double> values = ScenarioParamValues(params);
  EXPECT_EQ(values.at("chunks"), PipelineFromParams(params).params.shape.chunks);
  EXPECT_EQ(values.at("chunks"), 2);
  EXPECT_EQ(values.count("schedule"), 0u);  // a choice: formulas do not see it
}

// A scenario whose check of the result fails: its verdict is WRONG, which
// the CLI reports (exit 1) and a lab refuses to grade.
const bool kWrongScenario = [] {
  ScenarioSpec s;
  s.name = "test-always-wrong";
  s.title = "Always wrong";
  s.summary = "a scenario whose result never matches its reference";
  s.params = {Param("ranks", ParamType::kInteger, "2", "ranks").Range(2, 8)};
  s.measured = {{"ops", "", "ops run"}};
  s.prepare = [](const ScenarioParams& p, const Topology*) {
    auto out = std::make_unique<Prepared>();
    out->topology = MakeUniformRing(static_cast<int>(p.Int("ranks")), 100.0, 1000);
    CollectiveParams c;
    c.ranks = static_cast<int>(p.Int("ranks"));
    c.count = 64;
    out->plan = BuildCollective(c);
    out->options.timing_only = true;
    return out;
  };
  s.summarize = [](const Prepared&, const FinishedRun& run, Summary& out) {
    out.values["ops"] = static_cast<double>(run.events.size());
    out.verdict.kind = VerdictKind::kWrong;
    out.verdict.reason = "element 3 is 2, reference 1";
  };
  RegisterScenario(std::move(s));
  return true;
}();

TEST(ScenarioRegistry, AWrongResultIsAVerdictThatALabRefuses) {
  ASSERT_TRUE(kWrongScenario);
  const ScenarioOutcome outcome = RunScenario(ScenarioParams(*FindScenario("test-always-wrong")));
  EXPECT_EQ(outcome.summary.verdict.kind, VerdictKind::kWrong);
  EXPECT_EQ(outcome.summary.values.at("ops"), outcome.events.size());
  EXPECT_GT(outcome.events.size(), 0u);
  try {
    RunLabScenario("test-always-wrong", {});
    FAIL() << "a lab graded a wrong run";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("element 3 is 2, reference 1"), std::string::npos) << e.what();
  }
}

TEST(ScenarioRegistry, BadParametersNameTheParameter) {
  ScenarioParams params(*FindScenario("pipeline"));
  params.Set("stages", "16");  // more than a DGX A100's 8 GPUs
  try {
    RunScenario(params);
    FAIL() << "16 stages ran on 8 GPUs";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("stages: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace shardlab
