#include "app/gui/app/open_trace_dialog.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>

#include <imgui.h>
#include <imgui_stdlib.h>
#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

/// Popup titles in the current language, with ids that stay put.
std::string PopupId(bool compare) {
  return compare ? std::string(Tr("Open trace to compare")) + "###compare_trace"
                 : std::string(Tr("Open trace")) + "###open_trace";
}

}  // namespace

void OpenTraceDialog::Open() {
  open_requested_ = true;
  focus_field_ = true;
  error_.clear();
}

void OpenTraceDialog::Opened(const std::string& path) {
  recent_.erase(std::remove(recent_.begin(), recent_.end(), path), recent_.end());
  recent_.insert(recent_.begin(), path);
  if (recent_.size() > kMaxRecent) recent_.resize(kMaxRecent);
  error_.clear();
  close_requested_ = true;
}

bool OpenTraceDialog::Draw(const Theme& theme) {
  const bool compare = purpose_ == TraceDialogPurpose::kCompare;
  const std::string popup_id_text = PopupId(compare);
  const char* popup_id = popup_id_text.c_str();
  if (open_requested_) {
    ImGui::OpenPopup(popup_id);
    open_requested_ = false;
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal(popup_id, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return false;
  if (close_requested_) {
    close_requested_ = false;
    ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
    return false;
  }

  if (compare) {
    ImGui::TextUnformatted(Tr("Lay a second run of the plan shown over the timeline: e.g. the simulator's model"));
    ImGui::TextUnformatted(Tr("of the machine (shardlab-cli run ... --topology this --trace model.json) over a"));
    ImGui::TextUnformatted(Tr("measured trace. Its ops are drawn as outlines on the same rows, linked by op id."));
  } else {
    ImGui::TextUnformatted(Tr("Open a Chrome trace that ShardLab wrote (shardlab-cli run --trace, File > Export),"));
    ImGui::TextUnformatted(Tr("from any backend and any machine: a cluster's MPI run studied on a laptop."));
  }
  std::error_code cwd_error;
  const std::filesystem::path cwd = std::filesystem::current_path(cwd_error);
  ImGui::TextDisabled(Tr("Relative paths start in %s"), cwd_error ? Tr("the current directory") : cwd.c_str());
  if (focus_field_) {
    ImGui::SetKeyboardFocusHere();
    focus_field_ = false;
  }
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 34.0f);
  const bool entered =
      ImGui::InputTextWithHint("##trace_path", compare ? "model.json" : "run.json", &path_, ImGuiInputTextFlags_EnterReturnsTrue);
  if (!recent_.empty()) {
    ImGui::TextDisabled(Tr("Recent:"));
    for (const std::string& recent : recent_) {
      if (ImGui::Selectable(recent.c_str(), recent == path_)) path_ = recent;
    }
  }
  if (!error_.empty()) {
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 34.0f);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.error), "%s", error_.c_str());
    ImGui::PopTextWrapPos();
  }

  bool confirmed = false;
  const bool empty = path_.empty();
  ImGui::BeginDisabled(empty);
  if (ImGui::Button(Tr("Open")) || (entered && !empty)) confirmed = true;
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button(Tr("Cancel")) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    error_.clear();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
  return confirmed;
}

}  // namespace shardlab::gui
