// Grading against fresh simulator runs: every lab's answer key scores full
// marks, a wrong answers file loses exactly the questions it gets wrong,
// measured values are what the scenario runs report, and a lab whose
// correct_if singles out no option is the lab's error, not the student's.
#include "engine/lab/lab_grader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/lab/lab_loader.h"
#include "engine/lab/lab_scenario.h"
#include "tests/common/json_reader.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

Lab RepoLab(const std::string& id) { return LoadLab((fs::path(SHARDLAB_LABS_DIR) / id).string()); }

LabAnswer* FindAnswer(LabAnswers& answers, const std::string& id) {
  for (LabAnswer& a : answers.answers) {
    if (a.question_id == id) return &a;
  }
  return nullptr;
}

const LabQuestionResult& Result(const LabGradeReport& report, const std::string& id) {
  for (const LabQuestionResult& r : report.results) {
    if (r.question_id == id) return r;
  }
  throw std::runtime_error("no question " + id);
}

TEST(LabGrading, EveryLabsKeyScoresFullMarks) {
  for (const std::string& folder : FindLabFolders(SHARDLAB_LABS_DIR)) {
    SCOPED_TRACE(folder);
    const Lab lab = LoadLab(folder);
    const LabAnswers key = LabAnswerKey(lab);
    ASSERT_EQ(static_cast<int>(key.answers.size()), lab.QuestionCount());
    // Through the answers file format, as an instructor would use it.
    const LabAnswers parsed = ParseLabAnswers(WriteLabAnswers(key), "key.toml");
    const LabGradeReport report = GradeLab(lab, parsed);
    EXPECT_EQ(report.score, lab.MaxPoints()) << FormatLabReport(report);
    EXPECT_EQ(report.max_score, lab.MaxPoints());
    for (const LabQuestionResult& r : report.results) {
      EXPECT_EQ(r.verdict, LabVerdict::kCorrect) << r.question_id << ": " << r.feedback;
    }
    EXPECT_TRUE(report.unknown_answers.empty());
  }
}

TEST(LabGrading, AWrongAnswersFileLosesExactlyTheWrongQuestions) {
  const Lab lab = RepoLab("01-ring-allreduce");
  LabAnswers answers = LabAnswerKey(lab);
  answers.student = "Test Student";
  FindAnswer(answers, "steps")->number = 7;                        // forgot the all-gather
  FindAnswer(answers, "time_predicted")->number *= 0.5;            // used 600 GB/s
  FindAnswer(answers, "why")->text = "NVSwitch shares 600 GB/s among all eight GPUs";
  FindAnswer(answers, "busbw")->number *= 1.03;                    // within the 5% tolerance
  FindAnswer(answers, "seed_time")->is_number = false;             // not a number
  FindAnswer(answers, "seed_time")->text = "about 76";
  answers.answers.erase(answers.answers.begin() + 2);             // sent_bytes: not answered
  answers.answers.push_back({"stpes", true, 14, "", 0});           // a typo: no such question

  const LabGradeReport report = GradeLab(lab, answers);
  EXPECT_EQ(report.student, "Test Student");
  EXPECT_EQ(report.max_score, lab.MaxPoints());
  EXPECT_EQ(report.score, lab.MaxPoints() - 5) << FormatLabReport(report);
  const std::map<std::string, LabVerdict> wrong = {{"steps", LabVerdict::kWrong},
                                                   {"time_predicted", LabVerdict::kWrong},
                                                   {"why", LabVerdict::kWrong},
                                                   {"seed_time", LabVerdict::kInvalid},
                                                   {"sent_bytes", LabVerdict::kMissing}};
  for (const LabQuestionResult& r : report.results) {
    const auto it = wrong.find(r.question_id);
    EXPECT_EQ(r.verdict, it == wrong.end() ? LabVerdict::kCorrect : it->second) << r.question_id;
    EXPECT_EQ(r.points, it == wrong.end() ? r.max_points : 0) << r.question_id;
  }
  EXPECT_EQ(report.unknown_answers, std::vector<std::string>{"stpes"});

  // The feedback explains the difference, then gives the lab's own hint.
  const LabQuestionResult& steps = Result(report, "steps");
  EXPECT_EQ(steps.expected, 14);
  EXPECT_EQ(steps.given, 7);
  EXPECT_NE(steps.feedback.find("50% low"), std::string::npos) << steps.feedback;
  EXPECT_NE(steps.feedback.find("Only the reduce-scatter half?"), std::string::npos)
      << steps.feedback;  // feedback_low
  const LabQuestionResult& time = Result(report, "time_predicted");
  EXPECT_NE(time.feedback.find("Did you use 600 GB/s?"), std::string::npos) << time.feedback;
  EXPECT_NE(time.feedback.find("a factor of 2"), std::string::npos) << time.feedback;
  EXPECT_EQ(Result(report, "why").given_text, "NVSwitch shares 600 GB/s among all eight GPUs");
  EXPECT_NE(Result(report, "seed_time").feedback.find("'about 76' is not a number"),
            std::string::npos);

  // The text report and the JSON say the same.
  const std::string text = FormatLabReport(report);
  EXPECT_NE(text.find("Score: " + std::to_string(report.score) + " / " +
                      std::to_string(report.max_score)),
            std::string::npos);
  const test_util::Json json = test_util::ParseJson(LabReportJson(report));
  EXPECT_EQ(json["lab"].text, "01-ring-allreduce");
  EXPECT_EQ(json["score"].number, report.score);
  ASSERT_EQ(json["questions"].items.size(), report.results.size());
  EXPECT_EQ(json["questions"].items[0]["id"].text, "steps");
  EXPECT_EQ(json["questions"].items[0]["verdict"].text, "wrong");
  EXPECT_EQ(json["questions"].items[0]["expected"].number, 14);
  EXPECT_EQ(json["questions"].items[0]["given"].number, 7);
  EXPECT_EQ(json["unknown_answers"].items[0].text, "stpes");
}

TEST(LabGrading, Lab8WrongAnswersLoseExactlyThoseQuestions) {
  const Lab lab = RepoLab("08-putting-it-together");
  LabAnswers answers = LabAnswerKey(lab);
  const double states = FindAnswer(answers, "states_predict")->number;
  FindAnswer(answers, "states_predict")->number = states * 12 / 16;  // the seed's 12 bytes
  FindAnswer(answers, "k_count")->text =
      "K = 8: 12 bytes per parameter in all (the seed texts: Adam m and v only)";
  FindAnswer(answers, "zero1_fits")->text = "Yes";
  FindAnswer(answers, "best_tp")->number = 16;
  FindAnswer(answers, "pp_busiest_traffic")->text = "DP (ZeRO-1 gradients and parameters)";
  FindAnswer(answers, "activations_measured")->number *= 1.04;  // within 5%

  const LabGradeReport report = GradeLab(lab, answers);
  EXPECT_EQ(report.score, lab.MaxPoints() - 5) << FormatLabReport(report);
  const std::set<std::string> wrong = {"states_predict", "k_count", "zero1_fits", "best_tp",
                                       "pp_busiest_traffic"};
  for (const LabQuestionResult& r : report.results) {
    EXPECT_EQ(r.verdict, wrong.count(r.question_id) ? LabVerdict::kWrong : LabVerdict::kCorrect)
        << r.question_id << ": " << r.feedback;
  }
  // The seed's count is 25% low, and the feedback says which byte is missing.
  const LabQuestionResult& predicted = Result(report, "states_predict");
  EXPECT_NE(predicted.feedback.find("25% low"), std::string::npos) << predicted.feedback;
  EXPECT_NE(predicted.feedback.find("fp32 master copy"), std::string::npos) << predicted.feedback;
}

TEST(LabGrading, MeasuredValuesAreTheScenarioRunsOwn) {
  // The ring moves exactly 2(N-1)/N x M bytes per rank: the engine's count
  // agrees with the formula, so lab 1's measured question is sound.
  const LabRunResult run = RunLabScenario(
      "collective", {{"ranks", LabParamType::kNumber, "", 8, false, 0},
                     {"size", LabParamType::kString, "1M", 0, false, 0}});
  EXPECT_EQ(run.measured.at("bytes_sent_per_rank"), 2.0 * 7 / 8 * 1048576);
  EXPECT_EQ(run.measured.at("steps"), 14);
  EXPECT_GT(run.measured.at("busbw_gbps"), 0);
  EXPECT_NEAR(run.measured.at("busbw_gbps"), run.measured.at("algbw_gbps") * 2 * 7 / 8, 1e-9);
  EXPECT_NEAR(run.measured.at("time_ms") * 1e3, run.measured.at("time_us"), 1e-9);

  const LabRunResult pipe = RunLabScenario(
      "pipeline", {{"schedule", LabParamType::kString, "1f1b", 0, false, 0},
                   {"stages", LabParamType::kNumber, "", 4, false, 0},
                   {"microbatches", LabParamType::kNumber, "", 8, false, 0}});
  EXPECT_EQ(pipe.measured.at("formula_bubble_fraction"), 3.0 / 8);
  EXPECT_EQ(pipe.measured.at("peak_inflight"), 4);
  EXPECT_EQ(pipe.measured.at("peak_inflight_last"), 1);

  const LabRunResult memory = RunLabScenario(
      "memory", {{"params", LabParamType::kString, "7.5B", 0, false, 0},
                 {"ranks", LabParamType::kNumber, "", 64, false, 0},
                 {"stage", LabParamType::kNumber, "", 0, false, 0}});
  EXPECT_NEAR(memory.measured.at("memory_per_gpu_gb"), 16 * 7.5, 1e-9);  // 16 bytes per parameter

  // Every quantity the table promises is measured, for every scenario.
  const std::map<std::string, std::vector<LabParam>> small = {
      {"collective", {{"size", LabParamType::kString, "64K", 0, false, 0}}},
      {"pipeline", {{"width", LabParamType::kNumber, "", 64, false, 0}}},
      {"tp", {}},
      {"zero", {}},
      {"memory", {}},
      {"3d", {{"width", LabParamType::kNumber, "", 64, false, 0}}},
      {"plan",
       {{"model", LabParamType::kString, "gpt3-1.3b", 0, false, 0},
        {"gpus", LabParamType::kNumber, "", 16, false, 0},
        {"topology", LabParamType::kString, "2x-dgx-a100-ib", 0, false, 0}}},
      {"moe", {}},
      {"dp-train", {{"steps", LabParamType::kNumber, "", 3, false, 0}}},
      // Every policy and a shared prefix, so every quantity is measured.
      {"inference",
       {{"batching", LabParamType::kString, "all", 0, false, 0},
        {"requests", LabParamType::kNumber, "", 40, false, 0},
        {"prefix_tokens", LabParamType::kNumber, "", 16, false, 0},
        {"check_requests", LabParamType::kNumber, "", 2, false, 0},
        {"int8", LabParamType::kBool, "", 0, true, 0}}},
      {"elastic", {}},
      {"trace-compare", {}},  // the shipped H200 ring against the model of its machine
  };
  for (const ScenarioSpec* spec : LabScenarios()) {
    const LabRunResult r = RunLabScenario(spec->name, small.at(spec->name));
    for (const QuantitySpec& q : spec->measured) {
      EXPECT_EQ(r.measured.count(q.name), 1u) << spec->name << "." << q.name;
      EXPECT_TRUE(std::isfinite(r.measured.at(q.name))) << spec->name << "." << q.name;
    }
    EXPECT_EQ(r.measured.size(), spec->measured.size()) << spec->name;
    EXPECT_FALSE(r.summary.empty());
  }
}

TEST(LabGrading, KnowsWhichQuestionsNeedARun) {
  const Lab lab = RepoLab("01-ring-allreduce");
  int step = -1;
  auto needs = [&](const std::string& id) {
    const LabQuestion* q = lab.FindQuestion(id, &step);
    EXPECT_NE(q, nullptr) << id;
    return LabQuestionNeedsRun(lab.steps[static_cast<std::size_t>(step)], *q);
  };
  EXPECT_FALSE(needs("steps"));        // 2*(ranks-1): parameters only
  EXPECT_FALSE(needs("why"));          // a fixed answer
  EXPECT_TRUE(needs("sent_bytes"));    // measured
  EXPECT_TRUE(needs("busbw"));
  // A prediction can be checked before the run, from the parameters alone.
  const LabStep& count = lab.steps[1];
  const LabAnswer fourteen{"steps", true, 14, "", 0};
  EXPECT_EQ(CheckLabAnswer(count, count.questions[0], LabParamValues(count.scenario, count.params),
                           &fourteen)
                .verdict,
            LabVerdict::kCorrect);
}

TEST(LabGrading, ChoiceDecidedByTheRunsMustSingleOutOneOption) {
  LabStep step;
  step.id = "s";
  step.scenario = "memory";
  LabQuestion q;
  q.id = "q";
  q.kind = LabQuestionKind::kChoice;
  q.options = {"a", "b"};
  q.correct_if = {"memory_per_gpu_gb > 0", "memory_per_gpu_gb > 1"};  // both true
  const LabValues values = RunLabStep(step).values;
  try {
    CheckLabAnswer(step, q, values, nullptr);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("question 'q': the runs make 2 options correct (a, b)"),
              std::string::npos)
        << e.what();
  }
  q.correct_if = {"memory_per_gpu_gb < 0", "memory_per_gpu_gb > 1"};
  const LabAnswer answer{"q", false, 0, " B ", 0};  // options match ignoring case and spaces
  EXPECT_EQ(CheckLabAnswer(step, q, values, &answer).verdict, LabVerdict::kCorrect);
}

TEST(LabGrading, NumberToleranceIsRelativeOrAbsoluteWhicheverIsLarger) {
  LabStep step;
  LabQuestion q;
  q.id = "n";
  q.expected = "100";
  q.tolerance = 0.05;
  auto verdict = [&](double given) {
    const LabAnswer a{"n", true, given, "", 0};
    return CheckLabAnswer(step, q, {}, &a).verdict;
  };
  EXPECT_EQ(verdict(104.9), LabVerdict::kCorrect);
  EXPECT_EQ(verdict(95.1), LabVerdict::kCorrect);
  EXPECT_EQ(verdict(105.1), LabVerdict::kWrong);
  q.tolerance_abs = 10;
  EXPECT_EQ(verdict(109.9), LabVerdict::kCorrect);
  EXPECT_EQ(verdict(89.0), LabVerdict::kWrong);
  q.tolerance = 0;
  q.tolerance_abs = 0;
  EXPECT_EQ(verdict(100), LabVerdict::kCorrect);
  EXPECT_EQ(verdict(100.001), LabVerdict::kWrong);
  // A number typed as text is accepted, with the question's units after it.
  const LabAnswer typed{"n", false, 0, " 100 ", 0};
  EXPECT_EQ(CheckLabAnswer(step, q, {}, &typed).verdict, LabVerdict::kCorrect);
  q.units = "GB/s";
  const LabAnswer with_units{"n", false, 0, "100 gb/s", 0};
  EXPECT_EQ(CheckLabAnswer(step, q, {}, &with_units).verdict, LabVerdict::kCorrect);
  const LabAnswer other_units{"n", false, 0, "100 MB/s", 0};
  const LabQuestionResult r = CheckLabAnswer(step, q, {}, &other_units);
  EXPECT_EQ(r.verdict, LabVerdict::kInvalid);
  EXPECT_EQ(r.feedback, "'100 MB/s' is not a number (in GB/s); expected 100 GB/s.");
}

TEST(LabGrading, AnswersFilesReadBackAndNameTheirLab) {
  LabAnswers a;
  a.lab = "04-pipeline-bubbles";
  a.student = "Ada \"the\" student";
  a.answers = {{"x", true, 0.1 + 0.2, "", 0}, {"y", false, 0, "ring", 0}, {"z-1", true, 1e300, "", 0}};
  const LabAnswers back = ParseLabAnswers(WriteLabAnswers(a), "a.toml");
  EXPECT_EQ(back.lab, a.lab);
  EXPECT_EQ(back.student, a.student);
  ASSERT_EQ(back.answers.size(), 3u);
  EXPECT_EQ(back.answers[0].number, 0.1 + 0.2);
  EXPECT_EQ(back.answers[1].text, "ring");
  EXPECT_EQ(back.answers[2].number, 1e300);

  EXPECT_THROW(ParseLabAnswers("[answers]\nx = [1]\n", "a.toml"), Error);
  EXPECT_THROW(ParseLabAnswers("grade = 3\n", "a.toml"), Error);
  try {
    GradeLab(RepoLab("01-ring-allreduce"), a);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the answers are for lab '04-pipeline-bubbles'"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace shardlab
