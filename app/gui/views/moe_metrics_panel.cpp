// The metrics panel of one MoE layer: the step cut into router, dispatch,
// experts and combine; tokens per expert as small bars (the capacity as a
// line), dropped tokens, the straggler GPU and its load beside the mean,
// the all-to-all bytes beside the hand count, and the check.
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
#include "engine/scenarios/moe_scenario.h"

namespace shardlab::gui {
namespace {

/// One bar per expert, coloured by the GPU it lives on; the line is the
/// most rows one expert may take (capacity per rank x ranks).
void TokensPerExpertBars(const Theme& theme, const MoeRouting& routing) {
  const int experts = static_cast<int>(routing.kept_per_expert.size());
  if (experts == 0) return;
  const std::int64_t cap = std::int64_t{routing.capacity_per_rank} * routing.ranks;
  int top = std::max<int>(1, static_cast<int>(cap));
  for (int e = 0; e < experts; ++e) top = std::max(top, routing.routed[static_cast<std::size_t>(e)]);
  const float height = ImGui::GetFontSize() * 4.0f;
  const float width = ImGui::GetContentRegionAvail().x;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float slot = width / static_cast<float>(experts);
  const float bar = std::max(1.0f, slot * 0.7f);
  int hovered = -1;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (int e = 0; e < experts; ++e) {
    const float x = at.x + slot * static_cast<float>(e) + (slot - bar) / 2;
    const float kept = height * static_cast<float>(routing.kept_per_expert[static_cast<std::size_t>(e)]) / top;
    const float routed = height * static_cast<float>(routing.routed[static_cast<std::size_t>(e)]) / top;
    const ImU32 color = theme.RankColor(routing.rank_of_expert(e));
    // Routed but dropped: an outline above the kept rows.
    draw->AddRect(ImVec2(x, at.y + height - routed), ImVec2(x + bar, at.y + height), theme.text_dim);
    draw->AddRectFilled(ImVec2(x, at.y + height - kept), ImVec2(x + bar, at.y + height), color);
    if (mouse.x >= at.x + slot * e && mouse.x < at.x + slot * (e + 1) && mouse.y >= at.y && mouse.y <= at.y + height) {
      hovered = e;
    }
  }
  const float cap_y = at.y + height - height * static_cast<float>(cap) / top;
  draw->AddLine(ImVec2(at.x, cap_y), ImVec2(at.x + width, cap_y), theme.error, 1.5f);
  ImGui::Dummy(ImVec2(width, height));
  if (hovered >= 0) {
    const auto e = static_cast<std::size_t>(hovered);
    ImGui::SetTooltip(Tr("expert %d on GPU %d\n%d choices routed to it, %d computed, %d dropped\ncapacity %lld rows"),
                      hovered, routing.rank_of_expert(hovered), routing.routed[e], routing.kept_per_expert[e],
                      routing.routed[e] - routing.kept_per_expert[e], static_cast<long long>(cap));
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(Tr("tokens per expert, coloured by GPU (bar: computed, outline: routed, red line: capacity)"));
  ImGui::PopStyleColor();
}

}  // namespace

void DrawMoeMetrics(ViewContext& ctx) {
  const Theme& theme = ctx.theme;
  const Session& session = ctx.session;
  const PreparedMoe& prepared = session.prepared()->Detail<PreparedMoe>();
  const MoeLayerConfig& c = prepared.layer.config;
  const MoeRouting& routing = prepared.layer.routing;
  ImGui::TextWrapped(Tr("MoE \xC2\xB7 %d experts on %d GPUs \xC2\xB7 top-%d \xC2\xB7 T %d \xC2\xB7 H %d \xC2\xB7 F %d "
                     "\xC2\xB7 skew %s \xC2\xB7 %s"),
                     c.experts, c.ranks, c.top_k, c.tokens, c.hidden, c.ffn, MoeSkewName(c.skew),
                     prepared.topology.name.c_str());
  const bool done = session.state() == SessionState::kDone;
  const MoeSummary& out = SummaryDetail<MoeSummary>(session);
  const MoeMetrics& m = out.metrics;
  if (ImGui::BeginTable("##moe_metrics", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 6.0f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    if (done) {
      MetricsRow(Tr("step"), FormatRunTime(m.step_ns), Format(Tr("%s clock"), ClockOf(session)));
      MetricsRow(Tr("phases"),
                 FormatRunTime(m.router_ns) + " / " + FormatRunTime(m.dispatch_ns) + " / " +
                     FormatRunTime(m.experts_ns) + " / " + FormatRunTime(m.combine_ns),
                 Tr("router / dispatch / experts / combine"));
      if (m.straggler >= 0) {
        const std::string note = Format(Tr("%.2fx the mean rows, %.2fx the mean expert time: the others wait"),
                                        m.straggler_load, m.straggler_time);
        MetricsRow(Tr("straggler"), "GPU " + std::to_string(m.straggler), note,
                   m.straggler_load > 1.2 ? theme.error : 0);
      }
      MetricsRow(Tr("all-to-all"), out.bytes_match ? Tr("bytes as counted") : Tr("bytes DIFFER"),
                 Format(Tr("%d sends; every GPU's bytes against the hand count"), static_cast<int>(m.transfers)),
                 out.bytes_match ? theme.PhaseColor(Phase::kBroadcast) : theme.error);
      if (out.check.checked) {
        MetricsRow(Tr("result"), VerdictWords(out.check.verdict.kind),
                   out.check.verdict.Detail() +
                       Tr(" (outputs and gates against their error bounds from one device in double)"),
                   out.check.correct ? theme.PhaseColor(Phase::kBroadcast) : theme.error);
      } else {
        MetricsRow(Tr("result"), Tr("not checked"), session.NotCheckedReason(out.check.not_checked_reason));
      }
    } else {
      MetricsRow(Tr("step"), Format(Tr("recording step %d of %d"), session.steps_done(), session.num_steps()), "");
    }
    MetricsRow(Tr("dropped"), Grouped(routing.dropped),
               Format(Tr("of %s choices; capacity %d per expert and source GPU"),
                      Grouped(std::int64_t{c.tokens} * c.top_k).c_str(), static_cast<int>(routing.capacity_per_rank)),
               routing.dropped > 0 ? theme.error : 0);
    DroppedEventsRow(session, theme);
    ImGui::EndTable();
  }
  TokensPerExpertBars(theme, routing);
}

}  // namespace shardlab::gui
