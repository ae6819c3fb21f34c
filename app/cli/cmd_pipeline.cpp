// `shardlab-cli run pipeline`'s tables: the per-stage table, the text Gantt
// and the bubble beside its formulas (the run itself is scenario_run.cpp's).
#include <iomanip>
#include <iostream>
#include <sstream>
#include <vector>

#include "app/cli/output.h"
#include "app/cli/pipeline_chart.h"
#include "app/cli/scenario_run.h"
#include "engine/core/units.h"
#include "engine/scenarios/pipeline_scenario.h"

namespace shardlab::cli {
namespace {

/// Why the result is not checked ("" when it is).
std::string NotCheckedText(const ParsedArgs& args, const PreparedPipeline& p) {
  if (args.Has("timing-only")) return "timing only (--timing-only)";
  const double flops = PipelineHostFlops(p.scenario.params);
  if (flops <= kMaxHostFlops) return "";
  return "timing only: one step is " + FormatFixed(flops / 1e9, 0) +
         " GFLOP of host arithmetic, above the 20 GFLOP this command computes; "
         "choose a smaller --width, --layers or --batch to check the result";
}

void Tables(std::ostream& out, const RunView& v) {
  const PreparedPipeline& prepared = v.prepared.Detail<PreparedPipeline>();
  const PipelineOutcomeSummary& s = v.summary.Detail<PipelineOutcomeSummary>();
  const Plan& plan = v.plan;
  const std::span<const Event> events = v.events;
  const PipelinePlan& pipeline = prepared.pipeline;
  const PipelineShape& shape = pipeline.params.shape;
  const PipelineMetrics& m = s.metrics;
  const int p = shape.stages;
  const bool split = SplitsBackward(pipeline.params.schedule);
  out << "#\n# stage  layers      F (us)    B (us)" << (split ? "    W (us)" : "")
      << "  busy (us)  idle (us)  bubble  in-flight (formula)\n";
  for (int st = 0; st < p; ++st) {
    const PipelineStageMetrics& sm = m.stages[static_cast<std::size_t>(st)];
    out << "# " << std::setw(5) << st << "  " << std::left << std::setw(9) << PipelineStageLayers(pipeline, st)
        << std::right << std::setw(9) << FormatFixed(sm.forward_ns / 1e3, 2) << std::setw(10)
        << FormatFixed(sm.backward_ns / 1e3, 2)
        << (split ? (std::ostringstream() << std::setw(10) << FormatFixed(sm.weight_ns / 1e3, 2)).str()
                  : std::string())
        << std::setw(11) << FormatFixed(sm.busy_ns / 1e3, 2)
        << std::setw(11) << FormatFixed(sm.idle_ns / 1e3, 2) << std::setw(8)
        << FormatFixed(sm.bubble_over_useful, 3) << std::setw(6) << sm.peak_inflight << " ("
        << sm.formula_peak_inflight << ")\n";
  }
  out << "#\n# Timeline: F forward, B backward"
      << (split ? " (input gradient), W weight gradient" : "")
      << " (F3 = micro-batch 3;\n# letters alternate case by micro-batch when too narrow to"
      << " label), . idle: the bubble.\n";
  for (const std::string& row : PipelineChart(plan, shape, events)) out << "# " << row << "\n";
  const bool interleaved = pipeline.params.schedule == PipelineSchedule::kInterleaved1F1B;
  const std::string pm = "p=" + std::to_string(p) + ", m=" + std::to_string(shape.microbatches) +
                         (interleaved ? ", v=" + std::to_string(shape.chunks) : "");
  out << "#\n# step time " << FormatTime(m.step_ns) << "   (forward/backward span "
      << FormatTime(m.span_ns) << ", then the optimizer step)\n"
      << "# bubble / useful time   " << FormatFixed(m.bubble_over_useful, 4) << "   formula "
      << FormulaBubbleOverUsefulText(pipeline.params.schedule) << " = "
      << FormatFixed(m.formula_bubble_over_useful, 4)
      << "  (" << pm << ")\n"
      << "# bubble / step          " << FormatFixed(m.bubble_of_step, 4) << "   formula "
      << FormulaBubbleOfStepText(pipeline.params.schedule) << " = "
      << FormatFixed(m.formula_bubble_of_step, 4) << "\n";
  out << "# transfers              " << m.transfers << " activations and gradients, "
      << FormatBytes(m.transfer_bytes) << ", " << FormatTime(m.transfer_ns) << " in flight in all\n";
  const PipelineBubbleExcess excess = ExplainPipelineBubble(m, shape);
  if (excess.above_formula) {
    out << "# note: the bubble is above the formula, which assumes free communication and\n";
    if (excess.communication) {
      out << "#       equal slots. Here a transfer between stages takes "
          << FormatTime(excess.transfer_ns) << " on average beside\n#       "
          << FormatTime(excess.forward_ns)
          << " per forward slot; 1F1B and ZB-H1 wait for every gradient's round\n"
          << "#       trip, GPipe only at the fill and drain. A wider model hides it:\n"
          << "#       --width 4096 --batch 256 --timing-only.\n";
    } else {
      out << "#       slots that all take as long (F = B" << (split ? " = W" : "") << ").\n"
          << "#       Here the average slot is F " << FormatTime(excess.forward_ns) << ", B "
          << FormatTime(excess.backward_ns)
          << (split ? ", W " + FormatTime(excess.weight_ns) : std::string())
          << ", and stage 0\n#       skips the input gradient of its first layer.\n";
    }
  }
}

std::string StepResultText(const RunView& v) {
  const PipelineOutcomeSummary& s = v.summary.Detail<PipelineOutcomeSummary>();
  if (!s.check.checked) return "not checked (" + NotCheckedText(v.args, v.prepared.Detail<PreparedPipeline>()) + ")";
  return StepCheckText(s.check.verdict, "after one step, every gradient, weight and the loss against its error bound "
                       "from the double-precision single-device reference", s.check.loss, s.check.reference_loss,
                       s.check.worst_tensor);
}

void JsonResult(JsonWriter& w, const RunView& v) {
  const PreparedPipeline& prepared = v.prepared.Detail<PreparedPipeline>();
  const PipelineOutcomeSummary& s = v.summary.Detail<PipelineOutcomeSummary>();
  const PipelineParams& params = prepared.pipeline.params;
  const PipelineMetrics& m = s.metrics;
  const std::string not_checked = NotCheckedText(v.args, prepared);
  w.Field("step_time_us", m.step_ns / 1e3);
  w.Field("span_us", m.span_ns / 1e3);
  w.Field("bubble_fraction", m.bubble_over_useful);
  w.Field("formula_bubble_fraction", m.formula_bubble_over_useful);
  w.Field("bubble_share_of_step", m.bubble_of_step);
  w.Field("formula_bubble_share_of_step", m.formula_bubble_of_step);
  w.Key("peak_inflight_per_stage");
  w.BeginArray();
  for (const PipelineStageMetrics& st : m.stages) w.Int(st.peak_inflight);
  w.EndArray();
  w.Key("formula_peak_inflight_per_stage");
  w.BeginArray();
  for (const PipelineStageMetrics& st : m.stages) w.Int(st.formula_peak_inflight);
  w.EndArray();
  w.Key("per_stage");
  w.BeginArray();
  for (std::size_t i = 0; i < m.stages.size(); ++i) {
    const PipelineStageMetrics& st = m.stages[i];
    w.BeginObject();
    w.Field("stage", static_cast<std::int64_t>(i));
    w.Field("layers", PipelineStageLayers(prepared.pipeline, static_cast<int>(i)));
    w.Field("forward_us", st.forward_ns / 1e3);
    w.Field("backward_us", st.backward_ns / 1e3);
    if (SplitsBackward(params.schedule)) w.Field("weight_gradient_us", st.weight_ns / 1e3);
    w.Field("busy_us", st.busy_ns / 1e3);
    w.Field("idle_us", st.idle_ns / 1e3);
    w.Field("bubble_fraction", st.bubble_over_useful);
    w.EndObject();
  }
  w.EndArray();
  w.Field("transfers", m.transfers);
  w.Field("transfer_bytes", m.transfer_bytes);
  WriteCheckJson(w, s.check.checked, s.check.correct,
                 {{"gradient_error", s.check.gradient_error}, {"weight_error", s.check.weight_error},
                  {"loss", s.check.loss}, {"reference_loss", s.check.reference_loss}},
                 not_checked);
}

}  // namespace

void PipelineRenderers(RunCommand& c) {
  c.adjust = [](const ParsedArgs&, const std::string&, ScenarioParams& params) {
    // A step too large to compute on the host is timed only (and says so).
    if (PipelineHostFlops(PipelineFromParams(params).params) > kMaxHostFlops) params.Set("timing_only", "true");
  };
  c.bind = BindBackendAndSeed<PreparedPipeline>;
  c.header = [](const PreparedView& v) {
    const PreparedPipeline& p = v.prepared.Detail<PreparedPipeline>();
    const MlpConfig& model = p.pipeline.params.model;
    return std::vector<std::string>{v.prepared.plan.name + " (batch " + std::to_string(model.batch) + ", " +
                                    std::to_string(model.batch / p.pipeline.params.shape.microbatches) +
                                    " rows per micro-batch, " + OptimizerName(model.optimizer) + ") on " +
                                    p.scenario.topology};
  };
  c.tables = Tables;
  c.result = StepResultText;
  c.json_result = JsonResult;
  c.verdict = [](const RunView& v) {
    const PipelineOutcomeSummary& s = v.summary.Detail<PipelineOutcomeSummary>();
    return s.check.checked ? s.check.verdict : NotChecked(NotCheckedText(v.args, v.prepared.Detail<PreparedPipeline>()));
  };
}

}  // namespace shardlab::cli
