// The serving view (beside the timeline) and the metrics of an inference
// run: one lane per batching policy on one shared time axis, each request
// a row: queued (grey), prefill, decode; and the policies' numbers.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "app/gui/i18n/language.h"
#include "app/gui/model/serving_view.h"
#include "app/gui/views/draw_util.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/scenario_panels.h"

namespace shardlab::gui {

void DrawServingView(ViewContext& ctx, const ScenarioSettings*) {
  const Theme& theme = ctx.theme;
  const InferenceRun* run = ctx.session.inference();
  if (run == nullptr) {
    ImGui::TextDisabled("%s", Tr("No serving run yet: choose inference and press Run."));
    return;
  }
  const ServingChart chart = BuildServingChart(*run);
  if (chart.lanes.empty() || chart.axis_end_ns <= 0) return;
  const Color queued = theme.text_dim;
  const Color prefill = theme.PhaseColor(Phase::kForward);
  const Color decode = theme.PhaseColor(Phase::kBackward);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
  ImGui::TextWrapped("%s",
                     Tr("One row per request, by arrival: grey waits in the queue, then prefill, then decode; "
                        "under each policy, the KV-cache blocks in use."));
  ImGui::PopStyleColor();
  // The KV strips share one scale: the most blocks any policy held at once on replica 0.
  std::int64_t kv_peak = 0;
  for (const ServingLane& lane : chart.lanes)
    for (const auto& [t, blocks] : lane.kv_blocks) kv_peak = std::max(kv_peak, blocks);
  const std::string verdict = ServingVerdict(chart);
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const int lanes = static_cast<int>(chart.lanes.size());
  const float lane_h = std::max(20.0f, (avail.y - (verdict.empty() ? 0 : 2 * line_h)) / lanes);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const double ns_to_px = (avail.x - 4) / static_cast<double>(chart.axis_end_ns);
  for (const ServingLane& lane : chart.lanes) {
    ImGui::Text(Tr("%s: %.0f tokens/s, end-to-end p50 %s, p99 %s, useful %.0f%%"), lane.policy.c_str(),
                lane.tokens_per_s, FormatRunTime(static_cast<TimeNs>(lane.e2e_p50_ns)).c_str(),
                FormatRunTime(static_cast<TimeNs>(lane.e2e_p99_ns)).c_str(), 100 * lane.useful);
    const ImVec2 top = ImGui::GetCursorScreenPos();
    // Under the rows, a strip: replica 0's KV-cache blocks in use, filling and freeing.
    const float kv_h = std::max(6.0f, 0.18f * (lane_h - line_h));
    const float chart_h = std::max(4.0f, lane_h - line_h - 4 - kv_h - 2);
    const float row_h = chart_h / std::max<std::size_t>(lane.rows.size(), 1);
    list->AddRectFilled(top, ImVec2(top.x + avail.x - 4, top.y + chart_h), WithAlpha(theme.grid, 0.25f));
    for (std::size_t i = 0; i < lane.rows.size(); ++i) {
      const ServingRow& r = lane.rows[i];
      const float y0 = top.y + static_cast<float>(i) * row_h;
      const float y1 = y0 + std::max(row_h, 1.0f);
      auto bar = [&](TimeNs a, TimeNs b, Color c) {
        if (b <= a) return;
        list->AddRectFilled(ImVec2(top.x + static_cast<float>(a * ns_to_px), y0),
                            ImVec2(top.x + std::max(static_cast<float>(b * ns_to_px), static_cast<float>(a * ns_to_px) + 1), y1), c);
      };
      bar(r.arrival_ns, r.admitted_ns, queued);
      bar(r.admitted_ns, r.first_token_ns, prefill);
      bar(r.first_token_ns, r.finish_ns, decode);
    }
    // Where this policy served its last token.
    const float end_x = top.x + static_cast<float>(lane.makespan_ns * ns_to_px);
    list->AddLine(ImVec2(end_x, top.y), ImVec2(end_x, top.y + chart_h), theme.path, 2.0f);
    const float kv_top = top.y + chart_h + 2;
    list->AddRectFilled(ImVec2(top.x, kv_top), ImVec2(top.x + avail.x - 4, kv_top + kv_h), WithAlpha(theme.grid, 0.25f));
    if (kv_peak > 0) {
      for (std::size_t k = 0; k < lane.kv_blocks.size(); ++k) {
        const TimeNs t0 = lane.kv_blocks[k].first;
        const TimeNs t1 = k + 1 < lane.kv_blocks.size() ? lane.kv_blocks[k + 1].first : lane.makespan_ns;
        const float fill = std::min(1.0f, static_cast<float>(lane.kv_blocks[k].second) /
                                               static_cast<float>(kv_peak));
        list->AddRectFilled(ImVec2(top.x + static_cast<float>(t0 * ns_to_px), kv_top + kv_h * (1 - fill)),
                            ImVec2(top.x + static_cast<float>(std::max(t1, t0) * ns_to_px) + 1, kv_top + kv_h),
                            theme.PhaseColor(Phase::kAllGather));
      }
    }
    if (ImGui::IsMouseHoveringRect(ImVec2(top.x, kv_top), ImVec2(top.x + avail.x, kv_top + kv_h))) {
      ImGui::SetTooltip(Tr("KV-cache blocks in use on replica 0; full height: %lld blocks (the most any policy held; the cache has %lld)"),
                        static_cast<long long>(kv_peak), static_cast<long long>(chart.kv_blocks_per_replica));
    }
    ImGui::Dummy(ImVec2(avail.x - 4, chart_h + kv_h + 6));
  }
  if (!verdict.empty()) ImGui::TextWrapped("%s", verdict.c_str());
}

void DrawInferenceMetrics(ViewContext& ctx) {
  const InferenceRun* run = ctx.session.inference();
  if (run == nullptr) {
    ImGui::TextDisabled("%s", Tr("No run yet."));
    return;
  }
  const InferenceCheck& check = run->check;
  if (ImGui::BeginTable("##inference", 2)) {
    MetricsRow(Tr("logits"), check.checked ? VerdictWords(check.verdict.kind) : Tr("not checked"),
               check.checked ? check.verdict.Text() : check.not_checked_reason,
               check.checked && !check.verdict.correct() ? ctx.theme.error : 0);
    if (check.decode_allreduce_ns > 0) {
      MetricsRow(Tr("decode all-reduce"), FormatRunTime(check.decode_allreduce_ns),
                 Format(Tr("formula %s (ring, %lld tokens)"), FormatRunTime(check.decode_allreduce_formula_ns).c_str(),
                        static_cast<long long>(check.decode_allreduce_tokens)));
    }
    MetricsRow(Tr("all-reduces"), std::to_string(check.allreduces),
               Format(Tr("2 per layer per pass: %d expected"), check.allreduces_expected));
    ImGui::EndTable();
  }
  ImGui::Spacing();
  if (ImGui::BeginTable("##policies", 5, ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn(Tr("policy"));
    ImGui::TableSetupColumn(Tr("tokens/s"));
    ImGui::TableSetupColumn(Tr("TTFT p50"));
    ImGui::TableSetupColumn(Tr("E2E p50"));
    ImGui::TableSetupColumn(Tr("useful"));
    ImGui::TableHeadersRow();
    for (const ServingResult& r : run->results) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(BatchingPolicyName(r.policy));
      ImGui::TableNextColumn();
      ImGui::Text("%.0f", r.tokens_per_s);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatRunTime(static_cast<TimeNs>(r.ttft_ns.p50)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatRunTime(static_cast<TimeNs>(r.e2e_ns.p50)).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.0f%%", 100 * r.useful);
    }
    ImGui::EndTable();
  }
}

}  // namespace shardlab::gui
