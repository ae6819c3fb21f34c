#include "app/gui/app/help_popups.h"

#include <imgui.h>

#include <string>
#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

/// Popup titles in the current language, with ids that stay put.
std::string ShortcutsTitle() { return std::string(Tr("Keyboard shortcuts")) + "###shortcuts"; }
std::string AboutTitle() { return std::string(Tr("About ShardLab")) + "###about"; }

bool g_open_shortcuts = false;  // UI thread only: set by the menu, read next frame
bool g_open_about = false;

#ifndef SHARDLAB_VERSION
#define SHARDLAB_VERSION "0.1.0"
#endif

void ShortcutRow(const char* keys, const char* what) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(keys);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(what);
}

void CloseButton() {
  ImGui::Spacing();
  if (ImGui::Button(Tr("Close")) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    ImGui::CloseCurrentPopup();
  }
}

}  // namespace

void OpenHelpPopup(HelpPopup popup) {
  (popup == HelpPopup::kShortcuts ? g_open_shortcuts : g_open_about) = true;
}

void DrawHelpPopups() {
  if (g_open_shortcuts) ImGui::OpenPopup(ShortcutsTitle().c_str());
  if (g_open_about) ImGui::OpenPopup(AboutTitle().c_str());
  g_open_shortcuts = g_open_about = false;

  const ImVec2 center = ImGui::GetMainViewport()->GetCenter();
  ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::BeginPopupModal(ShortcutsTitle().c_str(), nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    if (ImGui::BeginTable("##keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
      ShortcutRow(Tr("Space"), Tr("play / pause the replay"));
      ShortcutRow(Tr("Right arrow"), Tr("step: show one more logical step"));
      ShortcutRow(Tr("Left arrow"), Tr("step back"));
      ShortcutRow("R", Tr("reset the replay to the start"));
      ShortcutRow("Ctrl +  /  Ctrl -", Tr("bigger / smaller text (classrooms)"));
      ShortcutRow("Ctrl 0", Tr("normal text size"));
      ShortcutRow("Ctrl Q", Tr("quit"));
      ShortcutRow(Tr("Mouse wheel (timeline)"), Tr("zoom; drag to pan; hover an op for details"));
      ImGui::EndTable();
    }
    ImGui::TextDisabled(Tr("Keys do nothing while a text field has the keyboard."));
    CloseButton();
    ImGui::EndPopup();
  }

  ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::BeginPopupModal(AboutTitle().c_str(), nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("ShardLab %s", SHARDLAB_VERSION);
    ImGui::Spacing();
    ImGui::TextUnformatted(Tr(
        "A lab for learning how several GPUs cooperate on one model.\n"
        "Every scenario is a plan of sends, receives and reductions per GPU;\n"
        "a backend runs it (here: a simulator of real machines) and reports\n"
        "one event per operation, which these views replay in slow motion.\n"
        "\n"
        "Times are simulated unless a view says otherwise. The same runs\n"
        "are available headless: shardlab-cli run allreduce --help"));
    ImGui::TextDisabled("Dear ImGui %s, GLFW, OpenGL 3.3", IMGUI_VERSION);
    CloseButton();
    ImGui::EndPopup();
  }
}

}  // namespace shardlab::gui
