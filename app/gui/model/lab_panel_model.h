// LabPanelModel: everything the app's lab panel does, without a window, so
// tests can drive it as a student would.
//
//   labs dir ──ListLabs──► chooser rows {title, minutes, prerequisites, progress}
//   Open(lab) ──► LoadLab + ProgressStore::Load ──► resume at the saved step,
//                                                   with the saved answers
//   SetAnswer / Check / Next / Back ──► ProgressStore::Save (atomic, every change)
//   entering a step ──► RunLabStep on a background thread (a real 16 MiB
//                       ring takes a second: the panel must not freeze)
//   Check(question) ──► that run's values (waited for if still running)
//                   ──► CheckLabAnswer
//                   ──► verdict, expected, feedback saved beside the answer
//   TakeRunRequest ──► the ScenarioSettings the app's session runs, so the
//                      views show the step's run (or a variant's)
//
// Grading always uses the step as the lab file writes it (as `shardlab-cli
// lab run` does), whatever the student explores in the scenario panel; the
// panel's locks keep the parameters the step locks. A failed save never
// loses an answer in memory: save_error() says why, and the next change
// tries again.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/gui/model/lab_settings.h"
#include "app/gui/model/session.h"
#include "engine/core/file_io.h"
#include "engine/lab/lab.h"
#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"
#include "engine/lab/lab_scenario.h"
#include "engine/lab/progress.h"

namespace shardlab::gui {

/// One row of the lab chooser.
struct LabListEntry {
  std::string path;     // the lab's folder
  std::string id;       // its name: "01-ring-allreduce"
  std::string title;
  std::string summary;
  int minutes = 0;
  int steps = 0;
  int max_score = 0;
  std::vector<std::string> prerequisites;
  /// Prerequisites that are labs in the same folder not yet completed.
  std::vector<std::string> unmet_prerequisites;
  std::string problem;  // first line of the loader's problems; "" when it loads
  bool started = false; // a progress file exists
  int step = 0;         // the saved step (0-based)
  int completed = 0;    // steps completed
  int score = 0;        // points of answers checked correct
  bool done = false;    // every step completed
};

/// What a question's answer box shows beside it.
enum class LabAnswerStatus { kEmpty, kUnchecked, kCorrect, kWrong, kMissing, kInvalid };

/// The default folder for progress files: $XDG_DATA_HOME/shardlab/progress,
/// else $HOME/.local/share/shardlab/progress, else ./shardlab-progress.
std::string DefaultLabProgressDir();

/// The lab panel's width beside the views in a `window_w` wide window:
/// 30%, but at least 44 and at most 80 characters of `font_px` text (an
/// average character is about half the font's height), and never more
/// than half the window.
float LabPanelWidthPx(float window_w, float font_px);

/// The one place the app reads a lab file (the chooser's rows, Open,
/// ReloadText). The lab's own text in the app's language comes from the
/// loader: when it takes a language, this becomes LoadLab(path, lang) with
/// LanguageCode(CurrentLanguage()) ("en" / "zh-CN", app/gui/i18n/language.h).
LabLoadResult ReadLabForApp(const std::string& path, const std::string& lang = "en");

class LabPanelModel {
 public:
  /// `progress_dir` is created when missing and swept of stale temporary
  /// files; when that fails the panel still works and save_error() says
  /// progress is not being saved.
  LabPanelModel(std::string labs_dir, std::string progress_dir, FileIo& io = RealFileIo());

  const std::string& labs_dir() const { return labs_dir_; }
  const std::string& progress_dir() const { return progress_dir_; }

  /// The language of the labs' text, "en" or "zh-CN" (lab_translation.h),
  /// used by the next ListLabs and Open; grading is the same in both. False
  /// (and no change) for a language no lab has.
  bool SetLanguage(const std::string& lang);
  const std::string& language() const { return lang_; }

  /// The labs under labs_dir(), sorted by folder name. Never throws: a
  /// missing folder gives no rows and error() says so; a lab that does not
  /// load is a row with its problem.
  std::vector<LabListEntry> ListLabs();

  /// Opens the lab in `path` (a lab folder or lab file) and resumes its
  /// saved progress. False when it does not load: error() holds every
  /// problem, one per line, and the lab open before stays open.
  bool Open(const std::string& path);
  /// Reads the open lab again through ReadLabForApp, keeping the step and
  /// answers: its text follows the app's language (View > Language).
  /// False (and the lab as it was) when it no longer loads the same steps.
  bool ReloadText();
  void Close();
  bool is_open() const { return lab_ != nullptr; }
  const Lab& lab() const { return *lab_; }
  const LabProgress& progress() const { return progress_; }

  /// The last failure of ListLabs, Open or a run, "" when none.
  const std::string& error() const { return error_; }
  /// Said once when the lab opened: a progress file that could not be read
  /// and was kept aside. "" when none.
  const std::string& warning() const { return warning_; }
  /// Why the last save failed ("" after a save that worked).
  const std::string& save_error() const { return save_error_; }

  // Steps.
  int step_index() const { return progress_.step; }
  int step_count() const;
  const LabStep& step() const;
  bool StepCompleted(int index) const;
  bool lab_done() const;
  /// Moves to step `index` (clamped), saves, and asks for the step's run.
  void GoToStep(int index);
  /// Marks the current step completed and moves on (the last step stays).
  void Next();
  void Back();

  // Answers.
  /// What the box of `question_id` holds ("" when nothing was typed).
  std::string AnswerText(const std::string& question_id) const;
  /// The saved answer (value, checked, verdict, expected, feedback), or null.
  const LabProgressAnswer* SavedAnswer(const std::string& question_id) const;
  LabAnswerStatus Status(const std::string& question_id) const;
  /// Records what the student typed or chose and saves. A changed answer
  /// is unchecked again. False when `question_id` is not in the open lab.
  bool SetAnswer(const std::string& question_id, const std::string& text);
  /// Grades the saved answer against the step as written (running it the
  /// first time), saves the verdict, the expected value and the panel's
  /// feedback (a wrong number says too high or too low and how far, and
  /// not the expected value), and marks the step completed when every
  /// question in it is correct. Null when there is no answer yet, or the
  /// lab cannot grade it (error() says which).
  std::optional<LabQuestionResult> Check(const std::string& question_id);
  /// A hint that does not give the answer away: what it depends on and
  /// where to read it.
  std::string Hint(const std::string& question_id) const;
  int Score() const;
  int MaxScore() const;

  // Runs.
  /// The step's values (parameters, measurements, variants') when it has
  /// run for grading; null before.
  const LabStepValues* StepValues() const;
  /// Waits for the step's grading run (Check does it when needed), starting
  /// it if it never started. False and error() on failure.
  bool RunStepForGrading();
  /// Once per frame: takes in a grading run that has finished, without waiting.
  void Poll();
  /// The current step's grading run is still going.
  bool grading_run_pending() const;

  /// The app's settings for the current step's run (variant -1) or a
  /// variant's, on top of `base`. Throws Error for a lab the loader let
  /// through but the app cannot map (it should not happen).
  LabSettings StepSettings(const ScenarioSettings& base, int variant = -1) const;
  /// Asks the app to run the step (variant -1) or one of its variants.
  void RequestRun(int variant = -1);
  /// The run the panel asked for since the last call, if any (only steps
  /// that run in the app ask).
  std::optional<ScenarioSettings> TakeRunRequest(const ScenarioSettings& base);
  /// The variant the views show (-1: the step's own run).
  int shown_variant() const { return shown_variant_; }

  /// Puts back the fields the current step locks, at the values of the run
  /// shown (the step's, or the variant's); returns the names that the
  /// student had changed (empty: nothing touched, or no lab open).
  std::vector<std::string> EnforceLocks(ScenarioSettings* edit) const;
  bool IsLocked(const std::string& param) const;

 private:
  void Save();
  void ResetStepState();
  /// Starts the current step's grading run in the background, once.
  void StartGradingRun();
  /// Waits for step `index`'s grading run, if one is going; moves its
  /// values into the cache or its failure into error(). False on failure.
  bool CollectGradingRun(int index);
  void MarkCompleted(const std::string& step_id);

  std::string labs_dir_;
  std::string lang_ = "en";
  std::string progress_dir_;
  FileIo& io_;
  std::unique_ptr<ProgressStore> store_;  // null when the folder could not be made

  std::unique_ptr<Lab> lab_;
  LabProgress progress_;
  std::map<int, LabStepValues> step_values_;  // grading runs, by step index
  std::map<int, std::future<LabStepValues>> pending_runs_;
  std::string lab_path_;  // what Open read, for ReloadText  // still running, by step index
  std::string error_;
  std::string warning_;
  std::string save_error_;
  std::string store_error_;  // why store_ is null

  bool run_requested_ = false;
  int requested_variant_ = -1;
  int shown_variant_ = -1;
};

}  // namespace shardlab::gui
