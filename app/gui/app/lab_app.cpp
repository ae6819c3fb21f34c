// The App's side of the lab panel: where the panel stands (a column at the
// window's right, the other panels laid out in what is left), the runs it
// asks for, and the locks it keeps on the scenario panel. The panel's
// logic is LabPanelModel's; its drawing lab_panel.cpp's.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "app/gui/app/app.h"
#include "app/gui/app/menu_bar.h"
#include "app/gui/i18n/language.h"
#include "app/gui/model/lab_panel_model.h"

namespace shardlab::gui {

void App::InitLabPanel() {
  std::string labs_dir = flags_.labs_dir;
  if (labs_dir.empty() && !flags_.lab_path.empty()) {
    // `--lab labs/01-ring-allreduce`: the chooser lists its neighbours.
    std::filesystem::path lab(flags_.lab_path);
    if (!lab.has_filename()) lab = lab.parent_path();  // a trailing slash
    if (lab.filename() == "lab.toml") lab = lab.parent_path();
    labs_dir = lab.has_parent_path() ? lab.parent_path().string() : ".";
  }
  if (labs_dir.empty()) labs_dir = "labs";
  const std::string progress_dir = flags_.progress_dir.empty() ? DefaultLabProgressDir() : flags_.progress_dir;
  lab_panel_.model = std::make_unique<LabPanelModel>(labs_dir, progress_dir);
  lab_panel_.model->SetLanguage(LanguageCode(CurrentLanguage()));  // the lab's own text too
  if (flags_.lab_path.empty()) return;
  lab_panel_visible_ = true;
  if (!lab_panel_.model->Open(flags_.lab_path)) {
    // main() checked the lab already; a lab that broke since shows the chooser.
    lab_panel_.chooser_error = lab_panel_.model->error();
    lab_panel_.show_chooser = true;
    std::cerr << kAppProgram << ": warning: " << lab_panel_.model->error() << "\n";
  }
  if (!lab_panel_.model->warning().empty()) {
    std::cerr << kAppProgram << ": warning: " << lab_panel_.model->warning() << "\n";
  }
}

void App::ShowLabChooser() {
  lab_panel_visible_ = true;
  lab_panel_.show_chooser = true;
  lab_panel_.rows_stale = true;
}

float App::LabPanelWidth() const {
  if (!lab_panel_visible_ || !lab_panel_.model) return 0.0f;
  const ImGuiIO& io = ImGui::GetIO();
  return std::floor(LabPanelWidthPx(io.DisplaySize.x, ImGui::GetFontSize()));
}

void App::DrawLabColumn(ViewContext& ctx, float width) {
  const ImGuiIO& io = ImGui::GetIO();
  const float top = MenuBarHeightPx(ImGui::GetFontSize());
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x - width, top));
  ImGui::SetNextWindowSize(ImVec2(width, std::max(io.DisplaySize.y - top, 1.0f)));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
  const std::string title =
      lab_panel_.model->is_open() && !lab_panel_.show_chooser
          ? Format(Tr("Lab: %s"), lab_panel_.model->lab().id.c_str()) + "###lab"
          : std::string(Tr("Labs")) + "###lab";
  if (ImGui::Begin(title.c_str(), nullptr, flags)) {
    if (DrawLabPanel(ctx, lab_panel_) == LabPanelAction::kClose) lab_panel_visible_ = false;
  }
  ImGui::End();
}

bool App::StartLabRunIfAsked() {
  if (!lab_panel_.model) return false;
  const std::optional<ScenarioSettings> run = lab_panel_.model->TakeRunRequest(scenario_state_.edit);
  if (!run) return false;
  scenario_state_.edit = *run;
  if (const std::string problem = session_.Check(*run); !problem.empty()) {
    // The lab loader checks scenarios as the engine does; this should not happen.
    SetStatus(Format(Tr("The lab step's run cannot start: %s"), problem.c_str()), true);
    return false;
  }
  StartRun(*run);
  return true;
}

void App::EnforceLabLocks() {
  if (!lab_panel_visible_ || !lab_panel_.model) return;
  const std::vector<std::string> restored = lab_panel_.model->EnforceLocks(&scenario_state_.edit);
  if (restored.empty()) return;
  std::string names;
  for (const std::string& name : restored) names += (names.empty() ? "" : ", ") + name;
  SetStatus(Format(Tr("Locked by the lab step: %s (the step needs its value)"), names.c_str()), false);
}

}  // namespace shardlab::gui
