// The metrics panel of a DP x PP x TP run: the step time and what of it was
// compute, the bytes and send time of each group kind (TP all-reduces,
// PP activations, DP gradients), memory per GPU, MFU, and whether the
// trained weights equal one device's.
#include <cstdio>
#include "app/gui/model/run_detail.h"
#include <string>

#include <imgui.h>

#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/views.h"
#include "engine/core/units.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/three_d_scenario.h"

namespace shardlab::gui {
namespace {

std::string Percent(double part, double whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return text;
}

/// What one group kind's traffic is in this run.
const char* KindWords(GroupKind kind, int zero_stage) {
  switch (kind) {
    case GroupKind::kTensor: return Tr("all-reduces of activations and their gradients");
    case GroupKind::kPipeline: return Tr("activations and gradients between stages");
    case GroupKind::kData: return zero_stage ? Tr("ZeRO-1 reduce-scatter + all-gather") : Tr("gradient all-reduce");
  }
  return "";
}

}  // namespace

void DrawThreeDMetrics(ViewContext& ctx) {
  const Theme& theme = ctx.theme;
  const Session& session = ctx.session;
  const PreparedThreeD& prepared = session.prepared()->Detail<PreparedThreeD>();
  const Plan& plan = *session.plan();
  const ThreeDParams& params = prepared.three_d.params;
  ImGui::TextWrapped("%s \xC2\xB7 %s \xC2\xB7 %s", params.grid.Text().c_str(), prepared.topology.name.c_str(),
                     prepared.scenario.backend.c_str());
  for (const std::string& warning : prepared.warnings) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.error), "%s", warning.c_str());
  }
  const bool done = session.state() == SessionState::kDone;
  const ThreeDSummary& out = SummaryDetail<ThreeDSummary>(session);
  if (ImGui::BeginTable("##three_d_metrics", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 6.0f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    if (done) {
      MetricsRow(Tr("step"), FormatRunTime(out.step_ns),
                 Format(Tr("%s clock, %d micro-batches per replica"), ClockOf(session), static_cast<int>(out.microbatches)));
      MetricsRow(Tr("compute"), FormatRunTime(out.compute_ns),
                 Format(Tr("%s of the step, the busiest GPU"), Percent(out.compute_ns, out.step_ns).c_str()));
      char bubble[96];
      std::snprintf(bubble, sizeof bubble, "%s: communication and bubble (formula (p-1)/m = %.3f)",
                    Percent(out.exposed_ns, out.step_ns).c_str(), out.bubble_formula);
      MetricsRow(Tr("not hidden"), FormatRunTime(out.exposed_ns), bubble);
      for (int k = 0; k < kGroupKindCount; ++k) {
        const ThreeDGroupTraffic& t = out.traffic[static_cast<std::size_t>(k)];
        const std::string name = Format(Tr("%s bytes"), GroupKindName(GroupKind(k)));
        MetricsRow(name.c_str(), FormatBytes(t.max_sent_bytes_per_rank),
                   Format(Tr("per GPU, %s sending: %s"), FormatRunTime(t.max_busy_ns_per_rank).c_str(),
                          KindWords(GroupKind(k), params.zero_stage)));
      }
      MetricsRow(Tr("memory"), FormatBytes(out.memory.tracked_peak_bytes),
                 Tr("peak per GPU, every fp32 buffer the simulator allocated"));
      MetricsRow(Tr("MFU"), Percent(out.mfu, 1.0),
                 Format(Tr("%.1f MFLOP per step / (step x %d GPUs x fp32 peak)"), out.model_flops / 1e6,
                        params.grid.ranks()));
      if (out.check.checked) {
        MetricsRow(Tr("result"), VerdictWords(out.check.verdict.kind),
                   out.check.verdict.Detail() +
                       Tr(" (weights, gradients and loss against their error bounds from one device in double)"),
                   out.check.correct ? theme.PhaseColor(Phase::kBroadcast) : theme.error);
      } else {
        MetricsRow(Tr("result"), Tr("not checked"), session.NotCheckedReason(out.check.not_checked_reason));
      }
    } else {
      MetricsRow(Tr("step"), Format(Tr("recording step %d of %d"), session.steps_done(), session.num_steps()), "");
    }
    MetricsRow(Tr("ticks"), std::to_string(plan.num_steps),
               Format(Tr("%s ops, %s events"), Grouped(static_cast<std::int64_t>(plan.ops.size())).c_str(),
                      Grouped(static_cast<std::int64_t>(session.store().event_count())).c_str()));
    DroppedEventsRow(session, theme);
    ImGui::EndTable();
  }
  if (done && out.check.checked && !out.check.correct) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.error), Tr("worst tensor: %s"),
                       out.check.worst_tensor.c_str());
  }
}

}  // namespace shardlab::gui
