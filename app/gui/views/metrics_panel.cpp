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
#include <string>

#include <imgui.h>

#include "app/gui/model/formula_gap.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/views.h"
#include "engine/core/units.h"

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

const char* BusFactorText(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "algbw \xC3\x97 2(n-1)/n";
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll: return "algbw \xC3\x97 (n-1)/n";
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce: return "algbw \xC3\x97 1";
  }
  return "";
}

std::string ScenarioLine(const PreparedCollective& p, const std::string& backend) {
  const CollectiveScenario& s = p.scenario;
  return CollectiveTitle(CollectiveKindName(s.kind), CollectiveAlgoName(s.algo)) + " \xC2\xB7 " +
         std::to_string(s.ranks) + " GPUs \xC2\xB7 " + FormatBytes(s.size_bytes) + " (" +
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
    MetricsRow("file", trace.source, "");
    MetricsRow("backend", trace.backend.empty() ? "?" : trace.backend, trace.clock + " clock");
    MetricsRow("time", FormatRunTime(session.store().end_ns()), "first start to last end");
    MetricsRow("steps", std::to_string(trace.plan.num_steps),
               Grouped(static_cast<std::int64_t>(trace.events.size())) + " events on " +
                   std::to_string(trace.plan.num_ranks) + " ranks");
    MetricsRow("machine", trace.topology.name, "");
    MetricsRow("result", "not checked", "");
    ImGui::EndTable();
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.theme.text_dim));
  ImGui::TextWrapped("A trace records when each operation ran, not the data: replay it step by step; "
                     "to check a result, run the scenario.");
  if (!trace.topology_note.empty()) ImGui::TextWrapped("%s", trace.topology_note.c_str());
  ImGui::PopStyleColor();
}

}  // namespace

void DrawMetricsPanel(ViewContext& ctx) {
  const Theme& theme = ctx.theme;
  const Session& session = ctx.session;
  const PreparedCollective* prepared = session.prepared();
  if (session.state() == SessionState::kFailed) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.error));
    ImGui::TextWrapped("The run failed: %s", session.error().c_str());
    ImGui::PopStyleColor();
    ImGui::TextDisabled("The app is fine: change the scenario and press Run.");
    if (session.plan() == nullptr) return;
    ImGui::Separator();
  }
  DrawCompareSummary(ctx);
  if (session.pipeline() != nullptr) {
    DrawPipelineMetrics(ctx);
    return;
  }
  if (session.tp() != nullptr) {
    DrawTpMetrics(ctx);
    return;
  }
  if (session.zero() != nullptr) {
    DrawZeroMetrics(ctx);
    return;
  }
  if (session.three_d() != nullptr) {
    DrawThreeDMetrics(ctx);
    return;
  }
  if (session.moe() != nullptr) {
    DrawMoeMetrics(ctx);
    return;
  }
  if (session.dp_train() != nullptr) {
    DrawDpTrainMetrics(ctx);
    return;
  }
  if (const LoadedTrace* trace = session.trace()) {
    DrawTraceMetrics(ctx, *trace);
    return;
  }
  if (prepared == nullptr) {
    ImGui::TextDisabled("No run yet.");
    return;
  }
  ImGui::TextWrapped("%s", ScenarioLine(*prepared, session.backend()).c_str());

  const bool done = session.state() == SessionState::kDone;
  const CollectiveOutcomeSummary& out = session.outcome();
  if (ImGui::BeginTable("##metrics", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 4.5f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    if (done) {
      MetricsRow("time", FormatRunTime(out.metrics.time_ns), std::string(ClockOf(session)) + " clock");
      MetricsRow("algbw", Gbps(out.metrics.algbw_gbps), "size / time");
      MetricsRow("busbw", Gbps(out.metrics.busbw_gbps), BusFactorText(prepared->params.kind));
    } else {
      char text[64];
      std::snprintf(text, sizeof text, "recording step %d of %d", session.steps_done(),
                    session.num_steps());
      MetricsRow("time", text, "");
    }
    MetricsRow("steps", std::to_string(prepared->plan.num_steps),
        Grouped(static_cast<std::int64_t>(prepared->plan.ops.size())) + " ops, " +
            Grouped(static_cast<std::int64_t>(session.store().event_count())) + " events");
    if (prepared->predicted_ns > 0) {
      std::string note;
      if (done && out.metrics.time_ns > 0) {
        char ratio[64];
        std::snprintf(ratio, sizeof ratio, "measured/formula %.3f",
                      out.metrics.time_ns / prepared->predicted_ns);
        note = ratio;
      }
      MetricsRow("formula", FormatRunTime(prepared->predicted_ns), note);
    }
    if (done) {
      if (out.checked) {
        MetricsRow("result", out.verify.correct ? "correct" : "WRONG",
            "max_abs_err " + Number(out.verify.max_abs_err) + " (" +
                Grouped(out.verify.checked) + " values checked)",
            out.verify.correct ? theme.PhaseColor(Phase::kBroadcast) : theme.error);
      } else {
        MetricsRow("result", "not checked", "");
      }
    }
    DroppedEventsRow(session, theme);
    ImGui::EndTable();
  }
  if (done && !out.checked && !out.not_checked_reason.empty()) {
    ImGui::TextDisabled("%s", out.not_checked_reason.c_str());
  }
  if (!prepared->formula.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
    ImGui::TextWrapped("%s", prepared->formula.c_str());
    const std::string gap =
        done ? FormulaGapNote(RunClockKind(session, ClockKind::kSimulated), out.metrics.time_ns,
                              prepared->predicted_ns)
             : "";
    if (!gap.empty()) ImGui::TextWrapped("%s", gap.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace shardlab::gui
