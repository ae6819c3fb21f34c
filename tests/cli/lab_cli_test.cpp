// `shardlab-cli lab`: list, check (what CI runs on labs/), run (grading an
// answers file from tests/data/labs, text and JSON) and key, through the
// real binary; and one error line with exit code 2 for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/json_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

test_util::ProgramResult RunCli(const std::vector<std::string>& args) {
  test_util::TempDir dir;
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

const std::string kLabs = SHARDLAB_LABS_DIR;
const std::string kStudent = std::string(SHARDLAB_TEST_DATA_DIR) + "/labs/04-pipeline-bubbles-student.toml";

/// The Chinese text of a lab of one step "a" (text inline), no questions.
const char* const kZhForOneStep =
    "format = 1\ntitle = \"标题\"\ngoals = [\"目标\"]\n[[step]]\nid = \"a\"\ntitle = \"甲\"\ntext = \"文\"\n";

TEST(LabCli, CheckValidatesEveryLabInTheRepository) {
  const auto r = RunCli({"lab", "check", kLabs});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("labs checked, 0 problems"), std::string::npos) << r.out;
}

TEST(LabCli, CheckReportsEachProblemOnOneLineAndExitsWithTwo) {
  test_util::TempDir dir;
  const fs::path lab = dir.path() / "labs" / "01-broken";
  fs::create_directories(lab);
  std::ofstream(lab / "lab.toml") << "format = 1\ntitle = \"Broken\"\nminutes = 0\ngoals = [\"g\"]\n"
                                     "[[step]]\nid = \"a\"\ntitle = \"A\"\ntext = \"t\"\nscenario = \"ring\"\n";
  std::ofstream(lab / "lab.zh-CN.toml") << kZhForOneStep;
  const auto r = RunCli({"lab", "check", (dir.path() / "labs").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("01-broken/lab.toml:3: minutes: must be between 1 and 600, not 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("01-broken/lab.toml:9: step[1].scenario: unknown scenario 'ring'"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 lab checked, 2 problems"), std::string::npos) << r.out;
}

TEST(LabCli, CheckWithRunCatchesALabThatOnlyFailsWhenGraded) {
  EXPECT_EQ(RunCli({"lab", "check", kLabs, "--run"}).exit_code, 0);
  test_util::TempDir dir;
  const fs::path lab = dir.path() / "02-divides";
  fs::create_directories(lab);
  std::ofstream(lab / "lab.toml")
      << "format = 1\ntitle = \"t\"\nminutes = 5\ngoals = [\"g\"]\n"
         "[[step]]\nid = \"a\"\ntitle = \"A\"\ntext = \"t\"\nscenario = \"memory\"\n"
         "[[step.question]]\nid = \"q\"\nprompt = \"p\"\nexpected = \"1/(stage*memory_per_gpu_gb)\"\n";
  std::ofstream(lab / "lab.zh-CN.toml") << kZhForOneStep << "[[step.question]]\nid = \"q\"\nprompt = \"问\"\n";
  EXPECT_EQ(RunCli({"lab", "check", lab.string()}).exit_code, 0);  // valid as a file
  const auto r = RunCli({"lab", "check", lab.string(), "--run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("lab.toml:10: step[1].question[1]: question 'q': expected: formula "
                       "'1/(stage*memory_per_gpu_gb)': division by zero"),
            std::string::npos)
      << r.out;
}

TEST(LabCli, ListsTheLabs) {
  const auto r = RunCli({"lab", "list", kLabs});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* id : {"01-ring-allreduce", "02-topology-matters", "03-ring-vs-tree",
                         "04-pipeline-bubbles"}) {
    EXPECT_NE(r.out.find(id), std::string::npos) << r.out;
  }
}

TEST(LabCli, GradesAnAnswersFileAsText) {
  const auto r = RunCli({"lab", "run", kLabs + "/04-pipeline-bubbles", "--answers", kStudent});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Student: Sam Example"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpipe_measured (step gpipe)  wrong  0/1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("inter_saving (step interleaved)  missing  0/1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Unknown answer 'bubble'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Score: 13 / 17"), std::string::npos) << r.out;
}

TEST(LabCli, GradesAnAnswersFileAsJson) {
  const auto r =
      RunCli({"lab", "run", kLabs + "/04-pipeline-bubbles", "--answers", kStudent, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const test_util::Json json = test_util::ParseJson(r.out);
  EXPECT_EQ(json["lab"].text, "04-pipeline-bubbles");
  EXPECT_EQ(json["student"].text, "Sam Example");
  EXPECT_EQ(json["score"].number, 13);
  EXPECT_EQ(json["max_score"].number, 17);
  int wrong = 0;
  for (const test_util::Json& q : json["questions"].items) {
    const std::string& id = q["id"].text;
    const std::string& verdict = q["verdict"].text;
    if (id == "gpipe_measured" || id == "why_above" || id == "inter_transfers") {
      EXPECT_EQ(verdict, "wrong") << id;
      ++wrong;
    } else if (id == "inter_saving") {
      EXPECT_EQ(verdict, "missing");
      EXPECT_EQ(q["given"].type, test_util::Json::Type::kNull);
    } else {
      EXPECT_EQ(verdict, "correct") << id << ": " << q["feedback"].text;
    }
    if (id == "inter_transfers") {
      EXPECT_EQ(q["expected"].number, 112);
      EXPECT_EQ(q["given"].number, 48);
      EXPECT_NE(q["feedback"].text.find("57.1429% low"), std::string::npos) << q["feedback"].text;
    }
  }
  EXPECT_EQ(wrong, 3);
  EXPECT_EQ(json["unknown_answers"].items.at(0).text, "bubble");
}

TEST(LabCli, PrintsAKeyThatScoresFullMarks) {
  test_util::TempDir dir;
  const auto key = RunCli({"lab", "key", kLabs + "/03-ring-vs-tree"});
  ASSERT_EQ(key.exit_code, 0) << key.err;
  const fs::path file = dir.path() / "key.toml";
  std::ofstream(file) << key.out;
  const auto r = RunCli({"lab", "run", kLabs + "/03-ring-vs-tree", "--answers", file.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const test_util::Json json = test_util::ParseJson(r.out);
  EXPECT_EQ(json["score"].number, json["max_score"].number);
  EXPECT_GT(json["max_score"].number, 0);
}

TEST(LabCli, CheckReportsAMissingOrMismatchedChineseText) {
  test_util::TempDir dir;
  const fs::path lab = dir.path() / "labs" / "01-text";
  fs::create_directories(lab);
  std::ofstream(lab / "lab.toml") << "format = 1\ntitle = \"T\"\nminutes = 5\ngoals = [\"g\"]\n"
                                     "[[step]]\nid = \"a\"\ntitle = \"A\"\ntext = \"t\"\n";
  auto r = RunCli({"lab", "check", (dir.path() / "labs").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("01-text/lab.zh-CN.toml: no zh-CN translation"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 lab checked, 1 problem\n"), std::string::npos) << r.out;

  std::ofstream(lab / "lab.zh-CN.toml") << "format = 1\ntitle = \"标题\"\ngoals = [\"目标\", \"多余\"]\n"
                                           "[[step]]\nid = \"a\"\ntext = \"文\"\n";
  r = RunCli({"lab", "check", (dir.path() / "labs").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("01-text/lab.zh-CN.toml:3: goals: has 2, lab.toml has 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("01-text/lab.zh-CN.toml:4: step[1].title: missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 lab checked, 2 problems\n"), std::string::npos) << r.out;
  // The English is fine, so the lab runs in English but not in Chinese.
  EXPECT_EQ(RunCli({"lab", "list", lab.string(), "--lang", "en"}).exit_code, 0);
  EXPECT_EQ(RunCli({"lab", "list", lab.string(), "--lang", "zh-CN"}).exit_code, 2);
}

TEST(LabCli, PrintsTheLabsInTheLanguageAskedForOrTheLocales) {
  auto r = RunCli({"lab", "list", kLabs, "--lang", "zh-CN"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("01-ring-allreduce         30       4      12         环形 All-Reduce，一步一步"),
            std::string::npos)
      << r.out;
  r = RunCli({"lab", "list", kLabs, "--lang", "en"});
  EXPECT_NE(r.out.find("Ring all-reduce, step by step"), std::string::npos) << r.out;

  // No --lang: LC_ALL, then LC_MESSAGES, then LANG.
  struct Saved {
    const char* name;
    std::string value;
    bool set;
  };
  std::vector<Saved> saved;
  for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* v = std::getenv(name);
    saved.push_back({name, v != nullptr ? v : "", v != nullptr});
    unsetenv(name);
  }
  setenv("LANG", "zh_CN.UTF-8", 1);
  const auto zh = RunCli({"lab", "list", kLabs});
  setenv("LC_MESSAGES", "en_US.UTF-8", 1);
  const auto en = RunCli({"lab", "list", kLabs});
  setenv("LC_ALL", "zh_TW.UTF-8", 1);
  const auto zh_all = RunCli({"lab", "list", kLabs});
  for (const Saved& s : saved) {
    if (s.set) {
      setenv(s.name, s.value.c_str(), 1);
    } else {
      unsetenv(s.name);
    }
  }
  EXPECT_NE(zh.out.find("环形 All-Reduce，一步一步"), std::string::npos) << zh.out;
  EXPECT_NE(en.out.find("Ring all-reduce, step by step"), std::string::npos) << en.out;
  EXPECT_NE(zh_all.out.find("环形 All-Reduce，一步一步"), std::string::npos) << zh_all.out;

  // A Chinese report: the lab's own text and the grader's words in Chinese, the same score.
  const auto report =
      RunCli({"lab", "run", kLabs + "/04-pipeline-bubbles", "--answers", kStudent, "--lang", "zh-CN"});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("实验 04-pipeline-bubbles：流水线气泡：GPipe、1F1B 与交错式 1F1B"),
            std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("得分：13 / 17"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("Score:"), std::string::npos) << report.out;
  // The key's first line too.
  const auto key = RunCli({"lab", "key", kLabs + "/04-pipeline-bubbles", "--lang", "zh-CN"});
  EXPECT_EQ(key.out.rfind("# 04-pipeline-bubbles（流水线气泡", 0), 0u) << key.out;
}

TEST(LabCli, GradesAClassFolderAndReportsTheBadFileWithoutStopping) {
  const std::string klass = std::string(SHARDLAB_TEST_DATA_DIR) + "/labs/class-01";
  const auto csv = RunCli({"lab", "run", kLabs + "/01-ring-allreduce", "--answers", klass, "--csv"});
  EXPECT_EQ(csv.exit_code, 2);  // one file failed
  EXPECT_EQ(std::count(csv.err.begin(), csv.err.end(), '\n'), 1) << csv.err;
  EXPECT_NE(csv.err.find("class-01/dee.toml:4: answers.steps: must be a number or a string"),
            std::string::npos)
      << csv.err;
  EXPECT_EQ(csv.out.rfind("student,file,steps,chunk_bytes,", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("\nAda,ada.toml,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",9,12,\nBo,bo.toml,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",2,12,\nCy,cy.toml,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",4,12,\ndee,dee.toml,"), std::string::npos) << csv.out;

  const auto json =
      RunCli({"lab", "run", kLabs + "/01-ring-allreduce", "--answers", klass, "--json", "--lang", "zh-CN"});
  EXPECT_EQ(json.exit_code, 2);
  const test_util::Json book = test_util::ParseJson(json.out);
  EXPECT_EQ(book["graded"].number, 3);
  EXPECT_EQ(book["failed"].number, 1);
  EXPECT_EQ(book["title"].text, "环形 All-Reduce，一步一步");
  EXPECT_EQ(book["students"].items.size(), 4u);
  EXPECT_EQ(book["most_missed"].items.at(0).text, "time_measured");
}

TEST(LabCli, BadInputIsOneLineAndExitCodeTwo) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"lab"}, "lab: missing subcommand"},
      {{"lab", "grade"}, "lab: unknown subcommand 'grade'"},
      {{"lab", "run", kLabs + "/04-pipeline-bubbles"}, "lab run: missing --answers FILE"},
      {{"lab", "run"}, "lab run: missing the lab folder"},
      {{"lab", "run", kLabs, "--answers", kStudent}, "not a lab folder"},
      {{"lab", "run", kLabs + "/01-ring-allreduce", "--answers", kStudent},
       "the answers are for lab '04-pipeline-bubbles', not '01-ring-allreduce'"},
      {{"lab", "run", kLabs + "/04-pipeline-bubbles", "--answers", "/nonexistent.toml"},
       "/nonexistent.toml: no such file"},
      {{"lab", "check", "/nonexistent-labs"}, "/nonexistent-labs: not a folder of labs"},
      {{"lab", "list", kLabs, "--lang", "fr"}, "lab: --lang must be one of en, zh-CN, not 'fr'"},
      {{"lab", "run", kLabs + "/04-pipeline-bubbles", "--answers", kStudent, "--csv"},
       "--csv is for a folder of answers files"},
      {{"lab", "run", kLabs + "/04-pipeline-bubbles", "--answers", "/", "--csv", "--json"},
       "give --csv or --json, not both"},
      {{"lab", "run", kLabs + "/04-pipeline-bubbles", "--answers", kLabs},
       "no answers files (*.toml) here"},
  };
  for (const Case& c : cases) {
    const auto r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace shardlab
