// The lab loader and validator: every lab in labs/ loads clean, and each kind
// of mistake in a lab file is reported with the right line and field
// (table-driven: one mistake per case, made by editing a valid lab).
#include "engine/lab/lab_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "engine/core/toml.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

// Line numbers below refer to this text (line 1 is "format = 1").
const char* const kValidLab = R"LAB(format = 1
title = "A test lab"
minutes = 10
goals = ["count steps"]

[[step]]
id = "intro"
title = "Intro"
text = "Read this."

[[step]]
id = "run"
title = "Run"
text = "Run it."
scenario = "collective"
locked = ["ranks"]

[step.params]
kind = "allreduce"
ranks = 4
size = "1M"

[[step.variant]]
id = "tree"
[step.variant.params]
algo = "tree"

[[step.question]]
id = "steps"
prompt = "How many steps?"
expected = "2*(ranks-1)"
tolerance = 0

[[step.question]]
id = "faster"
kind = "choice"
prompt = "Which is faster?"
options = ["ring", "tree"]
correct_if = ["time_us <= tree.time_us", "tree.time_us < time_us"]
)LAB";

/// kValidLab with `from` replaced by `to` (which must occur once).
std::string Edited(const std::string& from, const std::string& to) {
  std::string text = kValidLab;
  const std::size_t at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos) {
    ADD_FAILURE() << "'" << from << "' is not in the lab exactly once";
    return text;
  }
  return text.replace(at, from.size(), to);
}

LabLoadResult Read(const std::string& text) {
  return ReadLabText(text, "labs/99-test/lab.toml");
}

TEST(LabLoader, ReadsAValidLab) {
  const LabLoadResult r = Read(kValidLab);
  ASSERT_TRUE(r.ok()) << r.ProblemsText();
  const Lab& lab = r.lab;
  EXPECT_EQ(lab.id, "99-test");
  EXPECT_EQ(lab.title, "A test lab");
  EXPECT_EQ(lab.minutes, 10);
  ASSERT_EQ(lab.steps.size(), 2u);
  const LabStep& run = lab.steps[1];
  EXPECT_EQ(run.scenario, "collective");
  EXPECT_EQ(run.line, 11);
  ASSERT_EQ(run.params.size(), 3u);
  EXPECT_EQ(run.params[1].name, "ranks");
  EXPECT_EQ(run.params[1].number, 4);
  EXPECT_EQ(run.params[1].line, 20);
  ASSERT_EQ(run.variants.size(), 1u);
  EXPECT_EQ(run.variants[0].id, "tree");
  ASSERT_EQ(run.questions.size(), 2u);
  EXPECT_EQ(run.questions[0].tolerance, 0);
  EXPECT_EQ(run.questions[1].kind, LabQuestionKind::kChoice);
  EXPECT_EQ(lab.QuestionCount(), 2);
  EXPECT_EQ(lab.MaxPoints(), 2);
}

struct Mistake {
  const char* name;
  const char* from;
  const char* to;
  int line;
  const char* field;
  const char* message;  // a part of the message
  std::size_t problems = 1;  // more only where the mistake breaks what refers to it
};

class LabLoaderMistake : public ::testing::TestWithParam<Mistake> {};

TEST_P(LabLoaderMistake, IsReportedWithItsLineAndField) {
  const Mistake& m = GetParam();
  const LabLoadResult r = Read(Edited(m.from, m.to));
  ASSERT_EQ(r.problems.size(), m.problems) << r.ProblemsText();
  const LabProblem& p = r.problems[0];
  EXPECT_EQ(p.path, "labs/99-test/lab.toml");
  EXPECT_EQ(p.line, m.line) << p.text();
  EXPECT_EQ(p.field, m.field) << p.text();
  EXPECT_NE(p.message.find(m.message), std::string::npos) << p.text();
  // The one-line form a user sees.
  EXPECT_EQ(p.text().rfind("labs/99-test/lab.toml:" + std::to_string(m.line) + ": " + m.field, 0),
            0u)
      << p.text();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LabLoaderMistake,
    ::testing::Values(
        Mistake{"WrongFormat", "format = 1", "format = 2", 1, "format", "reads format 1, not 2"},
        Mistake{"EmptyTitle", "title = \"A test lab\"", "title = \"\"", 2, "title", "must not be empty"},
        Mistake{"MinutesAsString", "minutes = 10", "minutes = \"ten\"", 3, "minutes",
                "must be a whole number, not a string"},
        Mistake{"MinutesOutOfRange", "minutes = 10", "minutes = 0", 3, "minutes", "between 1 and 600"},
        Mistake{"NoGoals", "goals = [\"count steps\"]", "goals = []", 4, "goals", "at least one goal"},
        Mistake{"GoalNotString", "goals = [\"count steps\"]", "goals = [3]", 4, "goals[1]",
                "must be a string"},
        Mistake{"UnknownTopField", "minutes = 10", "minutes = 10\nauthor = \"x\"", 4, "author",
                "unknown field"},
        Mistake{"StepWithoutId", "id = \"intro\"\n", "", 6, "step[1].id", "missing"},
        Mistake{"BadStepId", "id = \"intro\"", "id = \"in tro\"", 7, "step[1].id", "is not an id"},
        Mistake{"DuplicateStepId", "id = \"run\"", "id = \"intro\"", 12, "step[2].id",
                "used by an earlier step"},
        Mistake{"StepWithoutText", "text = \"Read this.\"\n", "", 6, "step[1].text", "missing"},
        Mistake{"TextAndTextFile", "text = \"Read this.\"", "text = \"Read this.\"\ntext_file = \"a.txt\"",
                10, "step[1].text_file", "not both"},
        Mistake{"TextFileOutsideTheLab", "text = \"Read this.\"", "text_file = \"../secret.txt\"", 9,
                "step[1].text_file", "inside the lab's folder"},
        Mistake{"MissingTextFile", "text = \"Read this.\"", "text_file = \"nowhere.txt\"", 9,
                "step[1].text_file", "no such file"},
        Mistake{"UnknownScenario", "scenario = \"collective\"", "scenario = \"colective\"", 15,
                "step[2].scenario", "unknown scenario 'colective'"},
        Mistake{"UnknownParameter", "ranks = 4", "rank = 4", 20, "step[2].params.rank",
                "unknown parameter of scenario 'collective'"},
        Mistake{"ParameterOfWrongType", "ranks = 4", "ranks = \"four\"", 20, "step[2].params.ranks",
                "must be a whole number, not a string"},
        Mistake{"FractionalRanks", "ranks = 4", "ranks = 4.5", 20, "step[2].params.ranks",
                "whole number"},
        Mistake{"UnknownChoice", "kind = \"allreduce\"", "kind = \"allreduse\"", 19,
                "step[2].params.kind", "unknown value 'allreduse'"},
        Mistake{"BadSize", "size = \"1M\"", "size = \"1Q\"", 21, "step[2].params.size", ""},
        Mistake{"TooManyRanksForTheTopology", "ranks = 4", "ranks = 64", 20, "step[2].params.ranks",
                "only 8 GPUs"},
        Mistake{"TopologyFileInsteadOfPreset", "size = \"1M\"", "size = \"1M\"\ntopology = \"/etc/passwd\"",
                22, "step[2].params.topology", "not a topology preset"},
        Mistake{"RealRunTooLarge", "size = \"1M\"", "size = \"1G\"", 21, "step[2].params.size",
                "set timing_only = true"},
        Mistake{"LockedUnknownParameter", "locked = [\"ranks\"]", "locked = [\"gpus\"]", 16,
                "step[2].locked[1]", "not a parameter"},
        Mistake{"VariantIdNotAName", "id = \"tree\"", "id = \"2tree\"", 24, "step[2].variant[1].id",
                "not a variant id", 3},  // and the two conditions that read tree.time_us
        Mistake{"VariantBreaksTheEngine", "algo = \"tree\"", "algo = \"direct\"", 26,
                "step[2].variant[1].params.algo", ""},
        Mistake{"QuestionWithoutPrompt", "prompt = \"How many steps?\"\n", "", 28,
                "step[2].question[1].prompt", "missing"},
        Mistake{"ExpectedAndMeasured", "expected = \"2*(ranks-1)\"",
                "expected = \"2*(ranks-1)\"\nmeasured = \"steps\"", 32, "step[2].question[1].measured",
                "not both"},
        Mistake{"NeitherExpectedNorMeasured", "expected = \"2*(ranks-1)\"\n", "", 28,
                "step[2].question[1].expected", "missing"},
        Mistake{"FormulaSyntax", "expected = \"2*(ranks-1)\"", "expected = \"2*(ranks-1\"", 31,
                "step[2].question[1].expected", "column 11: expected ')'"},
        Mistake{"FormulaUnknownName", "expected = \"2*(ranks-1)\"", "expected = \"2*(gpus-1)\"", 31,
                "step[2].question[1].expected", "reads 'gpus'"},
        Mistake{"UnknownMeasuredQuantity", "expected = \"2*(ranks-1)\"", "measured = \"bandwidth\"", 31,
                "step[2].question[1].measured", "not a measured quantity"},
        Mistake{"NegativeTolerance", "tolerance = 0", "tolerance = -0.1", 32,
                "step[2].question[1].tolerance", "must be a number >= 0"},
        Mistake{"ToleranceAsString", "tolerance = 0", "tolerance = \"5%\"", 32,
                "step[2].question[1].tolerance", "must be a number, not a string"},
        Mistake{"UnknownQuestionKind", "kind = \"choice\"", "kind = \"multiple\"", 36,
                "step[2].question[2].kind", "must be \"number\" or \"choice\""},
        Mistake{"ChoiceWithOneOption", "options = [\"ring\", \"tree\"]", "options = [\"ring\"]", 38,
                "step[2].question[2].options", "2 to 26 options"},
        Mistake{"DuplicateOption", "options = [\"ring\", \"tree\"]", "options = [\"ring\", \"ring\"]", 38,
                "step[2].question[2].options[2]", "listed twice"},
        Mistake{"ConditionsDoNotMatchOptions",
                "correct_if = [\"time_us <= tree.time_us\", \"tree.time_us < time_us\"]",
                "correct_if = [\"time_us <= tree.time_us\"]", 39, "step[2].question[2].correct_if",
                "1 conditions for 2 options"},
        Mistake{"AnswerNotAnOption",
                "correct_if = [\"time_us <= tree.time_us\", \"tree.time_us < time_us\"]",
                "answer = \"bus\"", 39, "step[2].question[2].answer", "not one of the options"},
        Mistake{"NumberFieldOnChoice", "options = [\"ring\", \"tree\"]",
                "options = [\"ring\", \"tree\"]\nunits = \"ms\"", 39, "step[2].question[2].units",
                "only for number questions"},
        Mistake{"DuplicateQuestionId", "id = \"faster\"", "id = \"steps\"", 35,
                "step[2].question[2].id", "used by an earlier question"},
        Mistake{"PointsOutOfRange", "tolerance = 0", "tolerance = 0\npoints = 0", 33,
                "step[2].question[1].points", "between 1 and 100"},
        Mistake{"UnknownQuestionField", "tolerance = 0", "tolerance = 0\nhint = \"x\"", 33,
                "step[2].question[1].hint", "unknown field"},
        Mistake{"TomlSyntax", "minutes = 10", "minutes = = 10", 3, "", ""}),
    [](const ::testing::TestParamInfo<Mistake>& param_info) {
      return std::string(param_info.param.name);
    });

TEST(LabLoader, ReportsEveryProblemNotJustTheFirst) {
  std::string text = Edited("minutes = 10", "minutes = 0");
  text.replace(text.find("ranks = 4"), 9, "rank = 4");
  text.replace(text.find("tolerance = 0"), 13, "tolerance = -1");
  const LabLoadResult r = Read(text);
  ASSERT_EQ(r.problems.size(), 3u) << r.ProblemsText();
  EXPECT_EQ(r.problems[0].field, "minutes");
  EXPECT_EQ(r.problems[1].field, "step[2].params.rank");
  EXPECT_EQ(r.problems[2].field, "step[2].question[1].tolerance");
}

TEST(LabLoader, RefusesAMissingStepTableAndAPlainStepTable) {
  const std::string head = "format = 1\ntitle = \"t\"\nminutes = 5\ngoals = [\"g\"]\n";
  LabLoadResult r = Read(head);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].field, "step");
  r = Read(head + "[step]\nid = \"a\"\n");
  ASSERT_EQ(r.problems.size(), 1u) << r.ProblemsText();
  EXPECT_NE(r.problems[0].message.find("[[step]]"), std::string::npos);
}

TEST(LabLoader, ReadsTextFilesRelativeToTheLabAndCapsTheirSize) {
  test_util::TempDir dir;
  const fs::path lab_dir = dir.path() / "07-files";
  fs::create_directories(lab_dir);
  std::ofstream(lab_dir / "intro.txt") << "Hello from a file.\n";
  std::string text = Edited("text = \"Read this.\"", "text_file = \"intro.txt\"");
  std::ofstream(lab_dir / "lab.toml") << text;
  LabLoadResult r = ReadLab(lab_dir.string());
  ASSERT_TRUE(r.ok()) << r.ProblemsText();
  EXPECT_EQ(r.lab.id, "07-files");
  EXPECT_EQ(r.lab.steps[0].text, "Hello from a file.\n");
  EXPECT_EQ(r.lab.steps[0].text_file, "intro.txt");

  std::ofstream(lab_dir / "intro.txt") << std::string(kMaxLabTextBytes + 1, 'x');
  r = ReadLab(lab_dir.string());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].message.find("at most"), std::string::npos) << r.ProblemsText();
}

TEST(LabLoader, RefusesATextFileThatLinksOutOfTheLab) {
  test_util::TempDir dir;
  const fs::path lab_dir = dir.path() / "08-link";
  fs::create_directories(lab_dir);
  std::ofstream(dir.path() / "secret.txt") << "not for labs\n";
  fs::create_symlink(dir.path() / "secret.txt", lab_dir / "intro.txt");
  std::ofstream(lab_dir / "lab.toml") << Edited("text = \"Read this.\"", "text_file = \"intro.txt\"");
  const LabLoadResult r = ReadLab(lab_dir.string());
  ASSERT_EQ(r.problems.size(), 1u) << r.ProblemsText();
  EXPECT_EQ(r.problems[0].field, "step[1].text_file");
  EXPECT_NE(r.problems[0].message.find("outside the lab's folder"), std::string::npos);
  EXPECT_TRUE(r.lab.steps[0].text.empty());
}

TEST(LabLoader, RefusesAnOversizedFileBeforeParsing) {
  test_util::TempDir dir;
  const fs::path file = dir.path() / "lab.toml";
  {
    std::ofstream out(file);
    out << kValidLab << "# " << std::string(kMaxTomlBytes, 'x') << "\n";
  }
  const LabLoadResult r = ReadLab(file.string());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].message.find("at most"), std::string::npos) << r.ProblemsText();
}

TEST(LabLoader, RefusesDeepNesting) {
  const LabLoadResult r = Read(std::string(kValidLab) + "deep = " + std::string(10000, '[') + "\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.problems[0].message.find("nest"), std::string::npos) << r.ProblemsText();
}

TEST(LabLoader, LoadLabThrowsEveryProblem) {
  test_util::TempDir dir;
  std::ofstream(dir.path() / "lab.toml") << Edited("minutes = 10", "minutes = 0");
  try {
    LoadLab(dir.path().string());
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":3: minutes: must be between 1 and 600"),
              std::string::npos)
        << e.what();
  }
}

TEST(LabLoader, EveryLabInTheRepositoryValidates) {
  const std::vector<std::string> folders = FindLabFolders(SHARDLAB_LABS_DIR);
  ASSERT_GE(folders.size(), 4u);
  for (const std::string& folder : folders) {
    const LabLoadResult r = ReadLab(folder);
    EXPECT_TRUE(r.ok()) << r.ProblemsText();
    EXPECT_GE(r.lab.QuestionCount(), 1) << folder;
    // Ids are the folder names, "NN-name".
    EXPECT_EQ(r.lab.id, fs::path(folder).filename().string());
  }
}

}  // namespace
}  // namespace shardlab
