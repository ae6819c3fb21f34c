// The lab panel's logic without a window: a student opens a lab, answers
// right and wrong, moves between steps, closes the app and comes back. The
// labs are tests/data/lab_panel/ (a text step, then a ring all-reduce on 4
// GPUs with a tree variant and locked topology and ranks; a second lab that
// needs the first).
#include "app/gui/model/lab_panel_model.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <string>
#include <vector>

#include "app/gui/model/lab_settings.h"
#include "app/gui/model/scenario_fields.h"
#include "engine/core/error.h"
#include "engine/lab/progress.h"
#include "engine/scenarios/zero_scenario.h"
#include "tests/common/run_program.h"

namespace shardlab::gui {
namespace {

namespace fs = std::filesystem;

const std::string kLabsDir = SHARDLAB_TEST_DATA_DIR "/lab_panel";
const std::string kRingLab = kLabsDir + "/01-mini-ring";

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The progress file as saved on disk, read back by the engine's parser.
LabProgress SavedProgress(const fs::path& dir) {
  const fs::path file = dir / "01-mini-ring.progress.toml";
  return ParseLabProgress(test_util::ReadWholeFile(file), file.string());
}

/// Answers the text step and moves to the ring step.
void PassIntro(LabPanelModel& model) {
  ASSERT_TRUE(model.SetAnswer("double", "42"));
  ASSERT_TRUE(model.Check("double").has_value());
  model.Next();
  ASSERT_EQ(model.step_index(), 1);
}

TEST(LabPanelModel, ListsLabsWithTitleMinutesAndUnmetPrerequisites) {
  test_util::TempDir progress;
  LabPanelModel model(kLabsDir, progress.path().string());
  const std::vector<LabListEntry> rows = model.ListLabs();
  ASSERT_EQ(rows.size(), 2u) << model.error();
  EXPECT_EQ(rows[0].id, "01-mini-ring");
  EXPECT_EQ(rows[0].title, "Mini ring");
  EXPECT_EQ(rows[0].minutes, 10);
  EXPECT_EQ(rows[0].steps, 2);
  EXPECT_EQ(rows[0].max_score, 4);
  EXPECT_TRUE(rows[0].problem.empty()) << rows[0].problem;
  EXPECT_FALSE(rows[0].started);
  EXPECT_EQ(rows[1].prerequisites, std::vector<std::string>{"01-mini-ring"});
  EXPECT_EQ(rows[1].unmet_prerequisites, std::vector<std::string>{"01-mini-ring"});
}

TEST(LabPanelModel, AMissingLabsFolderGivesNoRowsAndAMessage) {
  test_util::TempDir progress;
  LabPanelModel model(progress.path().string() + "/no-such-labs", progress.path().string());
  EXPECT_TRUE(model.ListLabs().empty());
  EXPECT_TRUE(Contains(model.error(), "no-such-labs")) << model.error();
}

TEST(LabPanelModel, ABadLabDoesNotOpenAndSaysWhy) {
  test_util::TempDir dir;
  fs::create_directories(dir.path() / "03-broken");
  std::ofstream(dir.path() / "03-broken" / "lab.toml") << "format = 1\ntitle = \"Broken\"\nminutes = \"ten\"\n";
  LabPanelModel model(dir.path().string(), (dir.path() / "progress").string());
  EXPECT_FALSE(model.Open((dir.path() / "03-broken").string()));
  EXPECT_FALSE(model.is_open());
  EXPECT_TRUE(Contains(model.error(), "lab.toml")) << model.error();
  EXPECT_TRUE(Contains(model.error(), "minutes")) << model.error();
  EXPECT_FALSE(model.Open((dir.path() / "nowhere").string()));
}

TEST(LabPanelModel, ChecksAnswersWrongThenRightAndSavesAfterEachChange) {
  test_util::TempDir progress;
  LabPanelModel model(kLabsDir, progress.path().string());
  ASSERT_TRUE(model.Open(kRingLab)) << model.error();
  EXPECT_EQ(model.step_index(), 0);
  EXPECT_EQ(model.step_count(), 2);
  EXPECT_EQ(model.Status("double"), LabAnswerStatus::kEmpty);

  // An empty box is not graded (the grader would name the answer).
  EXPECT_FALSE(model.Check("double").has_value());
  EXPECT_TRUE(Contains(model.error(), "type an answer")) << model.error();

  ASSERT_TRUE(model.SetAnswer("double", "41"));
  EXPECT_EQ(SavedProgress(progress.path()).Find("double")->value, "41");
  EXPECT_EQ(model.Status("double"), LabAnswerStatus::kUnchecked);

  std::optional<LabQuestionResult> result = model.Check("double");
  ASSERT_TRUE(result.has_value()) << model.error();
  EXPECT_EQ(result->verdict, LabVerdict::kWrong);
  EXPECT_EQ(model.Status("double"), LabAnswerStatus::kWrong);
  const LabProgress on_disk = SavedProgress(progress.path());
  const LabProgressAnswer* saved = on_disk.Find("double");
  ASSERT_NE(saved, nullptr);
  EXPECT_TRUE(saved->checked);
  EXPECT_EQ(saved->verdict, "wrong");
  EXPECT_TRUE(Contains(saved->feedback, "Too low")) << saved->feedback;
  EXPECT_FALSE(Contains(saved->feedback, "42")) << "a wrong answer's feedback gives the answer away";
  EXPECT_EQ(model.Score(), 0);
  EXPECT_FALSE(model.StepCompleted(0));

  // Changing the answer unchecks it, and checking again grades the new one.
  ASSERT_TRUE(model.SetAnswer("double", "42"));
  EXPECT_EQ(model.Status("double"), LabAnswerStatus::kUnchecked);
  EXPECT_FALSE(SavedProgress(progress.path()).Find("double")->checked);
  result = model.Check("double");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->verdict, LabVerdict::kCorrect);
  EXPECT_EQ(model.Score(), 1);
  EXPECT_EQ(model.MaxScore(), 4);
  EXPECT_TRUE(model.StepCompleted(0)) << "every question of the step is correct";
  EXPECT_EQ(SavedProgress(progress.path()).Find("double")->verdict, "correct");
  EXPECT_EQ(SavedProgress(progress.path()).completed, std::vector<std::string>{"intro"});
}

TEST(LabPanelModel, NumbersTooHighAndTooLowGetTheLabsOwnFeedback) {
  test_util::TempDir progress;
  LabPanelModel model(kLabsDir, progress.path().string());
  ASSERT_TRUE(model.Open(kRingLab)) << model.error();
  PassIntro(model);

  ASSERT_TRUE(model.RunStepForGrading()) << model.error();
  const double busbw = model.StepValues()->values.at("busbw_gbps");
  ASSERT_GT(busbw, 0);

  model.SetAnswer("busbw", std::to_string(busbw * 0.5));
  ASSERT_EQ(model.Check("busbw")->verdict, LabVerdict::kWrong);
  EXPECT_TRUE(Contains(model.SavedAnswer("busbw")->feedback, "Too low: busbw counts the factor"))
      << model.SavedAnswer("busbw")->feedback;
  model.SetAnswer("busbw", std::to_string(busbw * 2));
  ASSERT_EQ(model.Check("busbw")->verdict, LabVerdict::kWrong);
  EXPECT_TRUE(Contains(model.SavedAnswer("busbw")->feedback, "Too high: no link is that fast"))
      << model.SavedAnswer("busbw")->feedback;
  model.SetAnswer("busbw", std::to_string(busbw * 1.05));  // within the lab's 10%
  EXPECT_EQ(model.Check("busbw")->verdict, LabVerdict::kCorrect);

  // Text in a number box is invalid, not wrong, and says so.
  model.SetAnswer("steps", "six");
  EXPECT_EQ(model.Check("steps")->verdict, LabVerdict::kInvalid);
  EXPECT_EQ(model.Status("steps"), LabAnswerStatus::kInvalid);
}

TEST(LabPanelModel, EnteringAStepMeasuresItInTheBackground) {
  test_util::TempDir progress;
  LabPanelModel model(kLabsDir, progress.path().string());
  ASSERT_TRUE(model.Open(kRingLab)) << model.error();
  EXPECT_FALSE(model.grading_run_pending()) << "a text step runs nothing";
  PassIntro(model);
  EXPECT_TRUE(model.grading_run_pending() || model.StepValues() != nullptr);
  // The UI thread polls each frame; the values arrive without Check.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (model.StepValues() == nullptr && std::chrono::steady_clock::now() < deadline) {
    model.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_NE(model.StepValues(), nullptr) << model.error();
  EXPECT_FALSE(model.grading_run_pending());
  EXPECT_GT(model.StepValues()->values.at("busbw_gbps"), 0);
  EXPECT_EQ(model.StepValues()->values.at("steps"), 6);  // 2(N-1) logical steps on 4 GPUs
  EXPECT_EQ(model.StepValues()->summaries.size(), 2u);   // the ring's and the tree variant's

  // Resuming on this step starts its run at once; closing the lab while
  // it is still going is safe (Close waits for it).
  LabPanelModel resumed(kLabsDir, progress.path().string());
  ASSERT_TRUE(resumed.Open(kRingLab)) << resumed.error();
  EXPECT_EQ(resumed.step_index(), 1);
  EXPECT_TRUE(resumed.grading_run_pending() || resumed.StepValues() != nullptr);
  resumed.Close();
  EXPECT_FALSE(resumed.is_open());
  EXPECT_FALSE(resumed.grading_run_pending());
}

TEST(LabPanelModel, AChoiceDecidedByTheRunsIsGradedAgainstThem) {
  test_util::TempDir progress;
  LabPanelModel model(kLabsDir, progress.path().string());
  ASSERT_TRUE(model.Open(kRingLab)) << model.error();
  PassIntro(model);
  ASSERT_TRUE(model.RunStepForGrading()) << model.error();
  const LabValues& values = model.StepValues()->values;
  const bool ring_first = values.at("time_us") <= values.at("tree.time_us");
  model.SetAnswer("faster", ring_first ? "tree" : "ring");
  EXPECT_EQ(model.Check("faster")->verdict, LabVerdict::kWrong);
  model.SetAnswer("faster", ring_first ? "ring" : "tree");
  EXPECT_EQ(model.Check("faster")->verdict, LabVerdict::kCorrect);
  model.SetAnswer("faster", "star");
  EXPECT_EQ(model.Check("faster")->verdict, LabVerdict::kInvalid);
}

TEST(LabPanelModel, ANewPanelResumesAtTheSameStepWithTheSameAnswers) {
  test_util::TempDir progress;
  {
    LabPanelModel model(kLabsDir, progress.path().string());
    ASSERT_TRUE(model.Open(kRingLab)) << model.error();
    PassIntro(model);
    model.SetAnswer("steps", "6");
    ASSERT_EQ(model.Check("steps")->verdict, LabVerdict::kCorrect);
    model.SetAnswer("busbw", "12345");  // typed, not checked
  }  // the window closes; nothing else is written

  LabPanelModel reopened(kLabsDir, progress.path().string());
  ASSERT_TRUE(reopened.Open(kRingLab)) << reopened.error();
  EXPECT_TRUE(reopened.warning().empty()) << reopened.warning();
  EXPECT_EQ(reopened.step_index(), 1);
  EXPECT_TRUE(reopened.StepCompleted(0));
  EXPECT_EQ(reopened.AnswerText("double"), "42");
  EXPECT_EQ(reopened.AnswerText("steps"), "6");
  EXPECT_EQ(reopened.Status("steps"), LabAnswerStatus::kCorrect);
  EXPECT_EQ(reopened.AnswerText("busbw"), "12345");
  EXPECT_EQ(reopened.Status("busbw"), LabAnswerStatus::kUnchecked);
  EXPECT_EQ(reopened.Score(), 2);

  // The chooser shows the same progress.
  const std::vector<LabListEntry> rows = reopened.ListLabs();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].started);
  EXPECT_EQ(rows[0].step, 1);
  EXPECT_EQ(rows[0].completed, 1);
  EXPECT_EQ(rows[0].score, 2);
  EXPECT_FALSE(rows[0].done);
}

TEST(LabPanelModel, FinishingTheLastStepMeetsTheNextLabsPrerequisite) {
  test_util::TempDir progress;
  LabPanelModel model(kLabsDir, progress.path().string());
  ASSERT_TRUE(model.Open(kRingLab)) << model.error();
  PassIntro(model);
  model.Next();  // the last step: completed, and the step stays
  EXPECT_EQ(model.step_index(), 1);
  EXPECT_TRUE(model.lab_done());
  const std::vector<LabListEntry> rows = model.ListLabs();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].done);
  EXPECT_TRUE(rows[1].unmet_prerequisites.empty());
  model.Back();
  EXPECT_EQ(model.step_index(), 0);
  EXPECT_EQ(SavedProgress(progress.path()).step, 0);
}

TEST(LabPanelModel, AnUnreadableProgressFileIsKeptAsideAndTheLabStartsFresh) {
  test_util::TempDir progress;
  std::ofstream(progress.path() / "01-mini-ring.progress.toml") << "step = [[[\n";
  LabPanelModel model(kLabsDir, progress.path().string());
  // Listing the labs reads the file but leaves it for Open to report.
  const std::vector<LabListEntry> rows = model.ListLabs();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].started);
  ASSERT_TRUE(model.Open(kRingLab)) << model.error();
  EXPECT_EQ(model.step_index(), 0);
  EXPECT_TRUE(Contains(model.warning(), "corrupt")) << model.warning();
  bool kept = false;
  for (const auto& entry : fs::directory_iterator(progress.path())) {
    if (Contains(entry.path().filename().string(), ".corrupt-")) kept = true;
  }
  EXPECT_TRUE(kept);
}

TEST(LabPanelModel, StaleTemporaryFilesAreSweptWhenThePanelStarts) {
  test_util::TempDir progress;
  const fs::path stale = progress.path() / "01-mini-ring.progress.toml.tmp-999-1";
  std::ofstream(stale) << "half a save";
  LabPanelModel model(kLabsDir, progress.path().string());
  EXPECT_FALSE(fs::exists(stale));
}

/// The real file system, except that writes fail once `fail` is set.
class FailingWrites : public FileIo {
 public:
  bool fail = false;
  void WriteAndSync(const std::string& path, const std::string& bytes) override {
    if (fail) throw Error(path + ": no space left on device", ErrorKind::kRuntime);
    RealFileIo().WriteAndSync(path, bytes);
  }
  void Rename(const std::string& from, const std::string& to) override { RealFileIo().Rename(from, to); }
  void SyncDir(const std::string& dir) override { RealFileIo().SyncDir(dir); }
  bool ReadFile(const std::string& path, std::size_t max_bytes, std::string* bytes) override {
    return RealFileIo().ReadFile(path, max_bytes, bytes);
  }
  std::vector<std::string> ListDir(const std::string& dir) override { return RealFileIo().ListDir(dir); }
  void Remove(const std::string& path) override { RealFileIo().Remove(path); }
  void MakeDirs(const std::string& dir) override { RealFileIo().MakeDirs(dir); }
};

TEST(LabPanelModel, AFailedSaveKeepsTheAnswerAndThePreviousFile) {
  test_util::TempDir progress;
  FailingWrites io;
  LabPanelModel model(kLabsDir, progress.path().string(), io);
  ASSERT_TRUE(model.Open(kRingLab)) << model.error();
  model.SetAnswer("double", "40");
  ASSERT_TRUE(model.save_error().empty()) << model.save_error();

  io.fail = true;
  model.SetAnswer("double", "42");
  EXPECT_TRUE(Contains(model.save_error(), "no space left on device")) << model.save_error();
  EXPECT_EQ(model.AnswerText("double"), "42");
  EXPECT_EQ(SavedProgress(progress.path()).Find("double")->value, "40");

  io.fail = false;  // the next change saves everything
  ASSERT_EQ(model.Check("double")->verdict, LabVerdict::kCorrect);
  EXPECT_TRUE(model.save_error().empty());
  EXPECT_EQ(SavedProgress(progress.path()).Find("double")->value, "42");
}

TEST(LabPanelModel, AskForTheStepsRunSoTheViewsShowIt) {
  test_util::TempDir progress;
  LabPanelModel model(kLabsDir, progress.path().string());
  ASSERT_TRUE(model.Open(kRingLab)) << model.error();
  ScenarioSettings base;
  EXPECT_FALSE(model.TakeRunRequest(base).has_value()) << "a text step runs nothing";
  PassIntro(model);
  std::optional<ScenarioSettings> run = model.TakeRunRequest(base);
  ASSERT_TRUE(run.has_value()) << model.error();
  EXPECT_EQ(run->scenario, "allreduce");
  EXPECT_EQ(run->Param("algo"), "ring");
  EXPECT_EQ(run->Int("ranks"), 4);
  EXPECT_EQ(run->Param("size"), "1K");
  EXPECT_EQ(run->topology, "dgx-a100");
  EXPECT_EQ(run->backend, "sim");
  EXPECT_FALSE(model.TakeRunRequest(base).has_value()) << "asked once";

  model.RequestRun(0);  // the tree variant
  run = model.TakeRunRequest(base);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->Param("algo"), "tree");
  EXPECT_EQ(run->Int("ranks"), 4);
  EXPECT_EQ(model.shown_variant(), 0);
  Session session;
  EXPECT_EQ(session.Check(*run), "") << "the app accepts the variant's settings";
}

TEST(LabPanelModel, LockedParametersCannotBeChanged) {
  test_util::TempDir progress;
  LabPanelModel model(kLabsDir, progress.path().string());
  ASSERT_TRUE(model.Open(kRingLab)) << model.error();
  ScenarioSettings edit;
  EXPECT_TRUE(model.EnforceLocks(&edit).empty()) << "the text step locks nothing";
  PassIntro(model);
  edit = *model.TakeRunRequest(edit);
  EXPECT_TRUE(model.IsLocked("ranks"));
  EXPECT_FALSE(model.IsLocked("size"));

  // The student changes a locked and an unlocked field: only the lock holds.
  edit.SetParam("ranks", "8");
  edit.topology = "dgx1-v100";
  edit.SetParam("size", "4K");
  const std::vector<std::string> restored = model.EnforceLocks(&edit);
  EXPECT_EQ(restored, (std::vector<std::string>{"topology", "ranks"}));
  EXPECT_EQ(edit.Int("ranks"), 4);
  EXPECT_EQ(edit.topology, "dgx-a100");
  EXPECT_EQ(edit.Param("size"), "4K");
  EXPECT_TRUE(model.EnforceLocks(&edit).empty()) << "nothing left to restore";

  // Another scenario altogether would escape the locks: the kind holds too.
  edit.scenario = "pipeline";
  EXPECT_EQ(model.EnforceLocks(&edit), std::vector<std::string>{"scenario"});
  EXPECT_EQ(edit.scenario, "allreduce");
}

TEST(LabSettings, UnsetParametersTakeTheLabTablesDefaultsNotTheApps) {
  ScenarioSettings app_defaults;
  const LabSettings pipeline = LabStepSettings("pipeline", {}, app_defaults);
  EXPECT_TRUE(pipeline.runs_in_app);
  EXPECT_EQ(pipeline.settings.scenario, "pipeline");
  // The spec's defaults, which the labs and the app now share (the lab
  // table said width 512 and chunks 1, the app 256 and 2).
  EXPECT_EQ(pipeline.settings.Int("width"),
            std::stoi(FindScenario("pipeline")->FindParam("width")->default_text));
  EXPECT_EQ(pipeline.settings.Int("chunks"), 0);  // 0: 2 when interleaved, else 1
  EXPECT_TRUE(pipeline.notes.empty());

  LabParam dtype;
  dtype.name = "dtype";
  dtype.text = "f16";
  const LabSettings collective = LabStepSettings("collective", {dtype}, app_defaults);
  EXPECT_EQ(collective.settings.scenario, "allreduce");
  // The app runs the lab's dtype now (it was a note that the views ran f32):
  // f16 is stored as the spec's fp16 and reaches the run's parameters.
  EXPECT_TRUE(collective.notes.empty());
  EXPECT_EQ(ParamsOf(collective.settings).Text("dtype"), "fp16");

  LabParam params;
  params.name = "params";
  params.text = "1M";
  const LabSettings zero = LabStepSettings("zero", {params}, app_defaults);
  const MlpConfig sized = MlpForParameterCount(1e6);  // counts are decimal: 1M = 10^6
  EXPECT_EQ(zero.settings.Int("layers"), sized.layers);
  EXPECT_EQ(zero.settings.Int("width"), sized.width);

  EXPECT_FALSE(LabStepSettings("memory", {}, app_defaults).runs_in_app);
  LabParam bad;
  bad.name = "ranks";
  bad.text = "many";
  EXPECT_THROW(LabStepSettings("collective", {bad}, app_defaults), Error);
}

TEST(LabPanelLayout, ThePanelTakesAboutAThirdWithinReadableBounds) {
  EXPECT_FLOAT_EQ(LabPanelWidthPx(1600, 16), 480.0f);  // 30%
  EXPECT_FLOAT_EQ(LabPanelWidthPx(1000, 16), 352.0f);  // at least 44 characters of 8 px
  EXPECT_FLOAT_EQ(LabPanelWidthPx(4000, 16), 640.0f);  // at most 80
  EXPECT_FLOAT_EQ(LabPanelWidthPx(600, 16), 300.0f);   // never more than half
}

TEST(LabPanelPaths, ProgressGoesToTheUsersDataFolder) {
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  const std::string saved = old_xdg != nullptr ? old_xdg : "";
  setenv("XDG_DATA_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(DefaultLabProgressDir(), "/tmp/xdg-test/shardlab/progress");
  unsetenv("XDG_DATA_HOME");
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    EXPECT_EQ(DefaultLabProgressDir(), std::string(home) + "/.local/share/shardlab/progress");
  }
  if (old_xdg != nullptr) setenv("XDG_DATA_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace shardlab::gui

namespace shardlab::gui {
namespace {

// The repository's labs, in Chinese: the chooser and the open lab show the
// text of lab.zh-CN.toml; the numbers are lab.toml's.
TEST(LabPanelModel, ShowsALabInChinese) {
  const std::string labs = SHARDLAB_TEST_DATA_DIR "/../../labs";
  test_util::TempDir progress;
  LabPanelModel model(labs, progress.path().string());
  EXPECT_EQ(model.language(), "en");
  EXPECT_FALSE(model.SetLanguage("fr"));
  ASSERT_TRUE(model.SetLanguage("zh-CN"));
  EXPECT_EQ(model.language(), "zh-CN");
  const std::vector<LabListEntry> rows = model.ListLabs();
  ASSERT_GE(rows.size(), 8u) << model.error();
  EXPECT_EQ(rows[0].id, "01-ring-allreduce");
  EXPECT_EQ(rows[0].title, "环形 All-Reduce，一步一步");
  EXPECT_TRUE(rows[0].problem.empty()) << rows[0].problem;
  EXPECT_EQ(rows[0].max_score, 12);
  ASSERT_TRUE(model.Open(rows[0].path)) << model.error();
  EXPECT_EQ(model.lab().lang, "zh-CN");
  EXPECT_TRUE(Contains(model.lab().steps[0].text, "环形 All-Reduce 把工作平摊开")) << model.lab().steps[0].text;
  EXPECT_EQ(model.lab().steps[1].questions[0].prompt, "在 8 块 GPU 上，环形 All-Reduce 一共要走多少个逻辑步？");
  EXPECT_EQ(model.lab().steps[1].questions[0].expected, "2*(ranks-1)");

  // The panel's own words around a wrong answer are Chinese too (lab_words.h).
  model.Next();
  ASSERT_TRUE(model.SetAnswer("steps", "7"));
  ASSERT_TRUE(model.Check("steps").has_value()) << model.error();
  const std::string feedback = model.SavedAnswer("steps")->feedback;
  EXPECT_EQ(feedback.rfind("偏低（比期望值低 50%", 0), 0u) << feedback;
  EXPECT_FALSE(Contains(feedback, "Too low")) << feedback;
  ASSERT_TRUE(model.SetAnswer("steps", "seven"));
  ASSERT_TRUE(model.Check("steps").has_value()) << model.error();
  EXPECT_EQ(model.SavedAnswer("steps")->feedback, "“seven”不是一个数。") << model.SavedAnswer("steps")->feedback;
}

}  // namespace
}  // namespace shardlab::gui
