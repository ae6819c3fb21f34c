// The metrics panel's part for a compared run: per phase and in total, A
// (the measured run, whichever is shown, as in the CLI) against B, the ratio,
// and the sentence that
// names the biggest cause of the gap: the numbers of `shardlab-cli compare`.
#include <cstdio>

#include <imgui.h>

#include "app/gui/model/compare_overlay.h"
#include "app/gui/views/draw_util.h"
#include "app/gui/views/views.h"
#include "app/gui/i18n/language.h"

namespace shardlab::gui {

void DrawCompareSummary(ViewContext& ctx) {
  const CompareOverlay* overlay = ctx.session.compare();
  if (overlay == nullptr) return;
  const Comparison& c = overlay->comparison();
  const Theme& theme = ctx.theme;
  ImGui::TextUnformatted(Tr("Compared with a second run of the plan"));
  // A is the measured run (the CLI's rule), the one on screen or the one added.
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim),
                     overlay->shown_is_a() ? Tr("A = %s (solid)   B = %s (outline)")
                                           : Tr("A = %s (outline)   B = %s (solid)"),
                     c.a_label.c_str(), c.b_label.c_str());
  if (ImGui::BeginTable("##compare_summary", 4, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn("A");
    ImGui::TableSetupColumn("B");
    ImGui::TableSetupColumn("B/A");
    ImGui::TableHeadersRow();
    for (const SummaryLine& line : OverlaySummary(c)) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(line.name.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatTime(line.a_ns).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatTime(line.b_ns).c_str());
      ImGui::TableNextColumn();
      const double shade = ErrorShade(line.a_ns, line.b_ns);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ErrorShadeColor(theme, shade)), "%.2fx", line.ratio);
    }
    ImGui::EndTable();
  }
  ImGui::TextWrapped("%s", c.explanation.c_str());
  ImGui::Separator();
}

}  // namespace shardlab::gui
