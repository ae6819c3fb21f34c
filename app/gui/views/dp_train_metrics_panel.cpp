// The metrics panel of a dp-train run: the loss curves of the run and of
// its baseline (synchronous fp32 SGD), skipped steps marked, and the rows
// PrepareDpTrainView makes.
#include <algorithm>
#include <string>

#include <imgui.h>

#include "app/gui/i18n/language.h"
#include "app/gui/model/dp_train_view.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/views.h"
#include "engine/scenarios/dp_train_scenario.h"

namespace shardlab::gui {

void DrawDpTrainMetrics(ViewContext& ctx) {
  const Theme& theme = ctx.theme;
  const Session& session = ctx.session;
  const bool done = session.state() == SessionState::kDone;
  // The registry's summary of a dp-train run is the spec's quantities and the verdict.
  const DpTrainSummary summary{session.summary().values, session.summary().verdict, session.summary().line};
  const DpTrainView v = PrepareDpTrainView(session.prepared()->Detail<PreparedDpTrain>(), summary, done);
  ImGui::TextWrapped("%s", v.title.c_str());
  if (!v.loss.empty()) {
    float top = 0;
    for (const float x : v.loss) top = std::max(top, x);
    for (const float x : v.baseline) top = std::max(top, x);
    const ImVec2 size(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 4.5f);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::PushStyleColor(ImGuiCol_PlotLines, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::PlotLines("##baseline", v.baseline.data(), static_cast<int>(v.baseline.size()), 0, nullptr, 0.0f, top,
                     size);
    ImGui::PopStyleColor();
    ImGui::SetCursorScreenPos(at);
    ImGui::PushStyleColor(ImGuiCol_FrameBg, ImVec4(0, 0, 0, 0));
    ImGui::PlotLines("##loss", v.loss.data(), static_cast<int>(v.loss.size()), 0, nullptr, 0.0f, top, size);
    ImGui::PopStyleColor();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float n = static_cast<float>(std::max<std::size_t>(v.loss.size() - 1, 1));
    for (const int k : v.skipped_steps) {
      const float x = at.x + size.x * static_cast<float>(k) / n;
      draw->AddLine(ImVec2(x, at.y), ImVec2(x, at.y + size.y), theme.error, 1.5f);
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s%s", Tr("loss per step: this run (bright), synchronous fp32 baseline (dim)"),
                       v.skipped_steps.empty() ? "" : Tr("; red: a skipped step (overflow on some rank)"));
    ImGui::PopStyleColor();
  }
  if (v.rows.empty()) {
    ImGui::TextDisabled("%s", done ? "" : Tr("Running on the simulator (timing only; the arithmetic is done)."));
    return;
  }
  if (ImGui::BeginTable("##dp_train_metrics", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 6.0f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    for (const DpTrainRow& r : v.rows) MetricsRow(r.name.c_str(), r.value, r.note, r.bad ? theme.error : 0);
    ImGui::EndTable();
  }
}

}  // namespace shardlab::gui
