// Lab files in, checked Labs out, with every problem reported at once.
//
//   lab.toml ──► LoadTomlFile (size, nesting, UTF-8 capped; toml.h)
//            ──► ReadLab: fields -> Lab, unknown and mistyped fields noted
//            ──► checks: ids unique, scenario and parameter names known and
//                valid, formulas parse and name only known variables,
//                choice answers among the options, ...
//            ──► LabLoadResult {lab, problems}
//
// Lab files come from instructors and the internet, so nothing here trusts
// them: a problem never stops the reading of the rest of the file (except
// TOML syntax, which stops at the first error), and each problem is one
// line "path:line: field: message" (field like "step[2].question[1].tolerance",
// indices from 1 in file order).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/lab/lab.h"

namespace shardlab {

/// The file a lab folder holds.
inline constexpr const char* kLabFileName = "lab.toml";
/// Largest text_file read for a step (the lab file itself: kMaxTomlBytes).
inline constexpr std::size_t kMaxLabTextBytes = std::size_t{256} << 10;
/// Most steps in a lab, questions in a step, variants in a step, options
/// in a choice: a lab file cannot make the grader run without end.
inline constexpr int kMaxLabSteps = 100;
inline constexpr int kMaxLabQuestionsPerStep = 50;
inline constexpr int kMaxLabVariantsPerStep = 16;
inline constexpr int kMaxLabOptions = 26;

struct LabProblem {
  std::string path;
  int line = 0;        // 0: the file as a whole
  std::string field;   // "" for the file as a whole
  std::string message;
  /// "path:line: field: message" (parts that are empty left out).
  std::string text() const;
};

struct LabLoadResult {
  Lab lab;                           // as much as could be read
  std::vector<LabProblem> problems;  // in file order
  bool ok() const { return problems.empty(); }
  /// Every problem's text, one per line.
  std::string ProblemsText() const;
};

/// Reads and checks the lab in `path`: a lab folder (holding lab.toml) or a
/// lab file. Never throws for a bad lab: unreadable files are problems too.
/// `lang` "en" reads lab.toml only; a translation's language ("zh-CN") also
/// reads its file beside lab.toml (lab.zh-CN.toml; lab_translation.h) and
/// gives the same lab with its text in that language, and the
/// translation's problems too. Throws Error for a language no lab has.
LabLoadResult ReadLab(const std::string& path, std::string_view lang = "en");

/// Reads and checks lab text as if it were the file `path` (its folder is
/// the lab's folder, its folder's name the lab's id; text_file paths are
/// read relative to it). English only.
LabLoadResult ReadLabText(std::string_view text, const std::string& path);

/// ReadLab, throwing Error(kInvalidInput) with every problem (one per line)
/// when there is any.
Lab LoadLab(const std::string& path, std::string_view lang = "en");

/// What `lab check` runs: the lab in English, and every translation
/// (LabTranslationLanguages) checked against it; a lab without a
/// translation file is a problem. The lab is the English one.
LabLoadResult ValidateLab(const std::string& path);

/// Reads `name`, a path inside the lab folder `dir` (not absolute, no
/// "..", no symbolic link leading out), as text of at most `max_bytes`.
/// False, with `error` set ("cannot read '...' (no such file)"), when it
/// cannot.
bool ReadLabFolderFile(const std::string& dir, const std::string& name, std::size_t max_bytes,
                       std::string* text, std::string* error);

/// The lab folders directly under `labs_dir` (those holding lab.toml),
/// sorted by name. Throws Error when `labs_dir` is not a readable folder.
std::vector<std::string> FindLabFolders(const std::string& labs_dir);

/// True when `path` is a folder holding lab.toml (rather than a folder of labs).
bool IsLabFolder(const std::string& path);

}  // namespace shardlab
