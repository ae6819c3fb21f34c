#include "engine/scenarios/pipeline_scenario.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/fault_params.h"
#include "engine/scenarios/scenario.h"
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

PipelineScenario PipelineFromParams(const ScenarioParams &p) {
  PipelineScenario sc;
  PipelineParams &pp = sc.params;
  pp.schedule = ParsePipelineSchedule(p.Text("schedule"));
  pp.shape.stages = static_cast<int>(p.Int("stages"));
  pp.shape.microbatches = static_cast<int>(p.Int("microbatches"));
  if (pp.schedule == PipelineSchedule::kNaive) pp.shape.microbatches = 1;  // the whole batch at once
  pp.shape.chunks = static_cast<int>(p.Int("chunks"));
  if (pp.shape.chunks == 0)
    pp.shape.chunks = pp.schedule == PipelineSchedule::kInterleaved1F1B ? 2 : 1;
  pp.model.layers = static_cast<int>(p.Int("layers"));
  pp.model.width = static_cast<int>(p.Int("width"));
  pp.model.batch = static_cast<int>(p.Int("batch"));
  pp.model.optimizer = ParseOptimizer(p.Text("optimizer"));
  const double lr = p.Number("lr");
  pp.model.learning_rate = lr > 0 ? static_cast<float>(lr)
                           : pp.model.optimizer == OptimizerKind::kAdam ? 1e-3f
                                                                        : 0.05f;
  sc.topology = p.Text("topology");
  sc.timing_only = p.Bool("timing_only");
  return sc;
}

namespace {

std::unique_ptr<Prepared> PreparePipelineRun(const ScenarioParams& p, const Topology* machine) {
  PipelineScenario sc = PipelineFromParams(p);
  // A step too large to compute on the host is timed only (and says so).
  const bool too_large = !sc.timing_only && PipelineHostFlops(sc.params) > kMaxHostFlops;
  sc.timing_only = sc.timing_only || too_large;
  std::shared_ptr<PreparedPipeline> detail =
      machine != nullptr ? PreparePipeline(sc, *machine) : PreparePipeline(sc);
  detail->host_too_large = too_large;
  const PipelineShape& shape = sc.params.shape;
  std::string title = std::string(PipelineScheduleName(sc.params.schedule)) + " pipeline, " +
      std::to_string(shape.stages) + " stages, " + std::to_string(shape.microbatches) +
      " micro-batches on " + sc.topology;
  const MlpConfig& model = sc.params.model;
  std::vector<std::string> header = {detail->pipeline.plan.name + " (batch " + std::to_string(model.batch) + ", " +
                                     std::to_string(model.batch / sc.params.shape.microbatches) +
                                     " rows per micro-batch, " + OptimizerName(model.optimizer) + ") on " + sc.topology};
  Topology& topology = detail->topology;
  Plan& plan = detail->pipeline.plan;
  auto prepared = PreparedPlan(p, topology, plan, sc.timing_only, sc.seed, std::move(title), std::move(detail));
  prepared->header = std::move(header);
  return prepared;
}

std::string NotCheckedText(const PreparedPipeline& prepared);
void PipelineReport(const PreparedPipeline& prepared, const PipelineOutcomeSummary& s, Report& r);

void SummarizePipelineRun(const Prepared& prepared, const FinishedRun& run, Summary& out) {
  const PreparedPipeline& detail = prepared.Detail<PreparedPipeline>();
  const PipelineScenario& sc = detail.scenario;
  auto kept = std::make_shared<PipelineOutcomeSummary>(
      SummarizePipeline(detail, run.events, run.backend, &run.plan));
  const PipelineOutcomeSummary& s = *kept;
  out.detail = kept;
  out.verdict = s.check.checked ? s.check.verdict : NotChecked(NotCheckedText(detail));
  PipelineReport(detail, s, out.report);
  const PipelineMetrics& m = s.metrics;
  int peak = 0, formula_peak = 0;
  for (const PipelineStageMetrics& st : m.stages) {
    peak = std::max(peak, st.peak_inflight);
    formula_peak = std::max(formula_peak, st.formula_peak_inflight);
  }
  out.values = {
      {"time_ms", m.step_ns / 1e6},
      {"span_ms", m.span_ns / 1e6},
      {"bubble_fraction", m.bubble_over_useful},
      {"formula_bubble_fraction", m.formula_bubble_over_useful},
      {"bubble_share_of_step", m.bubble_of_step},
      {"formula_bubble_share_of_step", m.formula_bubble_of_step},
      {"peak_inflight", static_cast<double>(peak)},
      {"formula_peak_inflight", static_cast<double>(formula_peak)},
      {"peak_inflight_last",
       m.stages.empty() ? 0.0 : static_cast<double>(m.stages.back().peak_inflight)},
      {"transfers", static_cast<double>(m.transfers)},
      {"transfer_bytes", static_cast<double>(m.transfer_bytes)},
      {"steps", static_cast<double>(run.plan.num_steps)},
  };
  const PipelineShape& shape = sc.params.shape;
  out.line = std::string(PipelineScheduleName(sc.params.schedule)) + ", " +
             std::to_string(shape.stages) + " stages, " + std::to_string(shape.microbatches) +
             " micro-batches: step " + FormatTime(m.step_ns) + ", bubble/useful " +
             FormatFixed(m.bubble_over_useful, 3) + " (formula " +
             FormatFixed(m.formula_bubble_over_useful, 3) + "), peak in flight " + std::to_string(peak);
}

/// Why a run is not checked: timed only on purpose, or too large for the host.
std::string NotCheckedText(const PreparedPipeline& prepared) {
  if (!prepared.host_too_large) return "timing only (--timing-only)";
  const double flops = PipelineHostFlops(prepared.pipeline.params);
  return "timing only: one step is " + FormatFixed(flops / 1e9, 0) +
         " GFLOP of host arithmetic, above the 20 GFLOP this command computes; "
         "choose a smaller --width, --layers or --batch to check the result";
}

/// The rows under the stage table and the chart: the step, the bubble beside
/// its formulas, the transfers, and why the bubble is above the formula.
void PipelineReport(const PreparedPipeline& prepared, const PipelineOutcomeSummary& s, Report& r) {
  const PipelinePlan& pipeline = prepared.pipeline;
  const PipelineShape& shape = pipeline.params.shape;
  const PipelineSchedule schedule = pipeline.params.schedule;
  const PipelineMetrics& m = s.metrics;
  const bool split = SplitsBackward(schedule);
  const std::string pm = "p=" + std::to_string(shape.stages) + ", m=" + std::to_string(shape.microbatches) +
                         (schedule == PipelineSchedule::kInterleaved1F1B ? ", v=" + std::to_string(shape.chunks) : "");
  r.Block().rows = {{}, {"", "step time " + FormatTime(m.step_ns) + "   (forward/backward span " +
                                FormatTime(m.span_ns) + ", then the optimizer step)", "", "step_time_us", m.step_ns / 1e3}};
  r.Block(23).rows = {
      {"bubble / useful time", FormatFixed(m.bubble_over_useful, 4),
       std::string("formula ") + FormulaBubbleOverUsefulText(schedule) + " = " +
           FormatFixed(m.formula_bubble_over_useful, 4) + "  (" + pm + ")", "bubble_fraction", m.bubble_over_useful},
      {"bubble / step", FormatFixed(m.bubble_of_step, 4),
       std::string("formula ") + FormulaBubbleOfStepText(schedule) + " = " + FormatFixed(m.formula_bubble_of_step, 4),
       "bubble_share_of_step", m.bubble_of_step},
      {"transfers", std::to_string(m.transfers) + " activations and gradients, " + FormatBytes(m.transfer_bytes) +
                        ", " + FormatTime(m.transfer_ns) + " in flight in all", "", "transfers", m.transfers}};
  const PipelineBubbleExcess excess = ExplainPipelineBubble(m, shape);
  if (excess.above_formula) {
    r.Line("note: the bubble is above the formula, which assumes free communication and");
    if (excess.communication) {
      r.Line("      equal slots. Here a transfer between stages takes " + FormatTime(excess.transfer_ns) +
             " on average beside");
      r.Line("      " + FormatTime(excess.forward_ns) + " per forward slot; 1F1B and ZB-H1 wait for every gradient's round");
      r.Line("      trip, GPipe only at the fill and drain. A wider model hides it:");
      r.Line("      --width 4096 --batch 256 --timing-only.");
    } else {
      r.Line(std::string("      slots that all take as long (F = B") + (split ? " = W" : "") + ").");
      r.Line("      Here the average slot is F " + FormatTime(excess.forward_ns) + ", B " +
             FormatTime(excess.backward_ns) + (split ? ", W " + FormatTime(excess.weight_ns) : std::string()) +
             ", and stage 0");
      r.Line("      skips the input gradient of its first layer.");
    }
  }
  ReportValue& f = r.fields;
  f.Add("span_us", m.span_ns / 1e3).Add("formula_bubble_fraction", m.formula_bubble_over_useful);
  f.Add("formula_bubble_share_of_step", m.formula_bubble_of_step);
  ReportValue peak = ReportValue::List(), formula_peak = ReportValue::List(), stages = ReportValue::List();
  for (std::size_t i = 0; i < m.stages.size(); ++i) {
    const PipelineStageMetrics& st = m.stages[i];
    peak.Push(st.peak_inflight);
    formula_peak.Push(st.formula_peak_inflight);
    ReportValue row = ReportValue::Object();
    row.Add("stage", static_cast<std::int64_t>(i)).Add("layers", PipelineStageLayers(pipeline, static_cast<int>(i)));
    row.Add("forward_us", st.forward_ns / 1e3).Add("backward_us", st.backward_ns / 1e3);
    if (split) row.Add("weight_gradient_us", st.weight_ns / 1e3);
    row.Add("busy_us", st.busy_ns / 1e3).Add("idle_us", st.idle_ns / 1e3).Add("bubble_fraction", st.bubble_over_useful);
    stages.Push(std::move(row));
  }
  f.Add("peak_inflight_per_stage", std::move(peak)).Add("formula_peak_inflight_per_stage", std::move(formula_peak));
  f.Add("per_stage", std::move(stages)).Add("transfer_bytes", m.transfer_bytes);
  const std::string not_checked = NotCheckedText(prepared);
  AddCheckFields(f, s.check.checked, s.check.correct,
                 {{"gradient_error", s.check.gradient_error}, {"weight_error", s.check.weight_error},
                  {"loss", s.check.loss}, {"reference_loss", s.check.reference_loss}},
                 not_checked);
  r.result = s.check.checked
                 ? StepCheckText(s.check.verdict, "after one step, every gradient, weight and the loss against its "
                                 "error bound from the double-precision single-device reference",
                                 s.check.loss, s.check.reference_loss, s.check.worst_tensor)
                 : "not checked (" + not_checked + ")";
}

}  // namespace

void RegisterScenario_pipeline_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "pipeline";
  s.title = "Pipeline parallel";
  s.summary = "pipeline-parallel training of a small MLP for one step";
  s.params = {
      Param("schedule", T::kChoice, "1f1b",
            "the pipeline schedule; naive: layers split over the GPUs, one micro-batch (microbatches is 1)")
          .Choices({"gpipe", "1f1b", "interleaved", "zb-h1", "naive"}),
      Param("stages", T::kInteger, "4",
            "pipeline stages p, one GPU each (stage s on GPU s)")
          .Range(1, 4096)
          .Unit("GPUs")
          .Short('p'),
      Param("microbatches", T::kInteger, "8",
            "micro-batches m per step; must divide the batch")
          .Range(1, 65536)
          .Unit("micro-batches")
          .Short('m'),
      Param("chunks", T::kInteger, "0",
            "model chunks v per stage, interleaved only; 0: 2 there, else 1")
          .Range(0, 64)
          .Unit("chunks")
          .Short('v'),
      Param("layers", T::kInteger, "8", "layers of the MLP")
          .Range(1, 100000)
          .Unit("layers"),
      Param("width", T::kInteger, "1024", "features of every layer of the MLP")
          .Range(1, 1 << 20)
          .Unit("features"),
      Param("batch", T::kInteger, "16",
            "rows of one training step (the global batch)")
          .Range(1, 1 << 24)
          .Unit("rows"),
      Param("optimizer", T::kChoice, "sgd", "the optimizer")
          .Choices({"sgd", "adam"}),
      Param("lr", T::kNumber, "0",
            "learning rate; 0: the optimizer's (0.05 sgd, 0.001 adam)")
          .ValueName("X"),
      TopologyParam("a preset or topology file; stage s on GPU s"),
      TimingOnlyParam(
          "skip the arithmetic: time only (for paper-sized models)"),
  };
  for (ParamSpec& p : FaultParams()) s.params.push_back(std::move(p));  // faults.h
  s.measured = {
      {"time_ms", "ms", "the whole step, optimizer included"},
      {"span_ms", "ms", "first forward to last backward"},
      {"bubble_fraction", "", "idle / busy over the stages"},
      {"formula_bubble_fraction", "", "(p-1)/m, (p-1)/(v m), (p-1)/(3m)"},
      {"bubble_share_of_step", "", "idle / (p span)"},
      {"formula_bubble_share_of_step", "", "(p-1)/(m+p-1)"},
      {"peak_inflight", "micro-batches", "most activations any stage holds"},
      {"formula_peak_inflight", "micro-batches",
       "the schedule's formula, largest stage"},
      {"peak_inflight_last", "micro-batches", "the last stage's peak"},
      {"transfers", "", "sends between stages"},
      {"transfer_bytes", "bytes", "bytes of those sends"},
      {"steps", "", "logical steps (schedule ticks)"},
  };
  s.panels = {"pipeline_metrics", "pipeline_legend", "pipeline_summary", "pipeline_how_to_read",
              "pipeline_schedule_field"};
  s.check = [](const ScenarioParams& p) {
    const PipelineScenario sc = PipelineFromParams(p);
    CheckPipelineScenario(sc, LoadScenarioTopology(sc.topology));
  };
  s.prepare = PreparePipelineRun;
  s.summarize = SummarizePipelineRun;
  s.resolve = [](const ScenarioParams& p, std::map<std::string, double>& values) {
    const PipelineScenario sc = PipelineFromParams(p);
    values["chunks"] = sc.params.shape.chunks;
    values["lr"] = sc.params.model.learning_rate;
  };
  RegisterScenario(std::move(s));
}

} // namespace shardlab
