// The metrics panel of a pipeline run: the measured bubble beside the
// textbook formulas, activations held per stage beside theirs, and whether
// the pipelined weights equal one device's after the step.
//
//   1F1B · 4 stages · 8 micro-batches · MLP 8×256, batch 64 · dgx-a100 · sim
//   step       47.5 µs       simulated clock
//   result     correct       gradients within 2.8e-07 of one device
//              measured  formula
//   bubble     0.745     0.375 = (p-1)/m
//   of step    0.427     0.273 = (p-1)/(m+p-1)
//   held       4 3 2 1   4 3 2 1
//   stage  layers  F  B  bubble  held     (one row per stage)
#include <algorithm>
#include "app/gui/model/run_detail.h"
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/views.h"
#include "engine/core/units.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/pipeline_scenario.h"

namespace shardlab::gui {
namespace {

std::string Fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

/// "2.45", "881", "3520": µs with three significant digits or more.
std::string Micros(TimeNs ns) {
  const double us = ns / 1e3;
  return Fixed(us, us < 10 ? 2 : us < 100 ? 1 : 0);
}

std::string ScenarioLine(const PreparedPipeline& p) {
  const PipelineParams& params = p.pipeline.params;
  const std::string dot = " \xC2\xB7 ";
  std::string line = std::string(PipelineScheduleTitle(params.schedule)) + dot +
                     Format(Tr("%d stages"), params.shape.stages) + dot +
                     Format(Tr("%d micro-batches"), params.shape.microbatches);
  if (params.shape.chunks > 1) line += dot + Format(Tr("%d chunks"), params.shape.chunks);
  return line + dot + "MLP " + std::to_string(params.model.layers) + "\xC3\x97" +
         std::to_string(params.model.width) + Format(Tr(", batch %d"), params.model.batch) +
         dot + p.topology.name + dot + p.scenario.backend;
}

/// "4 3 2 1" (long pipelines: the first few, then "...").
std::string PerStage(const std::vector<PipelineStageMetrics>& stages, bool formula) {
  constexpr std::size_t kShown = 12;
  std::string text;
  for (std::size_t i = 0; i < stages.size() && i < kShown; ++i) {
    text += (i == 0 ? "" : " ") +
            std::to_string(formula ? stages[i].formula_peak_inflight : stages[i].peak_inflight);
  }
  if (stages.size() > kShown) text += " ...";
  return text;
}

void StageTable(const PreparedPipeline& prepared, const PipelineMetrics& m) {
  const bool split = SplitsBackward(prepared.pipeline.params.schedule);
  const int columns = split ? 7 : 6;
  if (!ImGui::BeginTable("##stages", columns,
                         ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                             ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV,
                         ImVec2(0, ImGui::GetTextLineHeightWithSpacing() *
                                       static_cast<float>(std::min<std::size_t>(m.stages.size(), 8) + 1) +
                                   4))) {
    return;
  }
  ImGui::TableSetupScrollFreeze(0, 1);
  // Times in µs without a unit per cell: seven columns must fit the panel.
  for (const char* name : {Tr("stage"), Tr("layers"), "F \xC2\xB5s", "B \xC2\xB5s"}) ImGui::TableSetupColumn(name);
  if (split) ImGui::TableSetupColumn("W \xC2\xB5s");
  for (const char* name : {Tr("bubble"), Tr("held")}) ImGui::TableSetupColumn(name);
  ImGui::TableHeadersRow();
  for (std::size_t s = 0; s < m.stages.size(); ++s) {
    const PipelineStageMetrics& st = m.stages[s];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("GPU%zu", s);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(PipelineStageLayers(prepared.pipeline, static_cast<int>(s)).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(Micros(st.forward_ns).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(Micros(st.backward_ns).c_str());
    if (split) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(Micros(st.weight_ns).c_str());
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(Fixed(st.bubble_over_useful, 3).c_str());
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip(Tr("idle %s over busy %s"), FormatRunTime(st.idle_ns).c_str(),
                        FormatRunTime(st.busy_ns).c_str());
    }
    ImGui::TableNextColumn();
    ImGui::Text("%d (%d)", st.peak_inflight, st.formula_peak_inflight);
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip(Tr("most micro-batch activations held at once (formula in brackets)"));
    }
  }
  ImGui::EndTable();
}

/// Measured beside the formula, one row each: the bubble relative to useful
/// time and to the step, and the activations each stage held.
void FormulaTable(PipelineSchedule schedule, const PipelineMetrics& m) {
  if (!ImGui::BeginTable("##formulas", 3, ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 4.5f);
  ImGui::TableSetupColumn(Tr("measured"));
  ImGui::TableSetupColumn(Tr("formula"), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  auto row = [](const char* name, const std::string& measured, const std::string& formula,
                const char* tooltip) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", name);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tooltip);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(measured.c_str());
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", formula.c_str());
  };
  row(Tr("bubble"), Fixed(m.bubble_over_useful, 3),
      Fixed(m.formula_bubble_over_useful, 3) + " = " + FormulaBubbleOverUsefulText(schedule),
      Tr("idle time over useful (busy) time, summed over the stages"));
  row(Tr("of step"), Fixed(m.bubble_of_step, 3),
      Fixed(m.formula_bubble_of_step, 3) + " = " + FormulaBubbleOfStepText(schedule),
      Tr("idle time as a share of every stage's forward/backward span"));
  row(Tr("held"), PerStage(m.stages, false), PerStage(m.stages, true),
      Tr("most micro-batch activations a stage held at once, stage 0 first"));
  ImGui::EndTable();
}

/// Why the bubble is above the formula, in a sentence a student can act on.
std::string ExcessSentence(const PipelineBubbleExcess& e, bool split) {
  if (e.communication) {
    return Format(Tr("Above the formula, which assumes free communication: a transfer between stages takes %s "
                     "beside %s per forward slot. 1F1B and ZB-H1 wait for every gradient's round trip, GPipe only "
                     "at the fill and drain. A wider model (width 4096, batch 256, timing only) hides it."),
                  FormatRunTime(e.transfer_ns).c_str(), FormatRunTime(e.forward_ns).c_str());
  }
  if (split) {
    return Format(Tr("Above the formula, which assumes every slot takes as long (F = B = W): here F %s, B %s, W %s "
                     "on average, and stage 0 skips its first layer's input gradient."),
                  FormatRunTime(e.forward_ns).c_str(), FormatRunTime(e.backward_ns).c_str(),
                  FormatRunTime(e.weight_ns).c_str());
  }
  return Format(Tr("Above the formula, which assumes every slot takes as long (F = B): here F %s, B %s on average, "
                   "and stage 0 skips its first layer's input gradient."),
                FormatRunTime(e.forward_ns).c_str(), FormatRunTime(e.backward_ns).c_str());
}

}  // namespace

void DrawPipelineMetrics(ViewContext& ctx) {
  const Theme& theme = ctx.theme;
  const Session& session = ctx.session;
  const PreparedPipeline& prepared = session.prepared()->Detail<PreparedPipeline>();
  const Plan& plan = *session.plan();
  const PipelineParams& params = prepared.pipeline.params;
  ImGui::TextWrapped("%s", ScenarioLine(prepared).c_str());

  const bool done = session.state() == SessionState::kDone;
  const PipelineOutcomeSummary& out = SummaryDetail<PipelineOutcomeSummary>(session);
  const PipelineMetrics& m = out.metrics;
  const PipelineCheck& check = out.check;
  if (ImGui::BeginTable("##pipeline_metrics", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 4.5f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    if (done) {
      MetricsRow(Tr("step"), FormatRunTime(m.step_ns), Format(Tr("%s clock"), ClockOf(session)));
      MetricsRow(Tr("transfers"), Grouped(m.transfers),
                 Format(Tr("%s, %s in all"), FormatBytes(m.transfer_bytes).c_str(), FormatRunTime(m.transfer_ns).c_str()));
    } else {
      MetricsRow(Tr("step"), Format(Tr("recording step %d of %d"), session.steps_done(), session.num_steps()), "");
    }
    MetricsRow(Tr("ticks"), std::to_string(plan.num_steps),
               Format(Tr("%s ops, %s events"), Grouped(static_cast<std::int64_t>(plan.ops.size())).c_str(),
                      Grouped(static_cast<std::int64_t>(session.store().event_count())).c_str()));
    if (done) {
      if (check.checked) {
        MetricsRow(Tr("result"), VerdictWords(check.verdict.kind),
                   check.verdict.Detail() + Tr(" (after the step, gradients, weights and loss against their"
                                               " error bounds from one device in double)"),
                   check.correct ? theme.PhaseColor(Phase::kBroadcast) : theme.error);
        MetricsRow(Tr("loss"), Fixed(check.loss, 4), Format(Tr("one device: %s"), Fixed(check.reference_loss, 4).c_str()));
      } else {
        MetricsRow(Tr("result"), Tr("not checked"), "");
      }
    }
    DroppedEventsRow(session, theme);
    ImGui::EndTable();
  }
  if (!done) return;
  FormulaTable(params.schedule, m);
  if (const std::string reason = session.NotCheckedReason(check.not_checked_reason);
      !check.checked && !reason.empty()) {
    ImGui::TextDisabled("%s", reason.c_str());
  }
  if (!check.checked || check.correct) {
    // nothing more to say about the result
  } else {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.error), "worst tensor: %s",
                       check.worst_tensor.c_str());
  }
  const PipelineBubbleExcess excess = ExplainPipelineBubble(m, params.shape);
  if (excess.above_formula) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
    ImGui::TextWrapped("%s", ExcessSentence(excess, SplitsBackward(params.schedule)).c_str());
    ImGui::PopStyleColor();
  }
  ImGui::Spacing();
  StageTable(prepared, m);
}

}  // namespace shardlab::gui
