// The class gradebook: one lab, a folder of students' answers files.
//
//   lab ──► GradeLabRuns (once)
//   answers/*.toml ──► for each file: LoadLabAnswers + GradeLab ─► a row
//                      (a file that cannot be read or graded: a failed
//                       row with its "file:line: field: message"; the others go on)
//                  ──► per question: how many students got it, the share
//                      correct; the questions most students miss
//
// Rows are in file-name order; columns in lab order. A question "most
// students miss" is one that fewer than half of the graded students got
// right, listed hardest first.
#pragma once

#include <string>
#include <vector>

#include "engine/lab/lab.h"
#include "engine/lab/lab_grader.h"

namespace shardlab {

struct GradebookRow {
  std::string file;     // the answers file
  std::string student;  // its `student`, else the file's name without .toml
  bool graded = false;
  std::string error;    // when !graded: "file:line: field: message"
  LabGradeReport report;  // when graded
};

struct GradebookQuestion {
  std::string id;
  std::string step_id;
  int max_points = 0;
  int correct = 0;   // graded students whose answer is correct
  int answered = 0;  // graded students who gave an answer (right or wrong)
  double share_correct = 0;  // correct / graded students (0 when none)
};

struct LabGradebook {
  std::string lab_id;
  std::string lab_title;
  std::string lang = "en";
  std::vector<GradebookQuestion> questions;  // lab order
  std::vector<GradebookRow> rows;            // file order
  std::vector<std::string> most_missed;      // ids, lowest share correct first
  int graded = 0;
  int failed = 0;
  int max_score = 0;
};

/// The answers files (*.toml) directly in `dir`, sorted by name. Throws
/// Error when `dir` is not a readable folder or holds none.
std::vector<std::string> FindAnswerFiles(const std::string& dir);

/// Grades every file against `lab` (one set of fresh runs for all); a file that fails
/// becomes a failed row and the others are graded.
LabGradebook GradeClass(const Lab& lab, const std::vector<std::string>& answer_files);

/// CSV: a header "student,file,<question ids...>,score,max_score,error", one
/// row per student (points per question; a failed file: empty cells and the
/// error), then a row "share correct" with each question's share.
std::string GradebookCsv(const LabGradebook& book);

/// One JSON object: lab, title, lang, max_score, graded, failed,
/// questions [{id, step, max_points, correct, answered, share_correct}],
/// most_missed [ids], students [{student, file, graded, score, points {id:
/// points}, verdicts {id: verdict}} or {student, file, graded: false, error}].
std::string GradebookJson(const LabGradebook& book);

/// A console table: per student the score; per question the share
/// correct; the questions most students miss; the failed files.
std::string FormatGradebook(const LabGradebook& book);

}  // namespace shardlab
