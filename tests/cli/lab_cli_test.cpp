// `shardlab-cli lab`: list, check (what CI runs on labs/), run (grading an
// answers file from tests/data/labs, text and JSON) and key, through the
// real binary; and one error line with exit code 2 for bad input.
#include <gtest/gtest.h>

#include <algorithm>
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
