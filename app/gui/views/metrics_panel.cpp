// The metrics panel: the run in nccl-tests' language (time, algbw, busbw),
// the alpha-beta formula's prediction beside the measurement, and whether
// the result was checked correct.
//
//   ring all-reduce · 8 GPUs · 64 MiB · dgx-a100 · sim
//   time       401.3 µs        simulated clock
//   algbw      167.24 GB/s     size / time
//   busbw      292.67 GB/s     algbw × 2(n-1)/n
//   formula    403 µs          measured / formula = 0.996
//   result     correct         max_abs_err 0, 134,217,728 values
#include <cstdio>
#include "app/gui/model/run_detail.h"
#include <string>

#include <imgui.h>

#include "app/gui/model/formula_gap.h"
#include "app/gui/model/host_lane_rows.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/scenario_panels.h"
#include "app/gui/views/views.h"
#include "engine/core/units.h"
#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

std::string Gbps(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB/s", gbps);
  return text;
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

/// "algbw × 2(n-1)/n": the kind's def's factor.
std::string BusFactorText(CollectiveKind kind) {
  const CollectiveDef* def = FindCollective(kind);
  return def != nullptr ? std::string("algbw \xC3\x97 ") + def->busbw_formula : std::string();
}

std::string ScenarioLine(const PreparedCollective& p, const std::string& backend) {
  const CollectiveScenario& s = p.scenario;
  return CollectiveTitle(CollectiveKindName(s.kind), CollectiveAlgoName(s.algo)) + " \xC2\xB7 " +
         Format(Tr("%d GPUs"), s.ranks) + " \xC2\xB7 " + FormatBytes(s.size_bytes) + " (" +
         DTypeName(p.params.dtype) + ") \xC2\xB7 " + p.topology.name + " \xC2\xB7 " + backend;
}

/// An opened trace: what was recorded, where and with which clock; no
/// check (a trace holds times, not data).
void DrawTraceMetrics(const ViewContext& ctx, const LoadedTrace& trace) {
  const Session& session = ctx.session;
  ImGui::TextWrapped("%s", trace.title.empty() ? trace.plan.name.c_str() : trace.title.c_str());
  if (ImGui::BeginTable("##trace_metrics", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 4.5f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    MetricsRow(Tr("file"), trace.source, "");
    MetricsRow(Tr("backend"), trace.backend.empty() ? "?" : trace.backend, Format(Tr("%s clock"), trace.clock.c_str()));
    MetricsRow(Tr("time"), FormatRunTime(session.store().end_ns()), Tr("first start to last end"));
    MetricsRow(Tr("steps"), std::to_string(trace.plan.num_steps),
               Format(Tr("%s events on %d ranks"), Grouped(static_cast<std::int64_t>(trace.events.size())).c_str(),
                      trace.plan.num_ranks));
    MetricsRow(Tr("machine"), trace.topology.name, "");
    MetricsRow(Tr("result"), Tr("not checked"), "");
    ImGui::EndTable();
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.theme.text_dim));
  ImGui::TextWrapped("%s", Tr("A trace records when each operation ran, not the data: replay it step by step; "
                           "to check a result, run the scenario."));
  if (!trace.topology_note.empty()) ImGui::TextWrapped("%s", trace.topology_note.c_str());
  ImGui::PopStyleColor();
}

/// "Machine modelled: ..." for a run on "This machine" (nothing otherwise).
void DrawMachineModelled(const Session& session) {
  if (const std::string machine = session.machine_description(); !machine.empty()) {
    ImGui::TextWrapped("%s", Format(Tr("Machine modelled: %s"), machine.c_str()).c_str());
  }
}

}  // namespace

/// The run's own metrics (a scenario's panel, or the collective's).
static void DrawRunMetrics(ViewContext& ctx) {
  const Theme& theme = ctx.theme;
  const Session& session = ctx.session;
  const PreparedCollective* prepared = CollectiveOf(session.prepared());
  if (session.state() == SessionState::kFailed) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.error));
    ImGui::TextWrapped(Tr("The run failed: %s"), session.error().c_str());
    ImGui::PopStyleColor();
    ImGui::TextDisabled(Tr("The app is fine: change the scenario and press Run."));
    if (session.plan() == nullptr) return;
    ImGui::Separator();
  }
  DrawCompareSummary(ctx);
  // A scenario's own metrics (its spec names them: scenario_panels.h);
  // a collective's, and an opened trace's, follow.
  if (const ScenarioPanel* metrics = PanelOf(session.run_scenario(), PanelSlot::kMetrics)) {
    DrawMachineModelled(session);  // pipeline, tp, zero on "This machine"
    metrics->draw(ctx, nullptr);
    return;
  }
  if (const LoadedTrace* trace = session.trace()) {
    DrawTraceMetrics(ctx, *trace);
    return;
  }
  if (prepared == nullptr) {
    ImGui::TextDisabled(Tr("No run yet."));
    return;
  }
  ImGui::TextWrapped("%s", ScenarioLine(*prepared, session.backend()).c_str());
  DrawMachineModelled(session);

  const bool done = session.state() == SessionState::kDone;
  const CollectiveOutcomeSummary& out = SummaryDetail<CollectiveOutcomeSummary>(session);
  if (ImGui::BeginTable("##metrics", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 4.5f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    if (done) {
      MetricsRow(Tr("time"), FormatRunTime(out.metrics.time_ns), Format(Tr("%s clock"), ClockOf(session)));
      MetricsRow(Tr("algbw"), Gbps(out.metrics.algbw_gbps), Tr("size / time"));
      MetricsRow(Tr("busbw"), Gbps(out.metrics.busbw_gbps), BusFactorText(prepared->params.kind));
    } else {
      char text[64];
      std::snprintf(text, sizeof text, Tr("recording step %d of %d"), session.steps_done(),
                    session.num_steps());
      MetricsRow(Tr("time"), text, "");
    }
    MetricsRow(Tr("steps"), std::to_string(session.plan()->num_steps),
        Format(Tr("%s ops, %s events"), Grouped(static_cast<std::int64_t>(session.plan()->ops.size())).c_str(),
               Grouped(static_cast<std::int64_t>(session.store().event_count())).c_str()));
    if (prepared->predicted_ns > 0) {
      std::string note;
      if (done && out.metrics.time_ns > 0) {
        char ratio[64];
        std::snprintf(ratio, sizeof ratio, Tr("measured/formula %.3f"),
                      out.metrics.time_ns / prepared->predicted_ns);
        note = ratio;
      }
      MetricsRow(Tr("formula"), FormatRunTime(prepared->predicted_ns), note);
    }
    if (done) {
      if (out.checked) {
        MetricsRow(Tr("result"), out.verify.correct ? Tr("correct") : Tr("WRONG"),
            Format(Tr("max_abs_err %s (%s values checked)"), Number(out.verify.max_abs_err).c_str(),
                   Grouped(out.verify.checked).c_str()),
            out.verify.correct ? theme.PhaseColor(Phase::kBroadcast) : theme.error);
      } else {
        MetricsRow(Tr("result"), Tr("not checked"), "");
      }
    }
    DroppedEventsRow(session, theme);
    ImGui::EndTable();
  }
  if (const std::string reason = session.NotCheckedReason(out.not_checked_reason);
      done && !out.checked && !reason.empty()) {
    ImGui::TextDisabled("%s", reason.c_str());
  }
  if (!prepared->formula.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
    ImGui::TextWrapped("%s", prepared->formula.c_str());
    const std::string gap =
        done ? FormulaGapNote(RunClockKind(session, ClockKind::kSimulated), out.metrics.time_ns,
                              prepared->predicted_ns, HostLaneTotalNs(session.host_lane()))
             : "";
    if (!gap.empty()) ImGui::TextWrapped("%s", gap.c_str());
    ImGui::PopStyleColor();
  }
}

void DrawMetricsPanel(ViewContext& ctx) {
  // Whatever the scenario: the chain that sets its end, first while the
  // timeline outlines it, else after the run's own metrics.
  const bool path_first = ctx.insight != nullptr && ctx.insight->show_critical_path &&
                          ctx.insight->critical() != nullptr;
  if (path_first) DrawCriticalPathSummary(ctx);
  DrawRunMetrics(ctx);
  // Warm-up and timed runs (run_iterations.h): what the times above are.
  if (const std::string line = ctx.session.iterations_line(); !line.empty())
    ImGui::TextWrapped("%s", line.c_str());
  if (!path_first && ctx.session.plan() != nullptr) DrawCriticalPathSummary(ctx);
}

}  // namespace shardlab::gui
