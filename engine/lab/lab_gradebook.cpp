// The class gradebook: every student's answers graded, then per-question
// statistics.
#include "engine/lab/lab_gradebook.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/core/toml.h"
#include "engine/lab/lab_words.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

/// A CSV field: quoted when it holds a comma, quote or line break.
std::string Csv(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Share(double share) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << share;
  return out.str();
}

const LabQuestionResult* ResultFor(const LabGradeReport& report, const std::string& id) {
  for (const LabQuestionResult& r : report.results) {
    if (r.question_id == id) return &r;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> FindAnswerFiles(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": not a folder of answers files");
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && e.path().extension() == ".toml") files.push_back(e.path().string());
  }
  if (ec) throw Error(dir + ": " + ec.message());
  if (files.empty()) throw Error(dir + ": no answers files (*.toml) here");
  std::sort(files.begin(), files.end());
  return files;
}

LabGradebook GradeClass(const Lab& lab, const std::vector<std::string>& answer_files) {
  LabGradebook book;
  book.lab_id = lab.id;
  book.lab_title = lab.title;
  book.lang = lab.lang;
  book.max_score = lab.MaxPoints();
  for (const LabStep& step : lab.steps) {
    for (const LabQuestion& q : step.questions) {
      book.questions.push_back(GradebookQuestion{q.id, step.id, q.points, 0, 0, 0});
    }
  }
  // Every student is graded against the same runs, made once.
  const std::vector<LabStepValues> runs = GradeLabRuns(lab);
  for (const std::string& file : answer_files) {
    GradebookRow row;
    row.file = file;
    row.student = fs::path(file).stem().string();
    try {
      const LabAnswers answers = LoadLabAnswers(file);
      if (!answers.student.empty()) row.student = answers.student;
      row.report = GradeLab(lab, answers, runs);
      row.graded = true;
      ++book.graded;
    } catch (const Error& e) {
      row.error = e.what();
      ++book.failed;
    }
    book.rows.push_back(std::move(row));
  }
  for (GradebookQuestion& q : book.questions) {
    for (const GradebookRow& row : book.rows) {
      if (!row.graded) continue;
      const LabQuestionResult* r = ResultFor(row.report, q.id);
      if (r == nullptr) continue;
      if (r->verdict == LabVerdict::kCorrect) ++q.correct;
      if (r->verdict != LabVerdict::kMissing) ++q.answered;
    }
    q.share_correct = book.graded > 0 ? static_cast<double>(q.correct) / book.graded : 0;
  }
  std::vector<const GradebookQuestion*> missed;
  for (const GradebookQuestion& q : book.questions) {
    if (book.graded > 0 && 2 * q.correct < book.graded) missed.push_back(&q);
  }
  std::stable_sort(missed.begin(), missed.end(), [](const GradebookQuestion* a, const GradebookQuestion* b) {
    return a->share_correct < b->share_correct;
  });
  for (const GradebookQuestion* q : missed) book.most_missed.push_back(q->id);
  return book;
}

std::string GradebookCsv(const LabGradebook& book) {
  std::ostringstream out;
  out << "student,file";
  for (const GradebookQuestion& q : book.questions) out << "," << Csv(q.id);
  out << ",score,max_score,error\n";
  for (const GradebookRow& row : book.rows) {
    out << Csv(row.student) << "," << Csv(fs::path(row.file).filename().string());
    for (const GradebookQuestion& q : book.questions) {
      out << ",";
      if (!row.graded) continue;
      const LabQuestionResult* r = ResultFor(row.report, q.id);
      if (r != nullptr) out << r->points;
    }
    if (row.graded) {
      out << "," << row.report.score << "," << row.report.max_score << ",\n";
    } else {
      out << ",," << book.max_score << "," << Csv(row.error) << "\n";
    }
  }
  out << "share correct,";
  for (const GradebookQuestion& q : book.questions) out << "," << Share(q.share_correct);
  out << ",,,\n";
  return out.str();
}

std::string GradebookJson(const LabGradebook& book) {
  std::ostringstream out;
  JsonWriter w(out);
  w.BeginObject();
  w.Field("lab", book.lab_id);
  w.Field("title", book.lab_title);
  w.Field("lang", book.lang);
  w.Field("max_score", book.max_score);
  w.Field("graded", book.graded);
  w.Field("failed", book.failed);
  w.Key("questions");
  w.BeginArray();
  for (const GradebookQuestion& q : book.questions) {
    w.BeginObject();
    w.Field("id", q.id);
    w.Field("step", q.step_id);
    w.Field("max_points", q.max_points);
    w.Field("correct", q.correct);
    w.Field("answered", q.answered);
    w.Field("share_correct", q.share_correct);
    w.EndObject();
  }
  w.EndArray();
  w.Key("most_missed");
  w.BeginArray();
  for (const std::string& id : book.most_missed) w.String(id);
  w.EndArray();
  w.Key("students");
  w.BeginArray();
  for (const GradebookRow& row : book.rows) {
    w.BeginObject();
    w.Field("student", row.student);
    w.Field("file", row.file);
    w.Field("graded", row.graded);
    if (!row.graded) {
      w.Field("error", row.error);
      w.EndObject();
      continue;
    }
    w.Field("score", row.report.score);
    w.Field("max_score", row.report.max_score);
    w.Key("points");
    w.BeginObject();
    for (const LabQuestionResult& r : row.report.results) w.Field(r.question_id, r.points);
    w.EndObject();
    w.Key("verdicts");
    w.BeginObject();
    for (const LabQuestionResult& r : row.report.results) w.Field(r.question_id, LabVerdictName(r.verdict));
    w.EndObject();
    w.Key("unknown_answers");
    w.BeginArray();
    for (const std::string& id : row.report.unknown_answers) w.String(id);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out << "\n";
  return out.str();
}

std::string FormatGradebook(const LabGradebook& book) {
  const LabWords& words = LabWordsFor(book.lang);
  std::ostringstream out;
  out << Fill(words.gradebook_title, {{"id", book.lab_id}, {"title", book.lab_title}}) << "\n";
  out << Fill(book.graded == 1 ? words.graded_one : words.graded_many, {{"n", std::to_string(book.graded)}});
  if (book.failed > 0) {
    out << Fill(book.failed == 1 ? words.failed_one : words.failed_many, {{"n", std::to_string(book.failed)}});
  }
  out << "\n\n";
  // Columns line up by display width: a CJK character takes two columns.
  std::size_t width = DisplayWidth(words.student_column);
  for (const GradebookRow& row : book.rows) width = std::max(width, DisplayWidth(row.student));
  out << PadTo(words.student_column, width + 2) << words.score_column << "\n";
  for (const GradebookRow& row : book.rows) {
    out << PadTo(row.student, width + 2);
    if (row.graded) {
      out << row.report.score << " / " << row.report.max_score << "\n";
    } else {
      out << Fill(words.not_graded, {{"error", row.error}}) << "\n";
    }
  }
  out << "\n" << words.share_heading << "\n";
  std::size_t qwidth = 8;
  for (const GradebookQuestion& q : book.questions) qwidth = std::max(qwidth, q.id.size());
  for (const GradebookQuestion& q : book.questions) {
    out << "  " << PadTo(q.id, qwidth + 2) << Share(q.share_correct) << "  "
        << Fill(words.share_count, {{"correct", std::to_string(q.correct)}, {"graded", std::to_string(book.graded)}})
        << "\n";
  }
  out << "\n" << words.most_missed;
  if (book.most_missed.empty()) out << words.most_missed_none;
  for (std::size_t i = 0; i < book.most_missed.size(); ++i) {
    out << (i == 0 ? "" : words.id_separator) << book.most_missed[i];
  }
  out << "\n";
  return out.str();
}

}  // namespace shardlab
