// The planner panel (View > 3D layout planner, or --planner): the fields of
// `shardlab-cli plan` that matter most, a table of the layouts that fit,
// fastest first, and how many were rejected for each reason. A feasible
// row whose grid fits one box can set up the app's 3d scenario (the small
// MLP on that grid: the model itself is far too big to run for real).
#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/gui/model/scenario_fields.h"
#include "app/gui/views/panels.h"
#include "engine/core/units.h"
#include "engine/model/model_presets.h"
#include "engine/scenarios/plan_scenario.h"
#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

void Label(const char* text) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(text);
  ImGui::SameLine(ImGui::GetFontSize() * 7.5f);  // "GPU memory" fits
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14.0f);
}

}  // namespace

bool DrawPlannerPanel(const Theme& theme, PlannerPanelState& state, ScenarioSettings* three_d) {
  PlannerSettings& s = state.edit;
  Label("Model");
  if (ImGui::BeginCombo("##plan_model", s.model.c_str())) {
    for (const TransformerShape& m : ModelPresets()) {
      if (ImGui::Selectable(m.name.c_str(), m.name == s.model)) s.model = m.name;
    }
    ImGui::EndCombo();
  }
  Label("GPUs");
  ImGui::InputInt("##plan_gpus", &s.gpus, 8, 64);
  s.gpus = std::clamp(s.gpus, 1, 1 << 16);
  Label("Topology");
  ImGui::InputTextWithHint("##plan_topology", "8x-dgx-a100-ib, 64x-dgx-a100-ib, 8x-dgx-h100-superpod", &s.topology);
  Label("GPU memory");
  ImGui::InputTextWithHint("##plan_memory", "the GPU's own; or 80G, 40G", &s.gpu_memory);
  Label("Rows");
  ImGui::SliderInt("##plan_top", &s.top, 5, 100, "top %d", ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::Button(Tr("Plan")) || !state.planned) {
    state.table = RunPlanner(s);
    state.planned = true;
    state.selected = -1;
  }
  const PlannerTable& t = state.table;
  if (!t.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.error));
    ImGui::TextWrapped("%s", t.error.c_str());
    ImGui::PopStyleColor();
    return false;
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme.text_dim));
  ImGui::TextWrapped(Tr("%s. %d layouts fit, fastest first."), t.header.c_str(), t.feasible_count);
  ImGui::PopStyleColor();

  bool start = false;
  const float table_h = ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() *
                                                            (2.0f + static_cast<float>(t.rejected.size()));
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                     ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("##plan_rows", 12, kFlags, ImVec2(0, std::max(table_h, ImGui::GetFontSize() * 6)))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* name : {"#", "dp", "pp", "tp", "zero", "b", "m", "v", "recompute", "step", "MFU", "mem/GPU"}) {
      ImGui::TableSetupColumn(name);
    }
    ImGui::TableHeadersRow();
    for (int i = 0; i < static_cast<int>(t.rows.size()); ++i) {
      const PlannerRow& r = t.rows[static_cast<std::size_t>(i)];
      const ParallelLayout& l = r.layout;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      char rank[16];
      std::snprintf(rank, sizeof rank, "%d", r.rank);
      if (ImGui::Selectable(rank, state.selected == i, ImGuiSelectableFlags_SpanAllColumns)) state.selected = i;
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s", r.fits_app_3d ? "Select, then 'Set up 3d run' trains the small MLP on this grid"
                                              : "Too many GPUs (or ZeRO 2/3) for the app's 3d scenario");
      }
      for (int v : {l.dp, l.pp, l.tp, l.zero_stage, l.micro_batch, l.micro_batches, l.interleave}) {
        ImGui::TableNextColumn();
        ImGui::Text("%d", v);
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(RecomputeName(l.recompute));
      ImGui::TableNextColumn();
      ImGui::Text("%.2f s", r.step_s);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f%%", 100.0 * r.mfu);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatBytes(static_cast<Bytes>(r.memory_bytes)).c_str());
    }
    ImGui::EndTable();
  }
  ImGui::TextUnformatted(Tr("Rejected:"));
  for (const auto& [reason, count] : t.rejected) {
    ImGui::BulletText("%d  %s", count, reason.c_str());
  }
  const bool can_set_up = state.selected >= 0 && state.selected < static_cast<int>(t.rows.size()) &&
                          t.rows[static_cast<std::size_t>(state.selected)].fits_app_3d && three_d != nullptr;
  ImGui::BeginDisabled(!can_set_up);
  if (ImGui::Button(Tr("Set up 3d run (small MLP on this grid)"))) {
    const ParallelLayout& l = t.rows[static_cast<std::size_t>(state.selected)].layout;
    // The layout's grid on the run's scenario; its other fields stay as they were.
    const ScenarioParams run = LayoutRunParams(l);
    three_d->scenario = run.spec().name;
    for (const ParamSpec& p : run.spec().params) {
      if (run.IsSet(p.name)) SetParamText(three_d, run.spec(), p, run.Text(p.name));
    }
    start = true;
  }
  ImGui::EndDisabled();
  return start;
}

}  // namespace shardlab::gui
