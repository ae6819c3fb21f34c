#include "app/gui/app/menu_bar.h"

#include <imgui.h>

#include "app/gui/app/test_log.h"
#include "app/gui/i18n/language.h"

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
  if (ImGui::BeginMenu(Tr("File"))) {
    if (ImGui::MenuItem(Tr("Open trace..."))) action = MenuAction::kOpenTrace;
    if (ImGui::MenuItem(Tr("Open trace to compare..."), nullptr, false, info.can_compare)) {
      action = MenuAction::kOpenCompareTrace;
    }
    ImGui::Separator();
    if (ImGui::MenuItem(Tr("Export screenshot..."))) action = MenuAction::kExportScreenshot;
    if (ImGui::MenuItem(Tr("Export Chrome trace..."), nullptr, false, info.can_export_trace)) {
      action = MenuAction::kExportTrace;
    }
    ImGui::Separator();
    if (ImGui::MenuItem(Tr("Quit"), "Ctrl+Q")) action = MenuAction::kQuit;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(Tr("View"))) {
    if (ImGui::MenuItem(Tr("Dark theme"), nullptr, info.theme == ThemeKind::kDark)) {
      action = MenuAction::kThemeDark;
    }
    if (ImGui::MenuItem(Tr("Light high-contrast theme (projectors)"), nullptr,
                        info.theme == ThemeKind::kLight)) {
      action = MenuAction::kThemeLight;
    }
    ImGui::Separator();
    ImGui::TextDisabled(Tr("Text size: %.0f%%"), info.font_scale * 100.0f);
    if (ImGui::MenuItem(Tr("Bigger text"), "Ctrl +")) action = MenuAction::kFontBigger;
    if (ImGui::MenuItem(Tr("Smaller text"), "Ctrl -")) action = MenuAction::kFontSmaller;
    if (ImGui::MenuItem(Tr("Normal text size"), "Ctrl 0")) action = MenuAction::kFontReset;
    ImGui::Separator();
    if (ImGui::MenuItem(Tr("3D layout planner"), nullptr, info.planner_open)) action = MenuAction::kTogglePlanner;
    ImGui::Separator();
    // Each language in its own words, so a student who reads only one finds it.
    if (ImGui::BeginMenu(Tr("Language"))) {
      if (ImGui::MenuItem(LanguageName(Language::kEnglish), nullptr, info.language == Language::kEnglish)) {
        action = MenuAction::kLanguageEnglish;
      }
      // Without a CJK font its own name would be boxes; choosing it says why.
      const char* chinese = info.chinese_font ? LanguageName(Language::kChinese) : "Chinese (zh-CN)";
      if (ImGui::MenuItem(chinese, nullptr, info.language == Language::kChinese)) {
        action = MenuAction::kLanguageChinese;
      }
      ImGui::EndMenu();
    }
    ImGui::EndMenu();
  }
  // --test-log: where the menu's title stands (BeginMenu may open a window, so before it).
  const ImVec2 labs_at = ImGui::GetCursorScreenPos();
  test_log::MarkRect("menu Labs", labs_at.x, labs_at.y, labs_at.x + ImGui::CalcTextSize(Tr("Labs")).x,
                     labs_at.y + MenuBarHeightPx(ImGui::GetFontSize()));
  if (ImGui::BeginMenu(Tr("Labs"))) {
    if (ImGui::MenuItem(Tr("Choose a lab..."))) action = MenuAction::kShowLabs;
    test_log::MarkItem("menu-item choose-lab");
    if (ImGui::MenuItem(Tr("Hide the lab panel"), nullptr, false, info.lab_panel_open)) action = MenuAction::kHideLabPanel;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(Tr("Help"))) {
    if (ImGui::MenuItem(Tr("Keyboard shortcuts"))) action = MenuAction::kShowShortcuts;
    if (ImGui::MenuItem(Tr("About ShardLab"))) action = MenuAction::kShowAbout;
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
