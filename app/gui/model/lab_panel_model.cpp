#include "app/gui/model/lab_panel_model.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <utility>

#include "engine/core/error.h"
#include "engine/lab/formula.h"
#include "engine/lab/lab_loader.h"
#include "engine/lab/lab_translation.h"
#include "engine/lab/lab_words.h"

namespace shardlab::gui {

LabLoadResult ReadLabForApp(const std::string& path, const std::string& lang) { return ReadLab(path, lang); }

namespace {

/// The first line of a multi-line message.
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

/// A number as a student types it: "230", " 0.75 ", "1e-3". Anything else
/// (units typed into the box, "abc") goes to the grader as text, which
/// calls it invalid with its own message.
bool ParseTypedNumber(const std::string& text, double* value) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return false;
  const std::size_t last = text.find_last_not_of(" \t");
  const std::string trimmed = text.substr(first, last - first + 1);
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(trimmed.c_str(), &end);
  if (end != trimmed.c_str() + trimmed.size() || errno == ERANGE || !std::isfinite(parsed)) return false;
  *value = parsed;
  return true;
}

bool IsBlank(const std::string& text) { return text.find_first_not_of(" \t") == std::string::npos; }

/// "ranks = 8, size = 64M" for the parameters among `names`.
std::string ParamList(const LabStep& step, const std::vector<std::string>& names) {
  const ScenarioSpec* spec = step.runs() ? FindLabScenario(step.scenario) : nullptr;
  std::string out;
  for (const std::string& name : names) {
    std::string value;
    if (const LabParam* p = FindLabParam(step.params, name)) {
      value = LabParamText(*p);
    } else if (spec != nullptr && spec->FindParam(name) != nullptr) {
      value = spec->FindParam(name)->default_text;
    } else {
      continue;
    }
    out += (out.empty() ? "" : ", ") + name + " = " + value;
  }
  return out;
}

/// The measured quantity `name` names ("tree.time_us" -> time_us's spec), or null.
const QuantitySpec* QuantityOf(const LabStep& step, const std::string& name) {
  const ScenarioSpec* spec = step.runs() ? FindLabScenario(step.scenario) : nullptr;
  if (spec == nullptr) return nullptr;
  const std::size_t dot = name.find('.');
  return spec->FindQuantity(dot == std::string::npos ? name : name.substr(dot + 1));
}

/// "50", "2.38": a percentage as a student reads it, three significant digits.
std::string Short(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

/// Adds `sentence` after `text` with one space, when it is not empty.
void Append(std::string* text, const std::string& sentence) {
  if (sentence.empty()) return;
  if (!text->empty()) *text += ' ';
  *text += sentence;
}

/// What the panel says after Check. Unlike the grader's report for an
/// instructor, a wrong answer does not give the expected value away: the
/// student learns the direction and how far off, and may try again (or
/// ask for the answer).
std::string PanelFeedback(const LabQuestion& q, const LabQuestionResult& r, const std::string& lang) {
  const LabWords& words = LabWordsFor(lang);
  std::string text;
  switch (r.verdict) {
    case LabVerdict::kCorrect: text = r.feedback; return text;  // names the expected value: fine now
    case LabVerdict::kMissing: return words.panel_type_first;
    case LabVerdict::kInvalid:
      if (q.kind != LabQuestionKind::kNumber) return Fill(words.panel_not_an_option, {{"given", r.given_text}});
      return q.units.empty() ? Fill(words.panel_not_a_number, {{"given", r.given_text}})
                             : Fill(words.panel_not_a_number_units, {{"given", r.given_text}, {"units", q.units}});
    case LabVerdict::kWrong: break;
  }
  if (q.kind == LabQuestionKind::kNumber) {
    const bool high = r.given > r.expected;
    text = high ? words.panel_too_high : words.panel_too_low;
    if (r.expected != 0) {
      text += words.panel_open +
              Fill(high ? words.panel_above : words.panel_below,
                   {{"percent", Short(std::fabs(100.0 * (r.given - r.expected) / r.expected))}});
      if (q.tolerance > 0) text += Fill(words.panel_within, {{"percent", Short(100.0 * q.tolerance)}});
      text += words.panel_close;
    } else {
      text += words.panel_end;
    }
    const std::string& specific = high ? q.feedback_high : q.feedback_low;
    Append(&text, specific.empty() ? q.feedback : specific);
  } else {
    text = Fill(words.panel_not_option_given, {{"given", r.given_text}});
    Append(&text, q.feedback);
  }
  return text;
}

}  // namespace

std::string DefaultLabProgressDir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/shardlab/progress";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return std::string(home) + "/.local/share/shardlab/progress";
  }
  return "shardlab-progress";
}

float LabPanelWidthPx(float window_w, float font_px) {
  // An average character of ImGui's default font is about half its height.
  const float char_px = 0.5f * font_px;
  const float wanted = std::clamp(window_w * 0.30f, 44.0f * char_px, 80.0f * char_px);
  return std::min(wanted, window_w * 0.5f);
}

LabPanelModel::LabPanelModel(std::string labs_dir, std::string progress_dir, FileIo& io)
    : labs_dir_(std::move(labs_dir)), progress_dir_(std::move(progress_dir)), io_(io) {
  try {
    store_ = std::make_unique<ProgressStore>(progress_dir_, io_);
  } catch (const Error& e) {
    store_error_ = std::string("progress is not being saved: ") + e.what();
    save_error_ = store_error_;
  }
}

std::vector<LabListEntry> LabPanelModel::ListLabs() {
  std::vector<LabListEntry> rows;
  std::vector<std::string> folders;
  try {
    folders = FindLabFolders(labs_dir_);
  } catch (const Error& e) {
    error_ = e.what();
    return rows;
  }
  for (const std::string& folder : folders) {
    LabListEntry row;
    row.path = folder;
    row.id = std::filesystem::path(folder).filename().string();
    const LabLoadResult loaded = ReadLab(folder, lang_);
    if (!loaded.ok()) row.problem = FirstLine(loaded.ProblemsText());
    const Lab& lab = loaded.lab;
    if (!lab.id.empty()) row.id = lab.id;
    row.title = lab.title.empty() ? row.id : lab.title;
    row.summary = lab.summary;
    row.minutes = lab.minutes;
    row.steps = static_cast<int>(lab.steps.size());
    row.max_score = lab.MaxPoints();
    row.prerequisites = lab.prerequisites;
    if (store_ != nullptr && loaded.ok()) {
      try {
        // Read, not ProgressStore::Load: listing must not move an unreadable
        // file aside before Open can tell the student about it.
        const std::string path = store_->PathFor(row.id);
        std::string text;
        if (!io_.ReadFile(path, kMaxProgressBytes, &text)) throw Error("no progress yet");
        const LabProgress saved = ParseLabProgress(text, path);
        row.started = true;
        row.step = saved.step;
        for (const LabStep& step : lab.steps) {
          const auto& done = saved.completed;
          if (std::find(done.begin(), done.end(), step.id) != done.end()) ++row.completed;
        }
        for (const LabProgressAnswer& answer : saved.answers) {
          const LabQuestion* q = lab.FindQuestion(answer.question_id);
          if (q != nullptr && answer.checked && answer.verdict == "correct") row.score += q->points;
        }
        row.done = row.steps > 0 && row.completed == row.steps;
      } catch (const Error&) {
        // None saved, or unreadable: the row shows no progress; opening it says why.
      }
    }
    rows.push_back(std::move(row));
  }
  // A prerequisite naming a lab in this folder is met once that lab is done.
  for (LabListEntry& row : rows) {
    for (const std::string& prerequisite : row.prerequisites) {
      for (const LabListEntry& other : rows) {
        if (other.id == prerequisite && !other.done) row.unmet_prerequisites.push_back(prerequisite);
      }
    }
  }
  return rows;
}

bool LabPanelModel::SetLanguage(const std::string& lang) {
  if (!IsLabLanguage(lang)) return false;
  lang_ = lang;
  return true;
}

bool LabPanelModel::Open(const std::string& path) {
  const LabLoadResult loaded = ReadLab(path, lang_);
  if (!loaded.ok()) {
    error_ = loaded.ProblemsText();
    return false;
  }
  if (loaded.lab.steps.empty()) {
    error_ = path + ": the lab has no steps";
    return false;
  }
  lab_ = std::make_unique<Lab>(loaded.lab);
  lab_path_ = path;
  error_.clear();
  warning_.clear();
  progress_ = LabProgress{};
  progress_.lab_id = lab_->id;
  if (store_ != nullptr) {
    try {
      ProgressLoad saved = store_->Load(lab_->id);
      progress_ = std::move(saved.progress);
      progress_.lab_id = lab_->id;
      warning_ = saved.warning;
    } catch (const Error& e) {
      warning_ = std::string("saved progress could not be read: ") + e.what();
    }
  }
  // A lab edited since the save may have fewer steps.
  progress_.step = std::clamp(progress_.step, 0, step_count() - 1);
  pending_runs_.clear();  // waits for the old lab's run, if any
  step_values_.clear();
  ResetStepState();
  return true;
}

bool LabPanelModel::ReloadText() {
  if (!lab_ || lab_path_.empty()) return false;
  const LabLoadResult loaded = ReadLabForApp(lab_path_, lang_);
  // Numbers, checks and steps are lab.toml's in every language: only the text changes.
  if (!loaded.ok() || loaded.lab.steps.size() != lab_->steps.size()) return false;
  lab_ = std::make_unique<Lab>(loaded.lab);
  return true;
}

void LabPanelModel::Close() {
  pending_runs_.clear();
  lab_.reset();
  progress_ = LabProgress{};
  step_values_.clear();
  run_requested_ = false;
  shown_variant_ = -1;
}

int LabPanelModel::step_count() const { return lab_ ? static_cast<int>(lab_->steps.size()) : 0; }

const LabStep& LabPanelModel::step() const { return lab_->steps[static_cast<std::size_t>(progress_.step)]; }

bool LabPanelModel::StepCompleted(int index) const {
  if (!lab_ || index < 0 || index >= step_count()) return false;
  const std::string& id = lab_->steps[static_cast<std::size_t>(index)].id;
  return std::find(progress_.completed.begin(), progress_.completed.end(), id) != progress_.completed.end();
}

bool LabPanelModel::lab_done() const {
  for (int i = 0; i < step_count(); ++i) {
    if (!StepCompleted(i)) return false;
  }
  return step_count() > 0;
}

void LabPanelModel::GoToStep(int index) {
  if (!lab_) return;
  const int clamped = std::clamp(index, 0, step_count() - 1);
  if (clamped == progress_.step) return;
  progress_.step = clamped;
  ResetStepState();
  Save();
}

void LabPanelModel::Next() {
  if (!lab_) return;
  MarkCompleted(step().id);
  if (progress_.step + 1 < step_count()) {
    GoToStep(progress_.step + 1);
  } else {
    Save();  // the last step: completed, and the lab with it
  }
}

void LabPanelModel::Back() {
  if (lab_) GoToStep(progress_.step - 1);
}

std::string LabPanelModel::AnswerText(const std::string& question_id) const {
  const LabProgressAnswer* answer = SavedAnswer(question_id);
  return answer != nullptr ? answer->value : std::string();
}

const LabProgressAnswer* LabPanelModel::SavedAnswer(const std::string& question_id) const {
  return progress_.Find(question_id);
}

LabAnswerStatus LabPanelModel::Status(const std::string& question_id) const {
  const LabProgressAnswer* answer = SavedAnswer(question_id);
  if (answer == nullptr) return LabAnswerStatus::kEmpty;
  if (!answer->checked) return IsBlank(answer->value) ? LabAnswerStatus::kEmpty : LabAnswerStatus::kUnchecked;
  if (answer->verdict == "correct") return LabAnswerStatus::kCorrect;
  if (answer->verdict == "missing") return LabAnswerStatus::kMissing;
  if (answer->verdict == "invalid") return LabAnswerStatus::kInvalid;
  return LabAnswerStatus::kWrong;
}

bool LabPanelModel::SetAnswer(const std::string& question_id, const std::string& text) {
  if (!lab_ || lab_->FindQuestion(question_id) == nullptr) return false;
  if (const LabProgressAnswer* old = SavedAnswer(question_id); old != nullptr && old->value == text) {
    return true;  // nothing changed: keep the verdict, skip the save
  }
  LabProgressAnswer answer;
  answer.question_id = question_id;
  answer.value = text;  // a changed answer has not been checked yet
  progress_.SetAnswer(std::move(answer));
  Save();
  return true;
}

std::optional<LabQuestionResult> LabPanelModel::Check(const std::string& question_id) {
  if (!lab_) return std::nullopt;
  int step_index = -1;
  const LabQuestion* question = lab_->FindQuestion(question_id, &step_index);
  if (question == nullptr) return std::nullopt;
  const LabStep& question_step = lab_->steps[static_cast<std::size_t>(step_index)];

  // The values the step's formulas read: a run's, or only its parameters.
  LabValues values;
  bool needs_run = false;
  try {
    needs_run = question_step.runs() && LabQuestionNeedsRun(question_step, *question);
    if (question_step.runs() && !needs_run) {
      // A prediction: the parameters decide it, whether or not the run is done.
      values = LabParamValues(question_step.scenario, question_step.params);
    }
  } catch (const Error& e) {
    error_ = "the lab cannot grade '" + question_id + "': " + e.what();
    return std::nullopt;
  }
  if (needs_run && !CollectGradingRun(step_index)) {
    return std::nullopt;
  }
  auto cached = needs_run ? step_values_.find(step_index) : step_values_.end();
  if (cached == step_values_.end() && needs_run) {
    try {
      cached = step_values_.emplace(step_index, RunLabStep(question_step)).first;
    } catch (const Error& e) {
      error_ = "the step could not run: " + std::string(e.what());
      return std::nullopt;
    }
  }
  if (cached != step_values_.end()) values = cached->second.values;

  const std::string typed = AnswerText(question_id);
  if (IsBlank(typed)) {
    // The grader would name the expected value: ask for an answer instead.
    error_ = "type an answer to '" + question_id + "' first";
    return std::nullopt;
  }
  LabAnswer given;
  given.question_id = question_id;
  if (question->kind == LabQuestionKind::kNumber && ParseTypedNumber(typed, &given.number)) {
    given.is_number = true;
  } else {
    given.text = typed;
  }
  LabQuestionResult result;
  try {
    result = CheckLabAnswer(question_step, *question, values, &given, lab().lang);
  } catch (const Error& e) {
    error_ = "the lab cannot grade '" + question_id + "': " + e.what();
    return std::nullopt;
  }
  error_.clear();

  LabProgressAnswer saved;
  saved.question_id = question_id;
  saved.value = typed;
  saved.checked = true;
  saved.verdict = LabVerdictName(result.verdict);
  saved.expected = result.expected_text;
  saved.feedback = PanelFeedback(*question, result, lab().lang);
  progress_.SetAnswer(std::move(saved));

  bool all_correct = true;
  for (const LabQuestion& q : question_step.questions) {
    if (Status(q.id) != LabAnswerStatus::kCorrect) all_correct = false;
  }
  if (all_correct) MarkCompleted(question_step.id);
  Save();
  return result;
}

std::string LabPanelModel::Hint(const std::string& question_id) const {
  if (!lab_) return {};
  int step_index = -1;
  const LabQuestion* q = lab_->FindQuestion(question_id, &step_index);
  if (q == nullptr) return {};
  const LabStep& s = lab_->steps[static_cast<std::size_t>(step_index)];
  std::string hint;
  if (q->kind == LabQuestionKind::kNumber && !q->measured.empty()) {
    const QuantitySpec* quantity = QuantityOf(s, q->measured);
    const std::size_t dot = q->measured.find('.');
    hint = "The run measures this";
    if (quantity != nullptr && !quantity->help.empty()) hint += ": " + quantity->help;
    hint += ". ";
    hint += dot == std::string::npos ? "Show the step's run and read the Metrics panel."
                                     : "Show the run of variant '" + q->measured.substr(0, dot) +
                                           "' and read the Metrics panel.";
  } else {
    std::vector<std::string> names;
    try {
      names = Formula::Parse(q->kind == LabQuestionKind::kNumber ? q->expected
                                                                 : (q->correct_if.empty() ? "0" : q->correct_if[0]))
                  .Variables();
    } catch (const Error&) {
      names.clear();  // the loader parsed it already; nothing useful to add
    }
    std::vector<std::string> measured;
    for (const std::string& name : names) {
      if (QuantityOf(s, name) != nullptr && FindLabParam(s.params, name) == nullptr &&
          FindLabScenario(s.scenario)->FindParam(name) == nullptr) {
        measured.push_back(name);
      }
    }
    const std::string params = ParamList(s, names);
    if (q->kind == LabQuestionKind::kChoice && !q->correct_if.empty()) {
      hint = "The runs decide this one: show the step's run and its variants and compare them.";
    } else if (q->kind == LabQuestionKind::kChoice) {
      hint = "Read the step's text again: it says what to look for.";
    } else if (!params.empty()) {
      hint = "It follows from the step's parameters (" + params + "). Work it out on paper first.";
    } else {
      hint = "It follows from the step's text: work it out on paper first.";
    }
    if (!measured.empty()) {
      std::string list;
      for (const std::string& m : measured) list += (list.empty() ? "" : ", ") + m;
      hint += " It also uses what the run measures (" + list + ").";
    }
  }
  if (!q->units.empty()) hint += " Answer in " + q->units + ".";
  if (q->kind == LabQuestionKind::kNumber && q->tolerance == 0 && q->tolerance_abs == 0) {
    hint += " The exact value is expected.";
  }
  return hint;
}

int LabPanelModel::Score() const {
  if (!lab_) return 0;
  int score = 0;
  for (const LabProgressAnswer& answer : progress_.answers) {
    const LabQuestion* q = lab_->FindQuestion(answer.question_id);
    if (q != nullptr && answer.checked && answer.verdict == "correct") score += q->points;
  }
  return score;
}

int LabPanelModel::MaxScore() const { return lab_ ? lab_->MaxPoints() : 0; }

const LabStepValues* LabPanelModel::StepValues() const {
  const auto it = step_values_.find(progress_.step);
  return it != step_values_.end() ? &it->second : nullptr;
}

bool LabPanelModel::RunStepForGrading() {
  if (!lab_ || !step().runs()) return false;
  StartGradingRun();
  return CollectGradingRun(progress_.step);
}

void LabPanelModel::Poll() {
  for (auto it = pending_runs_.begin(); it != pending_runs_.end();) {
    const int index = it->first;
    ++it;  // CollectGradingRun erases the entry
    if (pending_runs_.at(index).wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      CollectGradingRun(index);
    }
  }
}

bool LabPanelModel::grading_run_pending() const { return lab_ && pending_runs_.count(progress_.step) != 0; }

void LabPanelModel::StartGradingRun() {
  if (!lab_ || !step().runs()) return;
  const int index = progress_.step;
  if (step_values_.count(index) != 0 || pending_runs_.count(index) != 0) return;
  // The thread gets its own copy of the step: the lab may close meanwhile
  // (Close and Open wait for it before they drop anything).
  pending_runs_.emplace(index, std::async(std::launch::async, [step = step()] { return RunLabStep(step); }));
}

bool LabPanelModel::CollectGradingRun(int index) {
  const auto it = pending_runs_.find(index);
  if (it == pending_runs_.end()) return true;
  std::future<LabStepValues> run = std::move(it->second);
  pending_runs_.erase(it);
  try {
    step_values_[index] = run.get();
  } catch (const Error& e) {
    error_ = "the step could not run: " + std::string(e.what());
    return false;
  } catch (const std::exception& e) {
    error_ = "the step could not run: " + std::string(e.what());
    return false;
  }
  return true;
}

LabSettings LabPanelModel::StepSettings(const ScenarioSettings& base, int variant) const {
  const LabStep& s = step();
  if (variant < 0 || variant >= static_cast<int>(s.variants.size())) {
    return LabStepSettings(s.scenario, s.params, base);
  }
  return LabStepSettings(s.scenario, MergeLabParams(s.params, s.variants[static_cast<std::size_t>(variant)].params),
                         base);
}

void LabPanelModel::RequestRun(int variant) {
  if (!lab_ || !step().runs()) return;
  run_requested_ = true;
  requested_variant_ = variant;
}

std::optional<ScenarioSettings> LabPanelModel::TakeRunRequest(const ScenarioSettings& base) {
  if (!lab_ || !run_requested_) return std::nullopt;
  run_requested_ = false;
  try {
    const LabSettings mapped = StepSettings(base, requested_variant_);
    if (!mapped.runs_in_app) return std::nullopt;
    shown_variant_ = requested_variant_;
    return mapped.settings;
  } catch (const Error& e) {
    error_ = "the step's scenario cannot be shown: " + std::string(e.what());
    return std::nullopt;
  }
}

std::vector<std::string> LabPanelModel::EnforceLocks(ScenarioSettings* edit) const {
  if (!lab_ || !step().runs() || step().locked.empty()) return {};
  try {
    // Locks hold the values of the run the views show: the step's, or a
    // variant's when the student asked to see one.
    const LabSettings mapped = StepSettings(*edit, shown_variant_);
    return RestoreLockedFields(step().scenario, step().locked, mapped.settings, edit);
  } catch (const Error&) {
    return {};  // TakeRunRequest reports a step that cannot be mapped
  }
}

bool LabPanelModel::IsLocked(const std::string& param) const {
  if (!lab_) return false;
  const auto& locked = step().locked;
  return std::find(locked.begin(), locked.end(), param) != locked.end();
}

void LabPanelModel::Save() {
  if (!lab_) return;
  if (store_ == nullptr) {
    save_error_ = store_error_;
    return;
  }
  try {
    store_->Save(progress_);
    save_error_.clear();
  } catch (const Error& e) {
    save_error_ = std::string("progress not saved: ") + e.what();
  }
}

void LabPanelModel::ResetStepState() {
  shown_variant_ = -1;
  RequestRun(-1);     // the views follow the student to the new step
  StartGradingRun();  // ready, most likely, by the time an answer is typed
}

void LabPanelModel::MarkCompleted(const std::string& step_id) {
  auto& done = progress_.completed;
  if (std::find(done.begin(), done.end(), step_id) == done.end()) done.push_back(step_id);
}

}  // namespace shardlab::gui
