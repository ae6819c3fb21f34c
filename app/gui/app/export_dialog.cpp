#include "app/gui/app/export_dialog.h"

#include <filesystem>
#include <string>
#include <system_error>

#include <imgui.h>
#include <imgui_stdlib.h>
#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

/// The popup's id stays put when its title changes language.
std::string PopupId() { return std::string(Tr("Export")) + "###file_name"; }

std::string CurrentDirectory() {
  std::error_code error;
  const std::filesystem::path cwd = std::filesystem::current_path(error);
  return error ? std::string(Tr("the current directory")) : cwd.string();
}

}  // namespace

void ExportDialog::Open(ExportKind kind, const std::string& default_name) {
  kind_ = kind;
  path_ = default_name;
  open_requested_ = true;
  focus_field_ = true;
}

bool ExportDialog::Draw(const Theme& theme) {
  if (open_requested_) {
    ImGui::OpenPopup(PopupId().c_str());
    open_requested_ = false;
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal(PopupId().c_str(), nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return false;

  const bool screenshot = kind_ == ExportKind::kScreenshot;
  ImGui::TextUnformatted(screenshot ? Tr("Save the window as a PNG image")
                                    : Tr("Save the run as a Chrome trace (open it in ui.perfetto.dev)"));
  ImGui::TextDisabled(Tr("Relative names are saved in %s"), CurrentDirectory().c_str());
  if (focus_field_) {
    ImGui::SetKeyboardFocusHere();
    focus_field_ = false;
  }
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 30.0f);
  const bool entered = ImGui::InputText("##path", &path_, ImGuiInputTextFlags_EnterReturnsTrue);
  const bool empty = path_.empty();
  if (empty) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.error), Tr("Type a file name."));
  }

  bool confirmed = false;
  ImGui::BeginDisabled(empty);
  if (ImGui::Button(Tr("Save")) || (entered && !empty)) confirmed = true;
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button(Tr("Cancel")) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    ImGui::CloseCurrentPopup();
  }
  if (confirmed) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
  return confirmed;
}

}  // namespace shardlab::gui
