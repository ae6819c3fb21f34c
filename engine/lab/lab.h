// The lab model: what one lab file (labs/NN-name/lab.toml) holds once it is
// loaded and checked. A lab is data, never code: text to read, a scenario
// and its parameters to set (some locked), questions to answer, and the
// checks that grade an answer against a formula or a measured run.
//
//   Lab {title, goals, minutes, prerequisites}
//    └─ LabStep × n   {title, text, scenario + params (+ locked), variants}
//        └─ LabQuestion × k  number: expected = "formula" | measured = "name",
//                                    units, tolerance, feedback
//                            choice: options, answer | correct_if (one
//                                    condition per option)
//
// labs/README.md documents the file format field by field; the loader
// (lab_loader.h) is the only way to build a Lab from a file, and the writer
// (lab_writer.h) writes one back so that it reads back identical.
#pragma once

#include <string>
#include <vector>

namespace shardlab {

/// Version of the lab file format this engine reads (`format = 1`).
inline constexpr int kLabFormatVersion = 1;

enum class LabParamType { kString, kNumber, kBool };

/// One scenario parameter as the lab file sets it. Sizes stay strings as
/// written ("64M"); formulas see them in bytes (lab_scenario.h).
struct LabParam {
  std::string name;
  LabParamType type = LabParamType::kString;
  std::string text;   // kString: the value
  double number = 0;  // kNumber: the value (integers are exact up to 2^53)
  bool flag = false;  // kBool: the value
  int line = 0;       // 0 when built in code
};

/// The same scenario as the step's, with some parameters changed, run
/// beside it. Formulas name its measurements "<id>.<quantity>" (tree.time_ms).
struct LabVariant {
  std::string id;
  std::vector<LabParam> params;  // overrides of the step's parameters
  int line = 0;
};

enum class LabQuestionKind { kNumber, kChoice };

struct LabQuestion {
  std::string id;      // unique within the lab; the key in answers files
  LabQuestionKind kind = LabQuestionKind::kNumber;
  std::string prompt;
  int points = 1;

  // kNumber: exactly one of `expected` (a formula over the step's
  // parameters and measurements) and `measured` (a measured quantity name).
  std::string expected;
  std::string measured;
  std::string units;            // shown beside the answer box and in reports
  /// Accepted when |given − expected| <= max(tolerance·|expected|, tolerance_abs).
  double tolerance = 0.05;      // relative
  double tolerance_abs = 0;     // absolute, in `units`

  // kChoice: the options, and either the correct option (`answer`) or one
  // condition per option (`correct_if`, formulas that are true (non-zero)
  // for the correct option only, evaluated after the step's runs).
  std::vector<std::string> options;
  std::string answer;
  std::vector<std::string> correct_if;
  /// The same options in the lab's other languages (lab_translation.h),
  /// one list per language, each in the order of `options`. An answer may
  /// name an option in any of them, so grading is the same in every language.
  std::vector<std::vector<std::string>> other_options;

  // Feedback. `feedback` is shown for a wrong answer; for numbers,
  // `feedback_low` / `feedback_high` replace it when the answer is too low
  // or too high. `explain` is shown after checking, right or wrong.
  std::string feedback;
  std::string feedback_low;
  std::string feedback_high;
  std::string explain;

  int line = 0;
};

struct LabStep {
  std::string id;     // unique within the lab
  std::string title;
  /// What the student reads: plain text; paragraphs are separated by blank
  /// lines; lines that start with four spaces are preformatted (formulas,
  /// tables) and shown in a fixed-width font.
  std::string text;
  /// When set, `text` was read from this file, relative to the lab's
  /// folder; the writer writes the reference, not the text.
  std::string text_file;

  std::string scenario;             // "" for a text-only step; see lab_scenario.h
  std::vector<LabParam> params;     // the scenario's parameters; the rest default
  std::vector<std::string> locked;  // parameters the student may not change
  std::vector<LabVariant> variants;
  std::vector<LabQuestion> questions;

  int line = 0;

  bool runs() const { return !scenario.empty(); }
};

struct Lab {
  std::string path;  // the lab file it was read from ("" when built in code)
  std::string dir;   // its folder; text_file paths are relative to it
  std::string id;    // the folder's name: "01-ring-allreduce"
  /// The language of the text: "en" (lab.toml), or a translation's
  /// ("zh-CN": lab.zh-CN.toml; lab_translation.h). Numbers, parameters and
  /// checks always come from lab.toml.
  std::string lang = "en";

  int format = kLabFormatVersion;
  std::string title;
  std::string summary;
  int minutes = 0;                         // estimated time
  std::vector<std::string> goals;          // what the student will be able to do
  std::vector<std::string> prerequisites;  // ids of labs to do first, or plain text
  std::vector<LabStep> steps;

  /// The question with this id, or nullptr; `step_index` gets its step.
  const LabQuestion* FindQuestion(const std::string& question_id, int* step_index = nullptr) const;
  int QuestionCount() const;
  int MaxPoints() const;
};

/// The parameter named `name` in `params`, or nullptr.
const LabParam* FindLabParam(const std::vector<LabParam>& params, const std::string& name);

/// The step's parameters with a variant's overrides applied (nullptr: none).
std::vector<LabParam> MergeLabParams(const std::vector<LabParam>& base,
                                     const std::vector<LabParam>& overrides);

/// A parameter's value as text: strings as they are, numbers shortest
/// (TomlNumber), booleans "true"/"false".
std::string LabParamText(const LabParam& param);

}  // namespace shardlab
