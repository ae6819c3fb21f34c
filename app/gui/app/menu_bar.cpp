#include "app/gui/app/menu_bar.h"

#include <cstdio>

#include <imgui.h>

namespace shardlab::gui {

MenuAction DrawMenuBar(const MenuBarInfo& info) {
  MenuAction action = MenuAction::kNone;
  // ImGui sizes the bar from FramePadding: pad the font to the pinned height.
  const float padding_y = (MenuBarHeightPx(ImGui::GetFontSize()) - ImGui::GetFontSize()) * 0.5f;
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(ImGui::GetStyle().FramePadding.x, padding_y));
  if (!ImGui::BeginMainMenuBar()) {
    ImGui::PopStyleVar();
    return action;
  }
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open trace...")) action = MenuAction::kOpenTrace;
    if (ImGui::MenuItem("Open trace to compare...", nullptr, false, info.can_compare)) {
      action = MenuAction::kOpenCompareTrace;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Export screenshot...")) action = MenuAction::kExportScreenshot;
    if (ImGui::MenuItem("Export Chrome trace...", nullptr, false, info.can_export_trace)) {
      action = MenuAction::kExportTrace;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) action = MenuAction::kQuit;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Dark theme", nullptr, info.theme == ThemeKind::kDark)) {
      action = MenuAction::kThemeDark;
    }
    if (ImGui::MenuItem("Light high-contrast theme (projectors)", nullptr,
                        info.theme == ThemeKind::kLight)) {
      action = MenuAction::kThemeLight;
    }
    ImGui::Separator();
    char size[48];
    std::snprintf(size, sizeof size, "Text size: %.0f%%", info.font_scale * 100.0f);
    ImGui::TextDisabled("%s", size);
    if (ImGui::MenuItem("Bigger text", "Ctrl +")) action = MenuAction::kFontBigger;
    if (ImGui::MenuItem("Smaller text", "Ctrl -")) action = MenuAction::kFontSmaller;
    if (ImGui::MenuItem("Normal text size", "Ctrl 0")) action = MenuAction::kFontReset;
    ImGui::Separator();
    if (ImGui::MenuItem("3D layout planner", nullptr, info.planner_open)) action = MenuAction::kTogglePlanner;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Labs")) {
    if (ImGui::MenuItem("Choose a lab...")) action = MenuAction::kShowLabs;
    if (ImGui::MenuItem("Hide the lab panel", nullptr, false, info.lab_panel_open)) action = MenuAction::kHideLabPanel;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keyboard shortcuts")) action = MenuAction::kShowShortcuts;
    if (ImGui::MenuItem("About ShardLab")) action = MenuAction::kShowAbout;
    ImGui::EndMenu();
  }
  if (!info.status.empty()) {
    const float width = ImGui::CalcTextSize(info.status.c_str()).x;
    const float x = ImGui::GetWindowWidth() - width - ImGui::GetStyle().ItemSpacing.x * 2.0f;
    if (x > ImGui::GetCursorPosX()) ImGui::SetCursorPosX(x);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(info.status_color), "%s", info.status.c_str());
  }
  ImGui::EndMainMenuBar();
  ImGui::PopStyleVar();
  return action;
}

}  // namespace shardlab::gui
