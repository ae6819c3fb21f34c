// Lab translations (lab.zh-CN.toml): every lab in labs/ has one that
// validates, holds Chinese text for every English text field and changes no
// number or check; each kind of mismatch with lab.toml (a missing field, an
// extra one, a wrong option count, an unknown id, a number) is a problem
// naming the file, line and field; the locale picks the language.
#include "engine/lab/lab_translation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

/// True when `text` is written in Chinese: it holds a CJK ideograph
/// (U+4E00..U+9FFF: UTF-8 lead byte 0xE4..0xE9) or Chinese punctuation
/// (U+3000..U+303F "。"; U+FF00..U+FFEF "，：（）"), as a formula-only
/// feedback ("15 GB + 1.64 GB = 16.6 GB。") does.
bool HasChinese(const std::string& text) {
  for (std::size_t i = 0; i + 2 < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto d = static_cast<unsigned char>(text[i + 1]);
    if (c >= 0xE4 && c <= 0xE9) return true;
    if (c == 0xE3 && d == 0x80) return true;
    if (c == 0xEF && (d == 0xBC || d == 0xBD)) return true;
  }
  return false;
}

TEST(LabTranslation, EveryLabInTheRepositoryHasAValidChineseText) {
  const std::vector<std::string> folders = FindLabFolders(SHARDLAB_LABS_DIR);
  ASSERT_GE(folders.size(), 8u);
  for (const std::string& folder : folders) {
    SCOPED_TRACE(folder);
    const LabLoadResult checked = ValidateLab(folder);
    EXPECT_TRUE(checked.ok()) << checked.ProblemsText();
    const Lab en = LoadLab(folder);
    const Lab zh = LoadLab(folder, "zh-CN");
    EXPECT_EQ(en.lang, "en");
    EXPECT_EQ(zh.lang, "zh-CN");
    // The text is Chinese wherever the English has text...
    EXPECT_TRUE(HasChinese(zh.title)) << zh.title;
    if (!en.summary.empty()) EXPECT_TRUE(HasChinese(zh.summary)) << zh.summary;
    ASSERT_EQ(zh.goals.size(), en.goals.size());
    for (const std::string& g : zh.goals) EXPECT_TRUE(HasChinese(g)) << g;
    // ... and the numbers and checks are lab.toml's.
    EXPECT_EQ(zh.minutes, en.minutes);
    EXPECT_EQ(zh.prerequisites, en.prerequisites);
    EXPECT_EQ(zh.MaxPoints(), en.MaxPoints());
    ASSERT_EQ(zh.steps.size(), en.steps.size());
    for (std::size_t s = 0; s < en.steps.size(); ++s) {
      const LabStep& a = en.steps[s];
      const LabStep& b = zh.steps[s];
      SCOPED_TRACE(a.id);
      EXPECT_EQ(b.id, a.id);
      EXPECT_TRUE(HasChinese(b.title)) << b.title;
      EXPECT_TRUE(HasChinese(b.text)) << b.text;
      EXPECT_NE(b.text, a.text);
      EXPECT_EQ(b.scenario, a.scenario);
      EXPECT_EQ(b.locked, a.locked);
      ASSERT_EQ(b.params.size(), a.params.size());
      for (std::size_t p = 0; p < a.params.size(); ++p) {
        EXPECT_EQ(LabParamText(b.params[p]), LabParamText(a.params[p]));
      }
      ASSERT_EQ(b.variants.size(), a.variants.size());
      ASSERT_EQ(b.questions.size(), a.questions.size());
      for (std::size_t q = 0; q < a.questions.size(); ++q) {
        const LabQuestion& x = a.questions[q];
        const LabQuestion& y = b.questions[q];
        SCOPED_TRACE(x.id);
        EXPECT_EQ(y.id, x.id);
        EXPECT_EQ(y.kind, x.kind);
        EXPECT_EQ(y.expected, x.expected);
        EXPECT_EQ(y.measured, x.measured);
        EXPECT_EQ(y.units, x.units);
        EXPECT_EQ(y.tolerance, x.tolerance);
        EXPECT_EQ(y.tolerance_abs, x.tolerance_abs);
        EXPECT_EQ(y.correct_if, x.correct_if);
        EXPECT_EQ(y.points, x.points);
        EXPECT_TRUE(HasChinese(y.prompt)) << y.prompt;
        for (const auto& [en_text, zh_text] :
             {std::pair{&x.feedback, &y.feedback}, std::pair{&x.feedback_low, &y.feedback_low},
              std::pair{&x.feedback_high, &y.feedback_high}, std::pair{&x.explain, &y.explain}}) {
          EXPECT_EQ(en_text->empty(), zh_text->empty());
          if (!zh_text->empty()) EXPECT_TRUE(HasChinese(*zh_text)) << *zh_text;
        }
        ASSERT_EQ(y.options.size(), x.options.size());
        for (std::size_t o = 0; o < x.options.size(); ++o) {
          // An option is Chinese unless it is a size or a name both languages write alike.
          EXPECT_TRUE(HasChinese(y.options[o]) || y.options[o] == x.options[o]) << y.options[o];
        }
        // The correct option is the one at the English answer's place.
        if (!x.answer.empty()) {
          const auto at = std::find(x.options.begin(), x.options.end(), x.answer) - x.options.begin();
          EXPECT_EQ(y.answer, y.options.at(static_cast<std::size_t>(at)));
        }
      }
    }
  }
}

TEST(LabTranslation, TheLocalePicksTheLanguage) {
  EXPECT_EQ(LabLanguageFromLocale("zh_CN.UTF-8"), "zh-CN");
  EXPECT_EQ(LabLanguageFromLocale("zh_TW"), "zh-CN");
  EXPECT_EQ(LabLanguageFromLocale("zh"), "zh-CN");
  EXPECT_EQ(LabLanguageFromLocale("zh-CN"), "zh-CN");
  EXPECT_EQ(LabLanguageFromLocale("en_US.UTF-8"), "en");
  EXPECT_EQ(LabLanguageFromLocale("C"), "en");
  EXPECT_EQ(LabLanguageFromLocale(""), "en");
  EXPECT_EQ(LabLanguageFromLocale("zu_ZA"), "en");  // Zulu is not Chinese
  EXPECT_EQ(LabLanguageFromLocale("zhx"), "en");
  EXPECT_TRUE(IsLabLanguage("en"));
  EXPECT_TRUE(IsLabLanguage("zh-CN"));
  EXPECT_FALSE(IsLabLanguage("fr"));
  EXPECT_THROW(ReadLab(std::string(SHARDLAB_LABS_DIR) + "/01-ring-allreduce", "fr"), Error);
}

// ---- mismatches, one per case, made by editing a valid translation -------

const char* const kLab = R"LAB(format = 1
title = "A test lab"
summary = "Short."
minutes = 10
goals = ["count steps", "compare"]

[[step]]
id = "intro"
title = "Intro"
text_file = "intro.txt"

[[step]]
id = "run"
title = "Run"
text = "Run it."
scenario = "collective"

[step.params]
kind = "allreduce"
ranks = 4
size = "1M"

[[step.question]]
id = "steps"
prompt = "How many steps?"
expected = "2*(ranks-1)"
tolerance = 0
feedback_low = "Both halves."

[[step.question]]
id = "which"
kind = "choice"
prompt = "Which?"
options = ["ring", "tree", "both"]
answer = "tree"
explain = "Because."
)LAB";

// Line numbers below refer to this text (line 1 is "format = 1").
const char* const kZh = R"ZH(format = 1
title = "测试实验"
summary = "简短。"
goals = ["数步数", "比较"]

[[step]]
id = "intro"
title = "引言"
text_file = "intro.zh-CN.txt"

[[step]]
id = "run"
title = "运行"
text = "运行它。"

[[step.question]]
id = "steps"
prompt = "多少步？"
feedback_low = "两个阶段。"

[[step.question]]
id = "which"
prompt = "哪一个？"
options = ["环形", "树形", "两者"]
explain = "因为。"
)ZH";

class TranslationFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    lab_dir_ = dir_.path() / "09-test";
    fs::create_directories(lab_dir_);
    std::ofstream(lab_dir_ / "lab.toml") << kLab;
    std::ofstream(lab_dir_ / "intro.txt") << "Hello.\n";
    std::ofstream(lab_dir_ / "intro.zh-CN.txt") << "你好。\n";
  }

  /// Writes kZh with `from` replaced by `to` (which must occur once) and
  /// validates the lab.
  LabLoadResult WithZh(const std::string& from, const std::string& to) {
    std::string text = kZh;
    const std::size_t at = text.find(from);
    if (from.empty()) {
      // kZh as it is
    } else if (at == std::string::npos || text.find(from, at + 1) != std::string::npos) {
      ADD_FAILURE() << "'" << from << "' is not in the translation exactly once";
    } else {
      text.replace(at, from.size(), to);
    }
    std::ofstream(lab_dir_ / "lab.zh-CN.toml") << text;
    return ValidateLab(lab_dir_.string());
  }

  std::string ZhPath() const { return (lab_dir_ / "lab.zh-CN.toml").string(); }

  test_util::TempDir dir_;
  fs::path lab_dir_;
};

TEST_F(TranslationFiles, AValidTranslationGivesTheSameLabInChinese) {
  const LabLoadResult r = WithZh("", "");
  EXPECT_TRUE(r.ok()) << r.ProblemsText();
}

TEST_F(TranslationFiles, ReadsTheChineseTextAndKeepsTheChecks) {
  std::ofstream(lab_dir_ / "lab.zh-CN.toml") << kZh;
  const Lab zh = LoadLab(lab_dir_.string(), "zh-CN");
  EXPECT_EQ(zh.title, "测试实验");
  EXPECT_EQ(zh.steps[0].text, "你好。\n");
  EXPECT_EQ(zh.steps[0].text_file, "intro.zh-CN.txt");
  EXPECT_EQ(zh.steps[1].text, "运行它。");
  const LabQuestion& which = zh.steps[1].questions[1];
  EXPECT_EQ(which.options, (std::vector<std::string>{"环形", "树形", "两者"}));
  EXPECT_EQ(which.answer, "树形");  // the English answer's place
  EXPECT_EQ(zh.steps[1].questions[0].expected, "2*(ranks-1)");
  EXPECT_EQ(zh.steps[1].questions[0].feedback_low, "两个阶段。");
  EXPECT_EQ(zh.steps[1].params.size(), 3u);

  // A choice grades the same in either language, in either lab.
  const Lab en = LoadLab(lab_dir_.string());
  for (const Lab* lab : {&en, &zh}) {
    for (const char* given : {"tree", "树形", " Tree "}) {
      LabAnswer a;
      a.question_id = "which";
      a.text = given;
      const LabQuestionResult r =
          CheckLabAnswer(lab->steps[1], lab->steps[1].questions[1], LabValues{}, &a);
      EXPECT_EQ(r.verdict, LabVerdict::kCorrect) << lab->lang << " " << given << ": " << r.feedback;
    }
    LabAnswer wrong;
    wrong.question_id = "which";
    wrong.text = "环形";
    EXPECT_EQ(CheckLabAnswer(lab->steps[1], lab->steps[1].questions[1], LabValues{}, &wrong).verdict,
              LabVerdict::kWrong)
        << lab->lang;
  }
}

TEST_F(TranslationFiles, ALabWithoutATranslationIsAProblem) {
  const LabLoadResult r = ValidateLab(lab_dir_.string());
  ASSERT_EQ(r.problems.size(), 1u) << r.ProblemsText();
  EXPECT_EQ(r.problems[0].path, ZhPath());
  EXPECT_NE(r.problems[0].message.find("no zh-CN translation"), std::string::npos) << r.ProblemsText();
  // English alone still loads; Chinese does not.
  EXPECT_TRUE(ReadLab(lab_dir_.string()).ok());
  EXPECT_THROW(LoadLab(lab_dir_.string(), "zh-CN"), Error);
}

TEST_F(TranslationFiles, EachMismatchIsOneProblemNamingItsLineAndField) {
  struct Case {
    std::string from, to;
    int line;
    std::string field, message;
  };
  const std::vector<Case> cases = {
      // A text field the English has and the Chinese lacks.
      {"feedback_low = \"两个阶段。\"\n", "", 16, "step[2].question[1].feedback_low", "missing"},
      {"explain = \"因为。\"\n", "", 21, "step[2].question[2].explain", "missing"},
      {"summary = \"简短。\"\n", "", 0, "summary", "missing"},
      {"title = \"运行\"\n", "", 11, "step[2].title", "missing"},
      // ... or the reverse.
      {"prompt = \"多少步？\"", "prompt = \"多少步？\"\nfeedback = \"多了\"", 19,
       "step[2].question[1].feedback", "lab.toml has no such text"},
      {"title = \"测试实验\"", "title = \"测试实验\"\nprerequisites = []", 3, "prerequisites",
       "only lab.toml sets this"},
      {"prompt = \"哪一个？\"", "prompt = \"哪一个？\"\nanswer = \"树形\"", 24,
       "step[2].question[2].answer", "only lab.toml sets this"},
      {"prompt = \"多少步？\"", "prompt = \"多少步？\"\nexpected = \"7\"", 19,
       "step[2].question[1].expected", "only lab.toml sets this"},
      {"prompt = \"多少步？\"", "prompt = \"多少步？\"\nhint = \"?\"", 19,
       "step[2].question[1].hint", "unknown field"},
      // Counts.
      {"options = [\"环形\", \"树形\", \"两者\"]", "options = [\"环形\", \"树形\"]", 24,
       "step[2].question[2].options", "has 2, lab.toml has 3"},
      {"goals = [\"数步数\", \"比较\"]", "goals = [\"数步数\"]", 4, "goals", "has 1, lab.toml has 2"},
      {"options = [\"环形\", \"树形\", \"两者\"]", "options = [\"环形\", \"环形\", \"两者\"]", 24,
       "step[2].question[2].options[2]", "listed twice"},
      // Ids.
      {"id = \"steps\"", "id = \"stepz\"", 17, "step[2].question[1].id",
       "'stepz' is not a question of step 'run'"},
      {"id = \"intro\"", "id = \"outro\"", 7, "step[1].id", "'outro' is not a step of lab.toml"},
      // Text: inline where the English is inline, a file where it is a file.
      {"text = \"运行它。\"", "text_file = \"run.txt\"", 14, "step[2].text_file",
       "lab.toml gives this step's text inline"},
      {"text_file = \"intro.zh-CN.txt\"", "text_file = \"missing.txt\"", 9, "step[1].text_file",
       "no such file"},
      {"text_file = \"intro.zh-CN.txt\"", "text_file = \"intro.txt\"", 9, "step[1].text_file",
       "lab.toml's own text file"},
      {"format = 1", "format = 2", 1, "format", "reads format 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.field);
    const LabLoadResult r = WithZh(c.from, c.to);
    bool found = false;
    for (const LabProblem& p : r.problems) {
      if (p.field == c.field && p.path == ZhPath() && p.message.find(c.message) != std::string::npos) {
        found = true;
        if (c.line > 0) EXPECT_EQ(p.line, c.line) << p.text();
      }
    }
    EXPECT_TRUE(found) << r.ProblemsText();
  }
}

TEST_F(TranslationFiles, ALabTomlThatDoesNotParseIsOneProblemNotOnePerTranslatedStep) {
  std::ofstream(lab_dir_ / "lab.zh-CN.toml") << kZh;
  std::ofstream(lab_dir_ / "lab.toml") << "format = 1\ntitle = \n";
  const LabLoadResult r = ValidateLab(lab_dir_.string());
  ASSERT_EQ(r.problems.size(), 1u) << r.ProblemsText();
  EXPECT_EQ(r.problems[0].line, 2);
  EXPECT_EQ(ReadLab(lab_dir_.string(), "zh-CN").problems.size(), 1u);
}

TEST_F(TranslationFiles, AStepOrQuestionLeftOutIsAProblem) {
  LabLoadResult r = WithZh("[[step.question]]\nid = \"which\"\nprompt = \"哪一个？\"\n"
                           "options = [\"环形\", \"树形\", \"两者\"]\nexplain = \"因为。\"\n",
                           "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.ProblemsText().find("step[2].question: lab.toml's question 'which' of step 'run' has no translation"),
            std::string::npos)
      << r.ProblemsText();
  r = WithZh("[[step]]\nid = \"intro\"\ntitle = \"引言\"\ntext_file = \"intro.zh-CN.txt\"\n\n", "");
  EXPECT_NE(r.ProblemsText().find("step: lab.toml's step 'intro' has no translation"), std::string::npos)
      << r.ProblemsText();
  // A TOML error is one problem with its line.
  r = WithZh("title = \"测试实验\"", "title = ");
  ASSERT_EQ(r.problems.size(), 1u) << r.ProblemsText();
  EXPECT_EQ(r.problems[0].line, 2);
}

}  // namespace
}  // namespace shardlab
