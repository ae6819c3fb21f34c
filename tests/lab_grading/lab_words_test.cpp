// The grader's words in each language (engine/lab/lab_words.h): every
// template has the same blanks in every language; a report, the panel's
// feedback and a gradebook of a Chinese lab carry none of the English
// grader words, and the English ones are unchanged; blanks are filled in
// one pass; Chinese columns line up.
#include "engine/lab/lab_words.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "engine/lab/lab_gradebook.h"
#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

/// The {names} of a template.
std::set<std::string> Blanks(const std::string& text) {
  std::set<std::string> names;
  for (std::size_t at = text.find('{'); at != std::string::npos; at = text.find('{', at + 1)) {
    const std::size_t close = text.find('}', at);
    if (close != std::string::npos) names.insert(text.substr(at + 1, close - at - 1));
  }
  return names;
}

/// Every template of `w`, named, in declaration order.
std::vector<std::pair<std::string, std::string>> Templates(const LabWords& w) {
  std::vector<std::pair<std::string, std::string>> all = {
      {"correct_number", w.correct_number}, {"correct_option", w.correct_option},
      {"missing_number", w.missing_number}, {"missing_option", w.missing_option},
      {"not_a_number", w.not_a_number}, {"in_units", w.in_units},
      {"percent_high", w.percent_high}, {"percent_low", w.percent_low},
      {"too_high", w.too_high}, {"too_low", w.too_low}, {"factor", w.factor},
      {"wrong_number", w.wrong_number}, {"not_an_option", w.not_an_option},
      {"wrong_option", w.wrong_option}, {"list_separator", w.list_separator},
      {"panel_type_first", w.panel_type_first}, {"panel_not_a_number", w.panel_not_a_number},
      {"panel_not_a_number_units", w.panel_not_a_number_units},
      {"panel_not_an_option", w.panel_not_an_option}, {"panel_too_high", w.panel_too_high},
      {"panel_too_low", w.panel_too_low}, {"panel_above", w.panel_above},
      {"panel_below", w.panel_below}, {"panel_within", w.panel_within},
      {"panel_open", w.panel_open}, {"panel_close", w.panel_close}, {"panel_end", w.panel_end},
      {"panel_not_option_given", w.panel_not_option_given},
      {"report_title", w.report_title}, {"student", w.student}, {"runs", w.runs},
      {"question_line", w.question_line}, {"expected", w.expected}, {"given", w.given},
      {"none", w.none}, {"unknown_answer", w.unknown_answer}, {"score", w.score},
      {"key_header", w.key_header},
      {"gradebook_title", w.gradebook_title}, {"graded_one", w.graded_one},
      {"graded_many", w.graded_many}, {"failed_one", w.failed_one}, {"failed_many", w.failed_many},
      {"student_column", w.student_column}, {"score_column", w.score_column},
      {"not_graded", w.not_graded}, {"share_heading", w.share_heading},
      {"share_count", w.share_count}, {"most_missed", w.most_missed},
      {"most_missed_none", w.most_missed_none}, {"id_separator", w.id_separator}};
  for (int v = 0; v < 4; ++v) all.push_back({"verdicts[" + std::to_string(v) + "]", w.verdicts[v]});
  return all;
}

TEST(LabWords, EveryLanguageHasEveryTemplateWithTheSameBlanks) {
  const auto english = Templates(LabWordsFor("en"));
  for (const std::string& lang : LabWordsLanguages()) {
    SCOPED_TRACE(lang);
    const auto words = Templates(LabWordsFor(lang));
    ASSERT_EQ(words.size(), english.size());
    for (std::size_t i = 0; i < words.size(); ++i) {
      EXPECT_FALSE(words[i].second.empty()) << words[i].first;
      EXPECT_EQ(Blanks(words[i].second), Blanks(english[i].second)) << words[i].first;
      if (lang != "en" && words[i].first != "panel_open") {
        // A translation that left the English in place is no translation.
        EXPECT_NE(words[i].second, english[i].second) << words[i].first;
      }
    }
  }
  // A language without words of its own reads English.
  EXPECT_EQ(LabWordsFor("fr").score, LabWordsFor("en").score);
}

TEST(LabWords, FillReplacesEachBlankOnceAndLeavesValuesAlone) {
  EXPECT_EQ(Fill("Correct: {value} (expected {expected}).", {{"value", "3"}, {"expected", "4"}}),
            "Correct: 3 (expected 4).");
  // A student's answer holding a blank's name is not read as a blank.
  EXPECT_EQ(Fill("'{given}' vs {expected}", {{"given", "{expected}"}, {"expected", "14"}}), "'{expected}' vs 14");
  // An unknown blank and a lone brace stay as they are.
  EXPECT_EQ(Fill("{nope} { x", {{"x", "1"}}), "{nope} { x");
}

TEST(LabWords, ChineseCharactersTakeTwoColumns) {
  EXPECT_EQ(DisplayWidth("student"), 7u);
  EXPECT_EQ(DisplayWidth("学生"), 4u);
  EXPECT_EQ(DisplayWidth("张三 Li"), 7u);
  EXPECT_EQ(DisplayWidth("（）"), 4u);  // full-width brackets
  EXPECT_EQ(PadTo("学生", 6), "学生  ");
  EXPECT_EQ(PadTo("toolong", 3), "toolong");
}

LabAnswer* FindAnswer(LabAnswers& answers, const std::string& id) {
  for (LabAnswer& a : answers.answers) {
    if (a.question_id == id) return &a;
  }
  return nullptr;
}

/// Lab 01's key with one wrong number, one number written as words, one
/// unanswered question and a wrong choice.
LabAnswers MixedAnswers(const Lab& lab) {
  LabAnswers answers = LabAnswerKey(lab);
  answers.student = "李明";
  FindAnswer(answers, "steps")->number = 7;
  FindAnswer(answers, "seed_time")->is_number = false;
  FindAnswer(answers, "seed_time")->text = "about 76";
  LabAnswer* why = FindAnswer(answers, "why");
  const LabQuestion* q = lab.FindQuestion("why");
  for (const std::string& option : q->options) {
    if (option != why->text) {
      why->text = option;
      break;
    }
  }
  answers.answers.erase(answers.answers.begin() + 2);  // sent_bytes: not answered
  answers.answers.push_back({"stpes", true, 14, "", 0});
  return answers;
}

TEST(LabWords, AChineseReportHasNoEnglishGraderWordsAndGradesTheSame) {
  const std::string folder = (fs::path(SHARDLAB_LABS_DIR) / "01-ring-allreduce").string();
  const Lab en = LoadLab(folder, "en");
  const Lab zh = LoadLab(folder, "zh-CN");
  const std::vector<LabStepValues> runs = GradeLabRuns(en);
  const LabGradeReport en_report = GradeLab(en, MixedAnswers(en), runs);
  const LabGradeReport zh_report = GradeLab(zh, MixedAnswers(zh), runs);
  EXPECT_EQ(zh_report.score, en_report.score);
  EXPECT_EQ(zh_report.score, en.MaxPoints() - 4);

  const std::string en_text = FormatLabReport(en_report);
  const std::string zh_text = FormatLabReport(zh_report);
  for (const char* english : {"Student:", "expected:", "given:", "Score:", "Correct:", "% low", "(step ",
                              "is not a number", "Not answered", "You chose", "Unknown answer", "  wrong  ",
                              "  missing  ", "  invalid  ", "  correct  "}) {
    EXPECT_NE(en_text.find(english), std::string::npos) << english;
    EXPECT_EQ(zh_text.find(english), std::string::npos) << english << "\n" << zh_text;
  }
  for (const char* chinese : {"学生：李明", "期望：", "作答：", "得分：", "正确：", "偏低 50%", "（步骤 ",
                              "不是一个数", "未作答", "你选了", "未知的答案“stpes”", "  错误  ", "  无效  "}) {
    EXPECT_NE(zh_text.find(chinese), std::string::npos) << chinese << "\n" << zh_text;
  }
}

TEST(LabWords, AChineseGradebookLinesUpItsColumns) {
  const std::string folder = (fs::path(SHARDLAB_LABS_DIR) / "01-ring-allreduce").string();
  const Lab zh = LoadLab(folder, "zh-CN");
  LabGradebook book;
  book.lab_id = zh.id;
  book.lab_title = zh.title;
  book.lang = zh.lang;
  book.graded = 2;
  book.failed = 1;
  for (const char* name : {"李明", "Ann", "王小红"}) {
    GradebookRow row;
    row.student = name;
    row.graded = std::string(name) != "王小红";
    row.error = row.graded ? "" : "answers.toml:3: answers: not a table";
    row.report.score = 5;
    row.report.max_score = 9;
    book.rows.push_back(row);
  }
  const std::string text = FormatGradebook(book);
  EXPECT_NE(text.find("已评分 2 名学生，1 个答案文件无法评分"), std::string::npos) << text;
  EXPECT_NE(text.find("未评分："), std::string::npos) << text;
  EXPECT_NE(text.find("没有（每道题都至少有一半人答对）"), std::string::npos) << text;
  EXPECT_EQ(text.find("graded"), std::string::npos) << text;
  // Every row's score column starts at the same display column.
  std::istringstream lines(text);
  std::string line;
  std::set<std::size_t> columns;
  while (std::getline(lines, line)) {
    for (const char* name : {"学生", "李明", "Ann", "王小红"}) {
      if (line.rfind(name, 0) != 0) continue;
      std::size_t at = line.find_first_not_of(' ', std::string(name).size());
      columns.insert(DisplayWidth(line.substr(0, at)));
    }
  }
  EXPECT_EQ(columns.size(), 1u) << text;
}

}  // namespace
}  // namespace shardlab
