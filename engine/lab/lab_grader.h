// Grading: a student's answers against a lab's checks.
//
//   answers.toml ──► LabAnswers ─┐
//   Lab ─► for each step with questions: RunLabStep (fresh runs) ─► values
//                                 └─► CheckLabAnswer per question ─► LabQuestionResult
//                                                   (expected, given, verdict, feedback)
//                                 ─► LabGradeReport {results, score, max}
//
// The app's lab panel calls RunLabStep and CheckLabAnswer one step at a
// time; the CLI's `lab run` calls GradeLab for a whole answers file.
//
// Answers file (TOML):
//   lab = "04-pipeline-bubbles"     # optional; when present it must match
//   student = "Ada"                 # optional, copied into the report
//   [answers]
//   bubble_gpipe = 0.75             # number questions: a number (in the question's units)
//   faster_small = "tree"           # choice questions: the option's text
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/lab/lab.h"
#include "engine/lab/lab_scenario.h"

namespace shardlab {

struct LabAnswer {
  std::string question_id;
  bool is_number = false;
  double number = 0;   // when is_number
  std::string text;    // when !is_number: a choice (or a number written as a string)
  int line = 0;
};

struct LabAnswers {
  std::string path;
  std::string lab;      // "" when the file does not say
  std::string student;  // "" when the file does not say
  std::vector<LabAnswer> answers;
  const LabAnswer* Find(const std::string& question_id) const;
};

/// Parses an answers file. Throws Error(kInvalidInput) "path:line: field:
/// message" for TOML errors, unknown top-level keys, values that are
/// neither numbers nor strings.
LabAnswers ParseLabAnswers(std::string_view text, const std::string& path);
LabAnswers LoadLabAnswers(const std::string& path);

/// Writes answers back as TOML that ParseLabAnswers reads back identical.
std::string WriteLabAnswers(const LabAnswers& answers);

enum class LabVerdict { kCorrect, kWrong, kMissing, kInvalid };

/// "correct", "wrong", "missing", "invalid".
const char* LabVerdictName(LabVerdict verdict);

struct LabQuestionResult {
  std::string step_id;
  std::string question_id;
  LabQuestionKind kind = LabQuestionKind::kNumber;
  std::string prompt;
  std::string units;
  LabVerdict verdict = LabVerdict::kMissing;
  int points = 0;      // earned
  int max_points = 0;
  double expected = 0;        // number questions
  double given = 0;           // number questions with a numeric answer
  double tolerance = 0;       // the absolute tolerance applied
  std::string expected_text;  // "76.5 ms" / "tree"
  std::string given_text;     // as the student wrote it; "" when missing
  /// Why, in words: the difference ("31% high: you gave 100 ms, the run
  /// measured 76.5 ms, tolerance ±5%") followed by the lab's feedback and
  /// explanation.
  std::string feedback;
};

/// Checks one answer (`given` null: not answered) against the question,
/// with the values of its step (RunLabStep, or LabParamValues for a
/// question that needs no run). Throws Error(kRuntime) when the lab's own
/// formula cannot be evaluated (e.g. division by zero on these values).
/// The feedback's own words are in `lang` (lab_words.h; the lab's text is
/// already in its language), the verdict and points the same in every one.
LabQuestionResult CheckLabAnswer(const LabStep& step, const LabQuestion& question,
                                 const LabValues& values, const LabAnswer* given,
                                 const std::string& lang = "en");

/// True when checking `question` needs the step's run (a measured quantity,
/// or a formula that reads one); false when the step's parameters suffice
/// (LabParamValues), so a panel can check a prediction before the run.
bool LabQuestionNeedsRun(const LabStep& step, const LabQuestion& question);

/// The correct answer to `question` as the grader computes it: a number in
/// the question's units, or the correct option.
LabAnswer ExpectedLabAnswer(const LabQuestion& question, const LabValues& values);

struct LabGradeReport {
  std::string lab_id;
  std::string lab_title;
  std::string lang = "en";  // the language of the lab's text (Lab::lang)
  std::string student;
  std::vector<LabQuestionResult> results;  // in lab order
  std::vector<std::string> run_summaries;  // one per run, for the report
  /// Answers naming no question of the lab (typos): listed, never graded.
  std::vector<std::string> unknown_answers;
  int score = 0;
  int max_score = 0;
};

/// Grades `answers` against fresh runs of every step with a question that
/// needs one (other steps' formulas see their parameters only).
/// Throws Error(kInvalidInput) when the answers name another lab.
LabGradeReport GradeLab(const Lab& lab, const LabAnswers& answers);

/// The runs GradeLab makes, one per step (empty for a step without
/// questions), so that a class's answers files are graded against one set
/// of runs (lab_gradebook.h).
std::vector<LabStepValues> GradeLabRuns(const Lab& lab);

/// GradeLab against runs made once by GradeLabRuns(lab).
LabGradeReport GradeLab(const Lab& lab, const LabAnswers& answers,
                        const std::vector<LabStepValues>& runs);

/// An answers file with every question answered correctly (from fresh
/// runs): the instructor's key, and the reference the tests grade.
LabAnswers LabAnswerKey(const Lab& lab);

/// The report as text: one block per question (expected, given, verdict,
/// feedback) and a score line.
std::string FormatLabReport(const LabGradeReport& report);

/// The report as one JSON object (for a gradebook): lab, title, lang, student,
/// score, max_score, questions [{id, step, kind, verdict, points, max_points,
/// expected, given, tolerance, units, feedback}], unknown_answers, runs.
std::string LabReportJson(const LabGradeReport& report);

}  // namespace shardlab
