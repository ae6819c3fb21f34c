// Each scenario's default run (the spec's defaults, what `shardlab-cli run
// NAME` with no flags and the app's opening settings both read) shows what
// its lab teaches (issue 38, item 7):
//   - pipeline: the bubble is within 2x its formula (p-1)/m, interleaving
//     lowers it below 1F1B's, and the run stays small enough that the app
//     checks it against the reference instead of timing it only;
//   - inference: several GPUs, with the tensor-parallel all-reduces in the
//     real run's plan;
//   - bf16 is accepted wherever fp16 is, and a tp run in bf16 moves 2 bytes
//     an element at the fp16 tensor-core rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "engine/core/error.h"
#include "engine/plan/kernel.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/inference_scenario.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/scenarios/tp_scenario.h"

namespace shardlab {
namespace {

const ScenarioSpec& Spec(const char* name) {
  const ScenarioSpec* spec = FindScenario(name);
  if (spec == nullptr) throw std::runtime_error(std::string("no scenario ") + name);
  return *spec;
}

// The app times a run only above this much host arithmetic
// (Session::kMaxCheckedHostFlops, app/gui/model/session.h), counted as
// there: every compute kernel of the plan.
constexpr double kAppMaxCheckedHostFlops = 2e9;

double PlanKernelFlops(const Plan& plan) {
  double flops = 0;
  for (const Op& op : plan.ops) {
    if (op.kind != OpKind::kCompute) continue;
    for (int k = 0; k < op.kernel_count; ++k)
      flops += KernelFlops(plan.kernels[static_cast<std::size_t>(op.kernel_begin + k)]);
  }
  return flops;
}

struct PipelineRun {
  PipelineOutcomeSummary summary;
  double plan_flops = 0;
};

PipelineRun RunPipelineDefaults(const char* schedule) {
  ScenarioParams params(Spec("pipeline"));
  if (schedule != nullptr) params.Set("schedule", schedule);
  const PipelineScenario scenario = PipelineFromParams(params);
  const auto prepared = PreparePipeline(scenario);
  RunOptions options;
  options.timing_only = scenario.timing_only;
  Executor executor(CreateBackend("sim"), prepared->pipeline.plan, prepared->topology, options);
  VectorSink sink;
  executor.RunToEnd(sink);
  EXPECT_EQ(executor.state(), ExecutorState::kDone) << executor.error();
  PipelineRun run;
  run.summary = SummarizePipeline(*prepared, sink.events, executor.backend());
  run.plan_flops = PlanKernelFlops(prepared->pipeline.plan);
  return run;
}

TEST(DefaultsShowTheConcept, PipelineBubbleIsNearItsFormulaAndInterleavingLowersIt) {
  const PipelineRun one_f_one_b = RunPipelineDefaults(nullptr);  // the default schedule
  EXPECT_EQ(ScenarioParams(Spec("pipeline")).Text("schedule"), "1f1b");
  const PipelineMetrics& m = one_f_one_b.summary.metrics;
  ASSERT_GT(m.formula_bubble_over_useful, 0);
  EXPECT_LE(m.bubble_over_useful / m.formula_bubble_over_useful, 2.0)
      << "bubble " << m.bubble_over_useful << " vs formula " << m.formula_bubble_over_useful;

  // Checked against the reference, in the app too: not above its limit.
  EXPECT_FALSE(ScenarioParams(Spec("pipeline")).Bool("timing_only"));
  EXPECT_LE(one_f_one_b.plan_flops, kAppMaxCheckedHostFlops);
  EXPECT_LE(PipelineHostFlops(PipelineFromParams(ScenarioParams(Spec("pipeline"))).params),
            kAppMaxCheckedHostFlops);
  ASSERT_TRUE(one_f_one_b.summary.check.checked);
  EXPECT_TRUE(one_f_one_b.summary.check.correct) << one_f_one_b.summary.check.verdict.Detail();

  const PipelineRun interleaved = RunPipelineDefaults("interleaved");
  const PipelineMetrics& i = interleaved.summary.metrics;
  EXPECT_LT(i.bubble_over_useful, m.bubble_over_useful)
      << "interleaved " << i.bubble_over_useful << " vs 1f1b " << m.bubble_over_useful;
  EXPECT_LE(i.bubble_over_useful / i.formula_bubble_over_useful, 2.0);
  EXPECT_TRUE(interleaved.summary.check.correct) << interleaved.summary.check.verdict.Detail();
}

TEST(DefaultsShowTheConcept, InferenceRunsOnSeveralGpusWithItsAllReduces) {
  const InferenceScenario scenario = InferenceFromParams(ScenarioParams(Spec("inference")));
  EXPECT_GT(scenario.layout.ranks(), 1);
  EXPECT_GT(scenario.layout.tp, 1) << "the all-reduces are tensor parallelism's";
  const InferenceRun run = RunInference(scenario);
  ASSERT_TRUE(run.check.checked);
  EXPECT_TRUE(run.check.verdict.correct()) << run.check.verdict.Detail();
  EXPECT_GT(run.check.allreduces, 0);
  EXPECT_EQ(run.check.allreduces, run.check.allreduces_expected);
  // And in the numbers the lab and the panel read.
  std::string summary;
  const auto measured = Spec("inference").measure(ScenarioParams(Spec("inference")), &summary);
  EXPECT_GT(measured.at("allreduces"), 0);
  EXPECT_GT(measured.at("decode_allreduce_us"), 0);
}

bool Has(const std::vector<std::string>& choices, const char* value) {
  return std::find(choices.begin(), choices.end(), value) != choices.end();
}

// dp-train's `precision` (fp16 mixed precision with a loss scale) and
// `compress` (the gradients' wire format) name training recipes, not an
// element type; a bf16 recipe needs its own numerics in engine/train/.
const std::set<std::string> kFp16RecipesWithoutBf16 = {"dp-train.precision", "dp-train.compress"};

TEST(DefaultsShowTheConcept, Bf16IsAcceptedWhereverFp16Is) {
  int fp16_params = 0;
  for (const ScenarioSpec& s : Scenarios()) {
    for (const ParamSpec& p : s.params) {
      if (!Has(p.choices, "fp16")) continue;
      const std::string name = s.name + "." + p.name;
      if (kFp16RecipesWithoutBf16.count(name) != 0) continue;
      ++fp16_params;
      EXPECT_TRUE(Has(p.choices, "bf16")) << name;
      EXPECT_EQ(CheckParamValue(p, "bf16"), "") << name;
    }
  }
  EXPECT_GE(fp16_params, 3);  // collective, tp, inference
  // The exemptions are still real parameters offering fp16 (else drop them).
  for (const std::string& name : kFp16RecipesWithoutBf16) {
    const std::size_t dot = name.find('.');
    const ScenarioSpec& s = Spec(name.substr(0, dot).c_str());
    const ParamSpec* p = s.FindParam(name.substr(dot + 1));
    ASSERT_NE(p, nullptr) << name;
    EXPECT_TRUE(Has(p->choices, "fp16")) << name;
  }

  // The inference scenario takes it too (timing only, as fp16).
  ScenarioParams inference(Spec("inference"));
  inference.Set("dtype", "bf16");
  inference.Set("timing_only", "true");
  inference.Set("model", "small");
  const InferenceScenario bf16 = InferenceFromParams(inference);
  EXPECT_EQ(bf16.dtype, DType::kBF16);
  EXPECT_NO_THROW(RunInference(bf16));
}

struct TpRun {
  TpSummary summary;
  Topology topology;
};

TpRun RunTpDefaults(const char* dtype) {
  ScenarioParams params(Spec("tp"));
  params.Set("dtype", dtype);
  params.Set("timing_only", "true");
  const TpScenario scenario = TpFromParams(params);
  const auto prepared = PrepareTp(scenario);
  RunOptions options;
  options.timing_only = true;
  Executor executor(CreateBackend("sim"), prepared->layer.plan, prepared->topology, options);
  VectorSink sink;
  executor.RunToEnd(sink);
  EXPECT_EQ(executor.state(), ExecutorState::kDone) << executor.error();
  return {SummarizeTp(*prepared, sink.events, executor.backend()), prepared->topology};
}

TEST(DefaultsShowTheConcept, TpRunsInBf16AtTwoBytesAnElement) {
  const TpRun bf16 = RunTpDefaults("bf16"), fp16 = RunTpDefaults("fp16"), fp32 = RunTpDefaults("fp32");
  const TpMetrics& m = bf16.summary.metrics;
  ASSERT_FALSE(m.collectives.empty());
  for (std::size_t i = 0; i < m.collectives.size(); ++i) {
    const TpCollectiveTiming& t = m.collectives[i];
    EXPECT_EQ(t.tensor_bytes, 2 * t.collective.count) << "collective " << i;
    EXPECT_EQ(t.tensor_bytes * 2, fp32.summary.metrics.collectives[i].tensor_bytes);
    EXPECT_EQ(t.sent_per_rank, fp16.summary.metrics.collectives[i].sent_per_rank);
  }
  // The tensor-core rate class of fp16: the same compute time, faster than fp32.
  EXPECT_EQ(m.compute_ns, fp16.summary.metrics.compute_ns);
  EXPECT_LT(m.compute_ns, fp32.summary.metrics.compute_ns);
  // A real (checked) run computes in float32 on the host: bf16 asks for timing only.
  ScenarioParams real(Spec("tp"));
  real.Set("dtype", "bf16");
  EXPECT_THROW(PrepareTp(TpFromParams(real)), Error);
}

}  // namespace
}  // namespace shardlab
