// The App's side of the test log (test_log.h): after each frame, what
// changed that a person's input did (the scenario chosen, the replay's step,
// the selected op, a lab's answer graded), said once.
#include <imgui.h>

#include <GLFW/glfw3.h>

#include <string>

#include "app/gui/app/app.h"
#include "app/gui/app/test_log.h"
#include "app/gui/model/scenario_fields.h"

namespace shardlab::gui {
namespace {

const char* StatusWord(LabAnswerStatus status) {
  switch (status) {
    case LabAnswerStatus::kEmpty: return "empty";
    case LabAnswerStatus::kUnchecked: return "unchecked";
    case LabAnswerStatus::kCorrect: return "correct";
    case LabAnswerStatus::kWrong: return "wrong";
    case LabAnswerStatus::kMissing: return "missing";
    case LabAnswerStatus::kInvalid: return "invalid";
  }
  return "?";
}

}  // namespace

std::string App::TestLogParams(const ScenarioSettings& settings) {
  std::string line = settings.scenario;
  try {
    const ScenarioParams params = ParamsOf(settings);
    for (const ParamSpec& p : params.spec().params) line += " " + p.name + "=" + params.Text(p.name);
  } catch (const std::exception& e) {
    line += " (bad: " + std::string(e.what()) + ")";
  }
  return line;
}

void App::TestLogFrame() {
  if (!test_log::IsOpen()) return;
  TestLogSeen& seen = test_seen_;
  if (scenario_state_.edit.scenario != seen.scenario) {
    seen.scenario = scenario_state_.edit.scenario;
    test_log::Line("scenario " + seen.scenario);
  }
  if (!seen.edit_logged || !(scenario_state_.edit == seen.edit)) {
    seen.edit = scenario_state_.edit;
    seen.edit_logged = true;
    test_log::Line("edit " + TestLogParams(seen.edit));
  }
  const int steps = clock_.steps_shown();
  const int playing = clock_.playing() ? 1 : 0;
  if (steps != seen.steps || playing != seen.playing) {
    seen.steps = steps;
    seen.playing = playing;
    test_log::Line("clock " + std::to_string(steps) + " " + std::to_string(playing));
  }
  const long long op = insight_.selection().op;
  if (op != seen.op) {
    seen.op = op;
    test_log::Line(op != kNoOp ? "select-op " + std::to_string(op) : std::string("select-none"));
  }
  const LabPanelModel* lab = lab_panel_.model.get();
  const std::string lab_id = lab != nullptr && lab->is_open() ? lab->lab().id : "";
  if (lab_id != seen.lab) {
    seen.lab = lab_id;
    seen.lab_step = -1;
    seen.grades.clear();
    if (!lab_id.empty()) test_log::Line("lab-open " + lab_id);
  }
  if (!lab_id.empty()) {
    if (lab->step_index() != seen.lab_step) {
      seen.lab_step = lab->step_index();
      test_log::Line("lab-step " + std::to_string(seen.lab_step));
    }
    for (const LabQuestion& q : lab->step().questions) {
      const LabAnswerStatus status = lab->Status(q.id);
      const auto before = seen.grades.find(q.id);
      // Typing makes an answer "unchecked"; only what Check said is a grade.
      const bool graded = status != LabAnswerStatus::kEmpty && status != LabAnswerStatus::kUnchecked;
      if (before != seen.grades.end() && before->second == static_cast<int>(status)) continue;
      const bool first_look = before == seen.grades.end();
      seen.grades[q.id] = static_cast<int>(status);
      if (graded && !first_look) test_log::Line("lab-grade " + q.id + " " + StatusWord(status));
    }
  }
  // F11: a barrier (every line before "sync" is from this frame or an
  // earlier one); F12 saves the window (this frame) for a test to look at.
  if (ImGui::IsKeyPressed(GLFW_KEY_F12, false) && pending_screenshot_.empty()) {
    pending_screenshot_ = flags_.test_log_path + ".shot" + std::to_string(++seen.shots) + ".png";
    screenshot_delay_frames_ = 0;
  }
  test_log::EndFrame();
  if (ImGui::IsKeyPressed(GLFW_KEY_F11, false)) test_log::Line("sync " + std::to_string(++seen.syncs));
}

}  // namespace shardlab::gui
