#include "engine/scenarios/pipeline_scenario.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/verify/bounds.h"
#include "engine/verify/mlp_bounds.h"

namespace shardlab {

double PipelineHostFlops(const PipelineParams& params) {
  // Forward 2BH² per layer, backward twice that, plus the element-wise work.
  const MlpConfig& m = params.model;
  return 6.0 * m.batch * static_cast<double>(m.width) * m.width * m.layers;
}

void CheckPipelineScenario(const PipelineScenario& scenario, const Topology& topology) {
  CheckScenarioBackend(scenario.backend);
  CheckPipelineParams(scenario.params);
  CheckRanksFitTopology("stages", scenario.params.shape.stages, "stage", scenario.topology, topology);
}

std::unique_ptr<PreparedPipeline> PreparePipeline(const PipelineScenario& scenario) {
  return PreparePipeline(scenario, LoadScenarioTopology(scenario.topology));
}

std::unique_ptr<PreparedPipeline> PreparePipeline(const PipelineScenario& scenario,
                                                  const Topology& topology) {
  CheckPipelineScenario(scenario, topology);
  auto p = std::make_unique<PreparedPipeline>();
  p->scenario = scenario;
  p->topology = topology;
  p->pipeline = BuildPipeline(scenario.params);
  return p;
}

namespace {

PipelineCheck CheckAgainstReference(const PreparedPipeline& prepared, const Backend& backend) {
  PipelineCheck check;
  check.checked = true;
  const PipelinePlan& pipeline = prepared.pipeline;
  const DType computed = ComputeDType(prepared.scenario.backend.c_str(), DType::kF32);
  MlpBoundedReference reference(prepared.scenario.params.model, prepared.scenario.seed,
                                UnitRoundoff(computed));
  reference.TrainStep();
  check.reference_loss = reference.loss();
  for (const float loss : backend.BufferData(pipeline.loss)) check.loss += loss;
  VerdictJudge judge;
  auto compare = [&](BufferId id, const BoundedTensor& want, const std::string& name, int rank,
                     double& error) {
    const auto got = backend.BufferData(id);
    error = std::max(error, RelativeTensorError(got, want.value, want.det));
    judge.Compare(name + " (stage " + std::to_string(rank) + ")", got, want.value, want.Bound());
  };
  for (std::size_t l = 0; l < pipeline.layers.size(); ++l) {
    const PipelineLayerBuffers& lb = pipeline.layers[l];
    const int layer = static_cast<int>(l);
    const std::string ls = std::to_string(l);
    compare(lb.weight_grad, reference.weight_grad(layer), "dw" + ls, lb.rank, check.gradient_error);
    compare(lb.bias_grad, reference.bias_grad(layer), "db" + ls, lb.rank, check.gradient_error);
    compare(lb.weight, reference.weight(layer), "w" + ls, lb.rank, check.weight_error);
    compare(lb.bias, reference.bias(layer), "b" + ls, lb.rank, check.weight_error);
  }
  judge.CompareScalar("loss", check.loss, check.reference_loss, reference.loss_bound());
  check.verdict = judge.Finish();
  check.correct = check.verdict.correct();
  check.worst_tensor = check.verdict.worst.tensor;
  return check;
}

}  // namespace

PipelineOutcomeSummary SummarizePipeline(const PreparedPipeline& prepared,
                                         std::span<const Event> events, const Backend& backend,
                                         const Plan* ran) {
  const Plan& plan = ran != nullptr ? *ran : prepared.pipeline.plan;
  PipelineOutcomeSummary s;
  s.metrics = MeasurePipeline(prepared.pipeline, plan, events);
  s.steps = plan.num_steps;
  s.events = events.size();
  if (prepared.scenario.timing_only) {
    s.check.not_checked_reason = "timing only: the data was not computed";
    s.check.verdict = NotChecked(s.check.not_checked_reason);
    return s;
  }
  s.check = CheckAgainstReference(prepared, backend);
  return s;
}

}  // namespace shardlab
