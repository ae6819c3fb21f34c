// Grading is the same in every language of a lab: every lab's Chinese key
// scores full marks, and the same answers (choices written in English or in
// Chinese) get the same verdict, points and expected value in both; and the
// class gradebook of tests/data/labs/class-01 equals the scores worked out by
// hand from its files, in both languages, with the malformed file reported
// and the others graded.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "engine/core/error.h"
#include "engine/lab/lab_gradebook.h"
#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"
#include "tests/common/json_reader.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

/// `answers` with every choice written as the option at the same place in
/// `to` (the same lab in another language).
LabAnswers ChoicesIn(const LabAnswers& answers, const Lab& from, const Lab& to) {
  LabAnswers out = answers;
  for (LabAnswer& a : out.answers) {
    int s = 0;
    const LabQuestion* q = from.FindQuestion(a.question_id, &s);
    if (q == nullptr || q->kind != LabQuestionKind::kChoice) continue;
    const auto at = std::find(q->options.begin(), q->options.end(), a.text) - q->options.begin();
    a.text = to.FindQuestion(a.question_id)->options.at(static_cast<std::size_t>(at));
  }
  return out;
}

void ExpectSameGrades(const LabGradeReport& a, const LabGradeReport& b) {
  EXPECT_EQ(a.score, b.score);
  EXPECT_EQ(a.max_score, b.max_score);
  ASSERT_EQ(a.results.size(), b.results.size());
  for (std::size_t i = 0; i < a.results.size(); ++i) {
    EXPECT_EQ(a.results[i].question_id, b.results[i].question_id);
    EXPECT_EQ(a.results[i].verdict, b.results[i].verdict) << a.results[i].question_id;
    EXPECT_EQ(a.results[i].points, b.results[i].points) << a.results[i].question_id;
    EXPECT_EQ(a.results[i].expected, b.results[i].expected) << a.results[i].question_id;
    EXPECT_EQ(a.results[i].tolerance, b.results[i].tolerance) << a.results[i].question_id;
  }
}

TEST(LabLanguages, EveryLabsKeyScoresFullMarksInBothLanguagesWithTheSameGrades) {
  for (const std::string& folder : FindLabFolders(SHARDLAB_LABS_DIR)) {
    SCOPED_TRACE(folder);
    const Lab en = LoadLab(folder, "en");
    const Lab zh = LoadLab(folder, "zh-CN");
    // Each language's own runs (LabAnswerKey's, made once here).
    const std::vector<LabStepValues> zh_runs = GradeLabRuns(zh);
    const std::vector<LabStepValues> en_runs = GradeLabRuns(en);
    // The Chinese key (as `lab key --lang zh-CN` prints it), through the file format.
    LabAnswers key;
    key.lab = zh.id;
    for (std::size_t s = 0; s < zh.steps.size(); ++s) {
      for (const LabQuestion& q : zh.steps[s].questions) {
        key.answers.push_back(ExpectedLabAnswer(q, zh_runs[s].values));
      }
    }
    const LabAnswers key_zh = ParseLabAnswers(WriteLabAnswers(key), "key.zh-CN.toml");
    ASSERT_EQ(static_cast<int>(key_zh.answers.size()), zh.QuestionCount());
    const LabGradeReport zh_report = GradeLab(zh, key_zh, zh_runs);
    EXPECT_EQ(zh_report.score, zh.MaxPoints()) << FormatLabReport(zh_report);
    EXPECT_EQ(zh_report.lang, "zh-CN");
    // The same answers, choices written in English, graded in English.
    const LabAnswers key_en = ChoicesIn(key_zh, zh, en);
    const LabGradeReport en_report = GradeLab(en, key_en, en_runs);
    EXPECT_EQ(en_report.score, en.MaxPoints()) << FormatLabReport(en_report);
    ExpectSameGrades(en_report, zh_report);
    // And across: the English lab takes the Chinese choices.
    for (const LabAnswer& a : key_zh.answers) {
      int s = 0;
      const LabQuestion* q = en.FindQuestion(a.question_id, &s);
      // Questions whose correct option needs the run (correct_if) are
      // checked by the whole-lab grades above; the others here.
      if (q->kind != LabQuestionKind::kChoice || !q->correct_if.empty()) continue;
      const LabQuestionResult r = CheckLabAnswer(en.steps[static_cast<std::size_t>(s)], *q,
                                                 LabValues{}, &a);
      EXPECT_EQ(r.verdict, LabVerdict::kCorrect) << a.question_id << ": " << r.feedback;
    }
  }
}

TEST(LabLanguages, AStudentsMistakesCostTheSameInBothLanguages) {
  const std::string lab_dir = std::string(SHARDLAB_LABS_DIR) + "/04-pipeline-bubbles";
  const LabAnswers student =
      LoadLabAnswers(std::string(SHARDLAB_TEST_DATA_DIR) + "/labs/04-pipeline-bubbles-student.toml");
  const LabGradeReport en = GradeLab(LoadLab(lab_dir, "en"), student);
  const LabGradeReport zh = GradeLab(LoadLab(lab_dir, "zh-CN"), student);
  EXPECT_EQ(en.score, 13);  // as tests/cli/lab_cli_test.cpp grades it
  ExpectSameGrades(en, zh);
  EXPECT_EQ(zh.unknown_answers, en.unknown_answers);
}

// tests/data/labs/class-01, worked out by hand from lab 01's formulas
// (N = 8, M = 16 MiB; 26 GB over 600, 300 and 230 GB/s):
//   ada: steps 14, chunk_bytes 2097152, sent_bytes 29360128, sent_bytes_64
//        33030144, time_predicted 1.566 (1.5659), seed_time 75.83 (75.833),
//        egress_time 151.67, why (the right option), nccl_time 197.8: 9 right;
//        time_measured, busbw, seed_measured not answered            9 / 12
//   bo:  steps 7 (half), sent_bytes_64 2M (2% off, tolerance 1%),
//        time_predicted at 600 GB/s (half), a wrong option; right: chunk_bytes,
//        seed_time 75.8 (0.04% off)                                  2 / 12
//   cy:  steps 14, egress_time 151.7, why (in Chinese), nccl_time    4 / 12
//   dee: `steps = [7, 14]`, not a number: reported, not graded
TEST(LabGradebook, ThreeStudentsEqualTheHandComputedScoresInBothLanguages) {
  const std::string lab_dir = std::string(SHARDLAB_LABS_DIR) + "/01-ring-allreduce";
  const std::vector<std::string> files =
      FindAnswerFiles(std::string(SHARDLAB_TEST_DATA_DIR) + "/labs/class-01");
  ASSERT_EQ(files.size(), 4u);
  const std::map<std::string, int> expected = {{"Ada", 9}, {"Bo", 2}, {"Cy", 4}};
  std::vector<LabGradebook> books;
  for (const char* lang : {"en", "zh-CN"}) {
    SCOPED_TRACE(lang);
    const LabGradebook book = GradeClass(LoadLab(lab_dir, lang), files);
    EXPECT_EQ(book.graded, 3);
    EXPECT_EQ(book.failed, 1);
    EXPECT_EQ(book.max_score, 12);
    ASSERT_EQ(book.rows.size(), 4u);
    for (const GradebookRow& row : book.rows) {
      if (row.student == "dee") {
        EXPECT_FALSE(row.graded);
        EXPECT_NE(row.error.find("class-01/dee.toml:4: answers.steps: must be a number or a string"),
                  std::string::npos)
            << row.error;
        continue;
      }
      ASSERT_TRUE(row.graded) << row.student << ": " << row.error;
      EXPECT_EQ(row.report.score, expected.at(row.student)) << row.student << "\n"
                                                            << FormatLabReport(row.report);
    }
    // Per question: the share of the three graded students who got it.
    std::map<std::string, int> correct;
    for (const GradebookQuestion& q : book.questions) {
      correct[q.id] = q.correct;
      EXPECT_DOUBLE_EQ(q.share_correct, q.correct / 3.0) << q.id;
    }
    EXPECT_EQ(correct["steps"], 2);          // ada, cy
    EXPECT_EQ(correct["chunk_bytes"], 2);    // ada, bo
    EXPECT_EQ(correct["seed_time"], 2);      // ada, bo
    EXPECT_EQ(correct["why"], 2);            // ada (English), cy (Chinese)
    EXPECT_EQ(correct["time_predicted"], 1); // ada
    EXPECT_EQ(correct["busbw"], 0);
    // Missed by most (fewer than 2 of 3 right), hardest first.
    EXPECT_EQ(book.most_missed,
              (std::vector<std::string>{"time_measured", "busbw", "seed_measured", "sent_bytes",
                                        "sent_bytes_64", "time_predicted"}));
    books.push_back(book);
  }
  EXPECT_EQ(GradebookCsv(books[0]), GradebookCsv(books[1]));

  // The JSON says the same.
  const test_util::Json json = test_util::ParseJson(GradebookJson(books[1]));
  EXPECT_EQ(json["lang"].text, "zh-CN");
  EXPECT_EQ(json["graded"].number, 3);
  EXPECT_EQ(json["failed"].number, 1);
  int sum = 0, failed = 0;
  for (const test_util::Json& s : json["students"].items) {
    if (s["graded"].boolean) {
      sum += static_cast<int>(s["score"].number);
    } else {
      EXPECT_FALSE(s.Has("score"));
      EXPECT_NE(s["error"].text.find("dee.toml:4: answers.steps"), std::string::npos);
      ++failed;
    }
  }
  EXPECT_EQ(sum, 9 + 2 + 4);
  EXPECT_EQ(failed, 1);
  // CSV: a header, four students, the shares.
  const std::string csv = GradebookCsv(books[0]);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6) << csv;
  EXPECT_NE(csv.find("\nAda,ada.toml,1,1,1,1,1,0,0,1,1,0,1,1,9,12,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nshare correct,,0.67,0.67,0.33,0.33,0.33,0.00,0.00,0.67,0.67,0.00,0.67,0.67,"),
            std::string::npos)
      << csv;
}

TEST(LabGradebook, AQuestionHalfTheClassGetsIsNotMissedByMost) {
  const std::string klass = std::string(SHARDLAB_TEST_DATA_DIR) + "/labs/class-01/";
  const LabGradebook book = GradeClass(LoadLab(std::string(SHARDLAB_LABS_DIR) + "/01-ring-allreduce"),
                                       {klass + "ada.toml", klass + "cy.toml"});
  ASSERT_EQ(book.graded, 2);
  // chunk_bytes, sent_bytes, sent_bytes_64, time_predicted, seed_time: ada
  // only (1 of 2, half); the three measured questions: neither.
  EXPECT_EQ(book.most_missed, (std::vector<std::string>{"time_measured", "busbw", "seed_measured"}));
  for (const GradebookQuestion& q : book.questions) {
    if (q.id == "chunk_bytes") {
      EXPECT_DOUBLE_EQ(q.share_correct, 0.5);
    }
    if (q.id == "steps") {
      EXPECT_EQ(q.answered, 2);
    }
    if (q.id == "busbw") {
      EXPECT_EQ(q.answered, 0);
    }
  }
}

TEST(LabGradebook, AFolderWithoutAnswersFilesIsAnError) {
  EXPECT_THROW(FindAnswerFiles("/nonexistent-class"), Error);
  EXPECT_THROW(FindAnswerFiles(SHARDLAB_LABS_DIR), Error);  // folders only, no *.toml
}

}  // namespace
}  // namespace shardlab
