// The lab writer: what it writes reads back to exactly the same Lab, for
// every lab in labs/ and for a lab built in code with awkward strings.
#include "engine/lab/lab_writer.h"

#include <gtest/gtest.h>

#include "engine/lab/lab_loader.h"

namespace shardlab {
namespace {

void ExpectSameParams(const std::vector<LabParam>& a, const std::vector<LabParam>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].type, b[i].type) << a[i].name;
    EXPECT_EQ(a[i].text, b[i].text) << a[i].name;
    EXPECT_EQ(a[i].number, b[i].number) << a[i].name;
    EXPECT_EQ(a[i].flag, b[i].flag) << a[i].name;
  }
}

/// Every field but line numbers and where the lab was read from.
void ExpectSameLab(const Lab& a, const Lab& b) {
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.title, b.title);
  EXPECT_EQ(a.summary, b.summary);
  EXPECT_EQ(a.minutes, b.minutes);
  EXPECT_EQ(a.goals, b.goals);
  EXPECT_EQ(a.prerequisites, b.prerequisites);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t s = 0; s < a.steps.size(); ++s) {
    const LabStep& x = a.steps[s];
    const LabStep& y = b.steps[s];
    SCOPED_TRACE("step " + x.id);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.title, y.title);
    EXPECT_EQ(x.text, y.text);
    EXPECT_EQ(x.text_file, y.text_file);
    EXPECT_EQ(x.scenario, y.scenario);
    ExpectSameParams(x.params, y.params);
    EXPECT_EQ(x.locked, y.locked);
    ASSERT_EQ(x.variants.size(), y.variants.size());
    for (std::size_t v = 0; v < x.variants.size(); ++v) {
      EXPECT_EQ(x.variants[v].id, y.variants[v].id);
      ExpectSameParams(x.variants[v].params, y.variants[v].params);
    }
    ASSERT_EQ(x.questions.size(), y.questions.size());
    for (std::size_t q = 0; q < x.questions.size(); ++q) {
      const LabQuestion& p = x.questions[q];
      const LabQuestion& r = y.questions[q];
      SCOPED_TRACE("question " + p.id);
      EXPECT_EQ(p.id, r.id);
      EXPECT_EQ(p.kind, r.kind);
      EXPECT_EQ(p.prompt, r.prompt);
      EXPECT_EQ(p.points, r.points);
      EXPECT_EQ(p.expected, r.expected);
      EXPECT_EQ(p.measured, r.measured);
      EXPECT_EQ(p.units, r.units);
      EXPECT_EQ(p.tolerance, r.tolerance);
      EXPECT_EQ(p.tolerance_abs, r.tolerance_abs);
      EXPECT_EQ(p.options, r.options);
      EXPECT_EQ(p.answer, r.answer);
      EXPECT_EQ(p.correct_if, r.correct_if);
      EXPECT_EQ(p.feedback, r.feedback);
      EXPECT_EQ(p.feedback_low, r.feedback_low);
      EXPECT_EQ(p.feedback_high, r.feedback_high);
      EXPECT_EQ(p.explain, r.explain);
    }
  }
}

TEST(LabWriter, EveryLabInTheRepositoryReadsBackIdentical) {
  for (const std::string& folder : FindLabFolders(SHARDLAB_LABS_DIR)) {
    SCOPED_TRACE(folder);
    const LabLoadResult original = ReadLab(folder);
    ASSERT_TRUE(original.ok()) << original.ProblemsText();
    const std::string written = WriteLab(original.lab);
    // Same path, so text_file references resolve to the same files.
    const LabLoadResult again = ReadLabText(written, original.lab.path);
    ASSERT_TRUE(again.ok()) << again.ProblemsText() << written;
    ExpectSameLab(original.lab, again.lab);
    EXPECT_EQ(WriteLab(again.lab), written);
  }
}

TEST(LabWriter, KeepsAwkwardStringsAndNumbersExactly) {
  Lab lab;
  lab.title = "Quotes \" and back\\slashes, tabs\tand unicode: 2(N−1)/N · M, α";
  lab.summary = "\nstarts with a newline\r\nand has CRLF";
  lab.minutes = 600;
  lab.goals = {"one", "", "three \"quoted\""};
  lab.prerequisites = {"01-ring-allreduce"};
  LabStep step;
  step.id = "s-1";
  step.title = "'single' and \"double\"";
  step.text = "line one\n\n    preformatted: T = 2(N-1) x alpha\n'''\"\"\"\n";
  step.scenario = "collective";
  step.params = {{"size", LabParamType::kNumber, "", 26000000000.0, false, 0},
                 {"topology", LabParamType::kString, "dgx1-v100", 0, false, 0},
                 {"timing_only", LabParamType::kBool, "", 0, true, 0},
                 {"ranks", LabParamType::kNumber, "", 8, false, 0}};
  step.locked = {"ranks"};
  step.variants.push_back({"tree", {{"algo", LabParamType::kString, "tree", 0, false, 0}}, 0});
  LabQuestion number;
  number.id = "t";
  number.prompt = "time?";
  number.expected = "2*(ranks-1)/ranks*size/300e9*1e3";
  number.units = "ms";
  number.tolerance = 0.1 + 0.2;  // not exactly representable in few digits
  number.tolerance_abs = 1e-7;
  number.points = 3;
  number.feedback_low = "low";
  number.feedback_high = "high";
  number.explain = "because\nreasons";
  LabQuestion choice;
  choice.id = "c";
  choice.kind = LabQuestionKind::kChoice;
  choice.prompt = "which?";
  choice.options = {"ring", "tree"};
  choice.correct_if = {"time_us <= tree.time_us", "tree.time_us < time_us"};
  choice.feedback = "compare";
  step.questions = {number, choice};
  lab.steps.push_back(step);

  const std::string written = WriteLab(lab);
  const LabLoadResult again = ReadLabText(written, "labs/98-awkward/lab.toml");
  ASSERT_TRUE(again.ok()) << again.ProblemsText() << written;
  ExpectSameLab(lab, again.lab);
}

}  // namespace
}  // namespace shardlab
