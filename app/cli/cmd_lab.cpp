// `shardlab-cli lab`: guided labs for instructors.
//
//   lab list  [LABS]                 id, minutes, steps, questions, title
//   lab check [LABS | LAB] [--run]   validate (English and every translation);
//                                    one line per problem; exit 2 if any
//   lab run   LAB --answers FILE     grade an answers file against fresh runs
//   lab run   LAB --answers DIR      the class gradebook (text, --csv or --json)
//   lab key   LAB                    print the correct answers file
//
// LABS is a folder of lab folders (default: labs); LAB is one lab folder
// (or its lab.toml). --lang en|zh-CN picks the language of the labs' text
// (default: from LC_ALL, LC_MESSAGES, LANG). The engine (engine/lab) does the work; this file
// parses the words and prints.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <vector>

#include "app/cli/commands.h"
#include "engine/lab/lab_gradebook.h"
#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"
#include "engine/lab/lab_scenario.h"
#include "engine/lab/lab_translation.h"
#include "engine/lab/lab_words.h"

namespace shardlab::cli {
namespace {

constexpr const char* kDefaultLabsDir = "labs";

/// The lab folders `path` names: itself when it is a lab (or a lab file),
/// else the labs inside it.
std::vector<std::string> LabPaths(const std::string& path) {
  if (IsLabFolder(path) || path.ends_with(".toml")) return {path};
  std::vector<std::string> folders = FindLabFolders(path);
  if (folders.empty()) throw UsageError(path + ": no lab folders (folders holding lab.toml) here");
  return folders;
}

/// --lang, else the environment's locale.
std::string LabLanguage(const ParsedArgs& args) {
  if (!args.Has("lang")) return LabLanguageFromEnvironment();
  const std::string lang = args.Get("lang");
  if (!IsLabLanguage(lang)) {
    throw UsageError("lab: --lang must be one of " + LabLanguagesText() + ", not '" + lang + "'");
  }
  return lang;
}

int ListMain(const std::string& dir, const std::string& lang) {
  std::cout << std::left << std::setw(26) << "id" << std::setw(9) << "minutes" << std::setw(7)
            << "steps" << std::setw(11) << "questions" << "title\n";
  int bad = 0;
  for (const std::string& path : LabPaths(dir)) {
    const LabLoadResult r = ReadLab(path, lang);
    const Lab& lab = r.lab;
    std::cout << std::left << std::setw(26) << lab.id << std::setw(9) << lab.minutes << std::setw(7)
              << lab.steps.size() << std::setw(11) << lab.QuestionCount() << lab.title
              << (r.ok() ? "" : "   (invalid: see 'lab check')") << "\n";
    if (!r.ok()) ++bad;
  }
  return bad > 0 ? 2 : 0;
}

/// With --run: every step that has questions runs, and every expected
/// answer is computed, so a lab that only fails when graded (a formula that
/// divides by zero on these values, a correct_if that singles out no
/// option) is caught before a student meets it. Returns the problems.
int CheckByRunning(const Lab& lab) {
  int problems = 0;
  for (std::size_t s = 0; s < lab.steps.size(); ++s) {
    const LabStep& step = lab.steps[s];
    if (step.questions.empty()) continue;
    LabValues values;
    try {
      values = step.runs() ? RunLabStep(step).values : LabValues{};
    } catch (const Error& e) {
      std::cout << LabProblem{lab.path, step.line, "step[" + std::to_string(s + 1) + "]",
                              std::string("the run failed: ") + e.what()}
                       .text()
                << "\n";
      ++problems;
      continue;
    }
    for (std::size_t q = 0; q < step.questions.size(); ++q) {
      try {
        ExpectedLabAnswer(step.questions[q], values);
      } catch (const Error& e) {
        std::cout << LabProblem{lab.path, step.questions[q].line,
                                "step[" + std::to_string(s + 1) + "].question[" +
                                    std::to_string(q + 1) + "]",
                                e.what()}
                         .text()
                  << "\n";
        ++problems;
      }
    }
  }
  return problems;
}

int CheckMain(const std::string& path, bool run) {
  int labs = 0, problems = 0;
  for (const std::string& lab_path : LabPaths(path)) {
    const LabLoadResult r = ValidateLab(lab_path);
    ++labs;
    problems += static_cast<int>(r.problems.size());
    for (const LabProblem& p : r.problems) std::cout << p.text() << "\n";
    if (run && r.ok()) problems += CheckByRunning(r.lab);
  }
  std::cout << labs << (labs == 1 ? " lab" : " labs") << " checked, " << problems
            << (problems == 1 ? " problem" : " problems") << "\n";
  return problems > 0 ? 2 : 0;
}

Lab LoadOneLab(const std::string& path, const std::string& lang) {
  if (!IsLabFolder(path) && !path.ends_with(".toml")) {
    throw UsageError(path + ": not a lab folder (a folder holding lab.toml)");
  }
  return LoadLab(path, lang);
}

/// `lab run LAB --answers DIR`: every student's file graded; a bad file is
/// one line on stderr and a failed row, the others are graded; exit 2 when
/// any failed.
int GradebookMain(const Lab& lab, const std::string& dir, const ParsedArgs& args) {
  const LabGradebook book = GradeClass(lab, FindAnswerFiles(dir));
  for (const GradebookRow& row : book.rows) {
    if (!row.graded) std::cerr << row.error << "\n";
  }
  if (args.Has("json")) {
    std::cout << GradebookJson(book);
  } else if (args.Has("csv")) {
    std::cout << GradebookCsv(book);
  } else {
    std::cout << FormatGradebook(book);
  }
  return book.failed > 0 ? 2 : 0;
}

int RunGradeMain(const std::string& path, const ParsedArgs& args) {
  if (!args.Has("answers")) throw UsageError("lab run: missing --answers FILE");
  if (args.Has("csv") && args.Has("json")) throw UsageError("lab run: give --csv or --json, not both");
  const Lab lab = LoadOneLab(path, LabLanguage(args));
  if (std::filesystem::is_directory(args.Get("answers"))) {
    return GradebookMain(lab, args.Get("answers"), args);
  }
  if (args.Has("csv")) throw UsageError("lab run: --csv is for a folder of answers files (the gradebook)");
  const LabAnswers answers = LoadLabAnswers(args.Get("answers"));
  const LabGradeReport report = GradeLab(lab, answers);
  std::cout << (args.Has("json") ? LabReportJson(report) : FormatLabReport(report));
  return 0;
}

int KeyMain(const std::string& path, const std::string& lang) {
  const Lab lab = LoadOneLab(path, lang);
  std::cout << Fill(LabWordsFor(lab.lang).key_header, {{"id", lab.id}, {"title", lab.title}}) << "\n"
            << WriteLabAnswers(LabAnswerKey(lab));
  return 0;
}

}  // namespace

CommandSpec LabSpec() {
  CommandSpec s;
  s.name = "lab";
  s.summary = "guided labs: list, check, grade an answers file, print the key";
  s.usage =
      "lab list [LABS] | lab check [LABS|LAB] [--run] | lab run LAB --answers FILE|DIR [--json|--csv]"
      " | lab key LAB   [--lang en|zh-CN]";
  s.description =
      "Guided labs are folders under labs/ (labs/README.md documents the format).\n"
      "  list   each lab's id, estimated minutes, steps, questions and title\n"
      "  check  validate every lab, its lab.toml and every translation (lab.zh-CN.toml):\n"
      "         one line per problem (file:line: field: message); a lab without a\n"
      "         translation is one; exit code 2 when there is any; --run also runs every step and computes\n"
      "         every expected answer (a formula that divides by zero on the measured\n"
      "         values, a correct_if that singles out no option)\n"
      "  run    grade an answers file against fresh simulator runs: per question the\n"
      "         expected value, the answer given, the verdict and feedback, then the score\n"
      "         With --answers DIR: the class gradebook, every *.toml in DIR graded (one row per\n"
      "         student, the share correct per question, the questions most students miss);\n"
      "         a file that cannot be graded is one line on stderr, the others are graded,\n"
      "         and the exit code is 2\n"
      "  key    print an answers file with every answer correct (from fresh runs)\n"
      "LABS defaults to ./labs. --lang picks the language of the labs' text (titles, prompts,\n"
      "feedback, choice options); it defaults from LC_ALL, LC_MESSAGES or LANG (zh... -> zh-CN).\n"
      "Grading is the same in every language: a choice may be answered in either.";
  s.flags = {
      {"answers", 'a', "FILE|DIR", "the answers file to grade, or a folder of them (lab run)"},
      {"json", 0, "", "lab run: print the report (or the gradebook) as one JSON object"},
      {"csv", 0, "", "lab run --answers DIR: print the gradebook as CSV"},
      {"lang", 0, "LANG", "the labs' language: en or zh-CN (default: from the locale)"},
      {"run", 0, "", "lab check: also run every step and compute every expected answer"},
  };
  s.max_positionals = 2;
  s.examples =
      "  shardlab-cli lab list\n"
      "  shardlab-cli lab check labs/\n"
      "  shardlab-cli lab run labs/04-pipeline-bubbles --answers answers.toml --json\n"
      "  shardlab-cli lab check labs/ --run\n"
      "  shardlab-cli lab key labs/01-ring-allreduce > key.toml\n"
      "  shardlab-cli lab run labs/01-ring-allreduce --answers class/ --csv > grades.csv\n"
      "  shardlab-cli lab run labs/01-ring-allreduce --answers key.toml --lang zh-CN\n";
  return s;
}

int LabMain(const ParsedArgs& args) {
  const std::vector<std::string>& pos = args.positionals();
  if (pos.empty()) throw UsageError("lab: missing subcommand (list, check, run or key)");
  const std::string& sub = pos[0];
  const std::string path = pos.size() > 1 ? pos[1] : "";
  const std::string lang = LabLanguage(args);
  if (sub == "list") return ListMain(path.empty() ? kDefaultLabsDir : path, lang);
  if (sub == "check") return CheckMain(path.empty() ? kDefaultLabsDir : path, args.Has("run"));
  if (sub == "run" || sub == "key") {
    if (path.empty()) throw UsageError("lab " + sub + ": missing the lab folder (e.g. labs/01-ring-allreduce)");
    if (sub == "key") {
      if (args.Has("answers") || args.Has("json") || args.Has("csv")) {
        throw UsageError("lab key: takes no flags but --lang");
      }
      return KeyMain(path, lang);
    }
    return RunGradeMain(path, args);
  }
  throw UsageError("lab: unknown subcommand '" + sub + "' (list, check, run or key)");
}

}  // namespace shardlab::cli
