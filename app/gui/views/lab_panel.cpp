#include "app/gui/views/lab_panel.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/gui/app/fonts.h"
#include "app/gui/app/test_log.h"
#include "app/gui/views/draw_util.h"
#include "engine/core/error.h"
#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

ImVec4 Vec(Color color) { return ImGui::ColorConvertU32ToFloat4(color); }

/// Green for a correct answer, readable on either theme.
Color CorrectColor(const Theme& theme) {
  return theme.kind == ThemeKind::kDark ? IM_COL32(110, 210, 130, 255) : IM_COL32(0, 110, 40, 255);
}

/// Amber for hints and notes.
Color NoteColor(const Theme& theme) {
  return theme.kind == ThemeKind::kDark ? IM_COL32(235, 190, 90, 255) : IM_COL32(140, 80, 0, 255);
}

/// Puts the next button, labelled `label`, on the current line when it
/// still fits there, else on a new one: nothing is cut at the panel's edge,
/// whatever the text size.
void SameLineIfFits(const char* label) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float width = ImGui::CalcTextSize(label, nullptr, true).x + 2.0f * style.FramePadding.x;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + style.ItemSpacing.x + width <= right) ImGui::SameLine();
}

void WrappedColored(Color color, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, Vec(color));
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

/// The step text: paragraphs wrapped to the panel; runs of lines starting
/// with four spaces (formulas, tables) kept as written, on a tinted block.
void DrawStepText(const Theme& theme, const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  std::string paragraph;
  const auto flush = [&] {
    if (paragraph.empty()) return;
    ImGui::TextWrapped("%s", paragraph.c_str());
    ImGui::Spacing();
    paragraph.clear();
  };
  std::size_t i = 0;
  while (i < lines.size()) {
    const std::string& line = lines[i];
    if (line.rfind("    ", 0) == 0) {
      flush();
      // A block of preformatted lines: one tinted rectangle behind them.
      // A block of preformatted lines in the fixed-width font, on a tinted
      // child that scrolls sideways when a line is wider than the panel
      // (nothing is cut off unseen).
      std::vector<std::string> block;
      while (i < lines.size() && lines[i].rfind("    ", 0) == 0) block.push_back(lines[i++].substr(4));
      ImFont* mono = MonoFont();
      if (mono != nullptr) ImGui::PushFont(mono);
      float widest = 0.0f;
      for (const std::string& pre : block) widest = std::max(widest, ImGui::CalcTextSize(pre.c_str()).x);
      const ImGuiStyle& style = ImGui::GetStyle();
      const float avail = ImGui::GetContentRegionAvail().x;
      const bool scrolls = widest + 2.0f * style.WindowPadding.x > avail;
      const float height = static_cast<float>(block.size()) * ImGui::GetTextLineHeightWithSpacing() +
                           2.0f * style.WindowPadding.y + (scrolls ? style.ScrollbarSize : 0.0f);
      ImGui::PushStyleColor(ImGuiCol_ChildBg, Vec(WithAlpha(theme.grid, 0.55f)));
      ImGui::PushID(static_cast<int>(i));
      ImGui::BeginChild("##pre", ImVec2(avail, height), false,
                        ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_AlwaysUseWindowPadding);
      for (const std::string& pre : block) ImGui::TextUnformatted(pre.c_str());
      ImGui::EndChild();
      ImGui::PopID();
      ImGui::PopStyleColor();
      if (mono != nullptr) ImGui::PopFont();
      ImGui::Spacing();
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      flush();
    } else {
      paragraph += (paragraph.empty() ? "" : " ") + line;
    }
    ++i;
  }
  flush();
}

void DrawChooser(const Theme& theme, LabPanelState& state) {
  LabPanelModel& model = *state.model;
  if (state.rows_stale) {
    state.rows = model.ListLabs();
    state.rows_stale = false;
  }
  ImGui::TextWrapped(Tr("Guided labs in %s"), model.labs_dir().c_str());
  if (model.is_open() && ImGui::Button(Tr("Back to the lab"))) state.show_chooser = false;
  if (!state.chooser_error.empty()) WrappedColored(theme.error, state.chooser_error);
  if (state.rows.empty()) {
    WrappedColored(theme.error, model.error().empty() ? Tr("No labs found (each lab is a folder holding lab.toml).")
                                                      : model.error());
    ImGui::TextWrapped(Tr("Start the app with --labs-dir DIR to choose another folder."));
    return;
  }
  ImGui::Separator();
  for (const LabListEntry& row : state.rows) {
    ImGui::PushID(row.path.c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, Vec(row.done ? CorrectColor(theme) : theme.text));
    ImGui::TextWrapped("%s", row.title.c_str());
    ImGui::PopStyleColor();
    char line[160];
    std::snprintf(line, sizeof line, Tr("%s \xC2\xB7 %d min \xC2\xB7 %d steps \xC2\xB7 %d points"), row.id.c_str(),
                  row.minutes, row.steps, row.max_score);
    ImGui::TextDisabled("%s", line);
    if (!row.summary.empty()) ImGui::TextWrapped("%s", row.summary.c_str());
    if (!row.prerequisites.empty()) {
      std::string list;
      for (const std::string& p : row.prerequisites) list += (list.empty() ? "" : ", ") + p;
      ImGui::TextWrapped(Tr("Do first: %s"), list.c_str());
      if (!row.unmet_prerequisites.empty()) {
        std::string unmet;
        for (const std::string& p : row.unmet_prerequisites) unmet += (unmet.empty() ? "" : ", ") + p;
        WrappedColored(NoteColor(theme), Format(Tr("Not finished yet: %s (you may still start)."), unmet.c_str()));
      }
    }
    if (!row.problem.empty()) {
      WrappedColored(theme.error, row.problem);
    } else {
      std::string label = row.done ? Tr("Open again") : row.started ? Tr("Resume") : Tr("Start");
      if (row.started && !row.done) {
        label += Format(Tr(" (step %d, %d of %d points)"), row.step + 1, row.score, row.max_score);
      }
      const bool start = ImGui::Button(label.c_str());
      test_log::MarkItem("lab-start " + row.id);
      if (start) {
        if (model.Open(row.path)) {
          state.show_chooser = false;
          state.chooser_error.clear();
          state.step_shown = -1;
        } else {
          state.chooser_error = model.error();
        }
      }
    }
    ImGui::Separator();
    ImGui::PopID();
  }
}

/// "ring all-reduce of 1K on 4 GPUs (dgx-a100)" for the run line.
std::string RunLine(const LabStep& step) {
  std::string params;
  for (const LabParam& p : step.params) params += (params.empty() ? "" : ", ") + p.name + " = " + LabParamText(p);
  return step.scenario + (params.empty() ? "" : ": " + params);
}

void DrawRunSection(const Theme& theme, LabPanelState& state) {
  LabPanelModel& model = *state.model;
  const LabStep& step = model.step();
  if (!step.runs()) return;
  ImGui::Spacing();
  ImGui::TextDisabled(Tr("Scenario"));
  ImGui::TextWrapped("%s", RunLine(step).c_str());
  LabSettings mapped;
  try {
    mapped = model.StepSettings(ScenarioSettings{});
  } catch (const Error& e) {
    WrappedColored(theme.error, e.what());
    return;
  }
  if (!mapped.runs_in_app) {
    ImGui::TextWrapped(Tr("This step computes formulas only: nothing runs in the views."));
  } else {
    const bool own = model.shown_variant() < 0;
    if (ImGui::Button(own ? Tr("Run the step again") : Tr("Show the step's run"))) model.RequestRun(-1);
    for (std::size_t v = 0; v < step.variants.size(); ++v) {
      const std::string label =
          Format(model.shown_variant() == static_cast<int>(v) ? Tr("Showing %s") : Tr("Show %s"),
                 step.variants[v].id.c_str()) +
          "###variant" + std::to_string(v);
      SameLineIfFits(label.c_str());
      if (ImGui::Button(label.c_str())) model.RequestRun(static_cast<int>(v));
    }
    ImGui::TextDisabled("%s", own ? Tr("The views show this step's run.")
                                  : Format(Tr("The views show variant '%s'."),
                                           step.variants[static_cast<std::size_t>(model.shown_variant())].id.c_str())
                                        .c_str());
  }
  if (!step.locked.empty()) {
    std::string list;
    for (const std::string& name : step.locked) list += (list.empty() ? "" : ", ") + name;
    WrappedColored(theme.text_dim, Format(Tr("Locked by the lab: %s (and the scenario). Explore the rest "
                                             "in the Scenario panel."),
                                          list.c_str()));
  }
  for (const std::string& note : mapped.notes) WrappedColored(NoteColor(theme), Format(Tr("Note: %s"), note.c_str()));
  if (const LabStepValues* values = model.StepValues(); values != nullptr) {
    for (const std::string& summary : values->summaries) WrappedColored(theme.text_dim, summary);
  } else if (model.grading_run_pending()) {
    ImGui::TextDisabled(Tr("Measuring the step for grading..."));
  }
}

/// The answer box (or radio buttons), Check, Hint, and what checking said.
void DrawQuestion(const Theme& theme, LabPanelState& state, const LabQuestion& q, int number) {
  LabPanelModel& model = *state.model;
  ImGui::PushID(q.id.c_str());
  ImGui::Spacing();
  char head[96];
  std::snprintf(head, sizeof head, Tr("Question %d%s"), number,
                q.points != 1 ? Format(Tr(" (%d points)"), q.points).c_str() : "");
  ImGui::TextDisabled("%s", head);
  ImGui::TextWrapped("%s", q.prompt.c_str());

  auto typed = state.typed.find(q.id);
  if (typed == state.typed.end()) typed = state.typed.emplace(q.id, model.AnswerText(q.id)).first;
  bool check = false;
  if (q.kind == LabQuestionKind::kNumber) {
    ImGui::SetNextItemWidth(std::min(10.0f * ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x * 0.5f));
    if (ImGui::InputTextWithHint("##answer", Tr("your answer"), &typed->second,
                                 ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CharsScientific)) {
      check = true;  // Enter checks
    }
    test_log::MarkItem("lab-answer " + q.id);
    // Saved as typed (a small atomic write per keystroke), so a crash or a
    // closed window keeps even an answer that was never confirmed.
    if (ImGui::IsItemEdited()) model.SetAnswer(q.id, typed->second);
    if (!q.units.empty()) {
      ImGui::SameLine();
      ImGui::TextUnformatted(q.units.c_str());
    }
    SameLineIfFits(Tr("Check my answer"));
  } else {
    for (const std::string& option : q.options) {
      if (ImGui::RadioButton(option.c_str(), typed->second == option)) {
        typed->second = option;
        model.SetAnswer(q.id, option);
      }
    }
  }
  const bool blank = typed->second.find_first_not_of(" \t") == std::string::npos;
  ImGui::BeginDisabled(blank);
  if (ImGui::Button(Tr("Check my answer"))) check = true;
  test_log::MarkItem("lab-check " + q.id);
  ImGui::EndDisabled();
  const bool hint_open = state.hints.count(q.id) != 0;
  SameLineIfFits(hint_open ? Tr("Hide hint") : Tr("Hint"));
  if (ImGui::Button(hint_open ? Tr("Hide hint") : Tr("Hint"))) {
    if (hint_open) {
      state.hints.erase(q.id);
    } else {
      state.hints.insert(q.id);
    }
  }
  if (check && !blank) {
    model.SetAnswer(q.id, typed->second);
    model.Check(q.id);
    state.answers_shown.erase(q.id);
  }
  if (state.hints.count(q.id) != 0) WrappedColored(NoteColor(theme), Format(Tr("Hint: %s"), model.Hint(q.id).c_str()));

  const LabProgressAnswer* saved = model.SavedAnswer(q.id);
  switch (model.Status(q.id)) {
    case LabAnswerStatus::kEmpty: break;
    case LabAnswerStatus::kUnchecked:
      if (saved != nullptr && saved->value != typed->second) break;  // still typing
      ImGui::TextDisabled(Tr("Not checked yet."));
      break;
    case LabAnswerStatus::kCorrect: WrappedColored(CorrectColor(theme), saved->feedback); break;
    case LabAnswerStatus::kWrong:
    case LabAnswerStatus::kMissing:
    case LabAnswerStatus::kInvalid:
      WrappedColored(theme.error, Format(Tr("Not yet. %s"), saved->feedback.c_str()));
      if (state.answers_shown.count(q.id) != 0) {
        // The lab's explanation often works the answer out, so it waits for this too.
        ImGui::TextWrapped(Tr("The answer: %s"), saved->expected.c_str());
        if (!q.explain.empty()) ImGui::TextWrapped("%s", q.explain.c_str());
      } else if (ImGui::SmallButton(Tr("Show the answer"))) {
        state.answers_shown.insert(q.id);
      }
      break;
  }
  ImGui::PopID();
}

void DrawLab(const Theme& theme, LabPanelState& state, LabPanelAction* action) {
  LabPanelModel& model = *state.model;
  const Lab& lab = model.lab();
  if (state.step_shown != model.step_index()) {
    // A new step: the boxes show what was saved for it.
    state.step_shown = model.step_index();
    state.typed.clear();
    state.hints.clear();
    state.answers_shown.clear();
  }

  ImGui::TextWrapped("%s", lab.title.c_str());
  int completed = 0;
  for (int i = 0; i < model.step_count(); ++i) completed += model.StepCompleted(i) ? 1 : 0;
  char line[128];
  std::snprintf(line, sizeof line, Tr("Step %d of %d \xC2\xB7 score %d / %d"), model.step_index() + 1,
                model.step_count(), model.Score(), model.MaxScore());
  ImGui::TextUnformatted(line);
  char done[64];
  std::snprintf(done, sizeof done, model.lab_done() ? Tr("lab complete") : Tr("%d of %d steps done"), completed,
                model.step_count());
  ImGui::ProgressBar(model.step_count() > 0 ? static_cast<float>(completed) / model.step_count() : 0.0f,
                     ImVec2(-1.0f, 0.0f), done);

  ImGui::BeginDisabled(model.step_index() == 0);
  if (ImGui::Button(Tr("< Back"))) model.Back();
  ImGui::EndDisabled();
  ImGui::SameLine();
  const bool last = model.step_index() + 1 == model.step_count();
  if (ImGui::Button(last ? Tr("Finish") : Tr("Next >"))) model.Next();
  test_log::MarkItem("lab-next");
  ImGui::SameLine();
  if (ImGui::Button(Tr("Labs"))) {
    state.show_chooser = true;
    state.rows_stale = true;
  }
  ImGui::SameLine();
  if (ImGui::Button(Tr("Close"))) *action = LabPanelAction::kClose;

  if (!model.warning().empty()) WrappedColored(NoteColor(theme), model.warning());
  if (!model.save_error().empty()) WrappedColored(theme.error, model.save_error());
  if (!model.error().empty()) WrappedColored(theme.error, model.error());
  ImGui::Separator();

  // The step scrolls; the header above stays.
  ImGui::BeginChild("##step", ImVec2(0, 0), false);
  const LabStep& step = model.step();
  ImGui::PushStyleColor(ImGuiCol_Text, Vec(theme.RankColor(0)));
  ImGui::TextWrapped("%d. %s", model.step_index() + 1, step.title.c_str());
  ImGui::PopStyleColor();
  if (model.StepCompleted(model.step_index())) {
    ImGui::SameLine();
    ImGui::TextColored(Vec(CorrectColor(theme)), Tr("(done)"));
  }
  ImGui::Spacing();
  DrawStepText(theme, step.text);
  DrawRunSection(theme, state);
  int number = 0;
  for (const LabQuestion& q : step.questions) {
    ImGui::Separator();
    DrawQuestion(theme, state, q, ++number);
  }
  if (last && model.lab_done()) {
    ImGui::Separator();
    WrappedColored(CorrectColor(theme), Format(Tr("Lab complete: %d of %d points. Choose another in Labs."),
                                               model.Score(), model.MaxScore()));
  }
  ImGui::EndChild();
}

}  // namespace

LabPanelAction DrawLabPanel(ViewContext& ctx, LabPanelState& state) {
  LabPanelAction action = LabPanelAction::kNone;
  if (!state.model) return action;
  state.model->Poll();
  if (state.show_chooser || !state.model->is_open()) {
    DrawChooser(ctx.theme, state);
    ImGui::Spacing();
    if (ImGui::Button(Tr("Close the lab panel"))) action = LabPanelAction::kClose;
  } else {
    DrawLab(ctx.theme, state, &action);
  }
  return action;
}

}  // namespace shardlab::gui
