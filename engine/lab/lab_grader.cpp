// Grading: answers files in, per-question verdicts with feedback out.
#include "engine/lab/lab_grader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/core/toml.h"
#include "engine/lab/formula.h"
#include "engine/lab/lab_words.h"

namespace shardlab {
namespace {

/// Six significant digits, no trailing zeros: 76.3472, 0.375, 1.2e+09.
std::string Num(double value) {
  std::ostringstream out;
  out << std::setprecision(6) << value;
  return out.str();
}

std::string WithUnits(double value, const std::string& units) {
  return units.empty() ? Num(value) : Num(value) + " " + units;
}

std::string Trim(const std::string& text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return text.substr(b, e - b);
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// A number typed as text ("76.5", " 1e3 "); false when it is not one.
bool ParseNumberText(const std::string& text, double* out) {
  const std::string t = Trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

/// A typed answer with the question's own units after the number ("76 ms"
/// for a question in ms) as just the number; other text unchanged.
std::string WithoutUnits(const std::string& text, const std::string& units) {
  const std::string t = Trim(text);
  const std::string u = Trim(units);
  if (u.empty() || t.size() <= u.size()) return t;
  if (Lower(t.substr(t.size() - u.size())) != Lower(u)) return t;
  return Trim(t.substr(0, t.size() - u.size()));
}

std::string CorrectOption(const LabQuestion& q, const LabValues& values) {
  if (!q.answer.empty()) return q.answer;
  std::vector<std::string> true_options;
  for (std::size_t i = 0; i < q.correct_if.size() && i < q.options.size(); ++i) {
    double v = 0;
    try {
      v = EvaluateFormula(q.correct_if[i], values);
    } catch (const Error& e) {
      throw Error("question '" + q.id + "': correct_if[" + std::to_string(i + 1) + "]: " + e.what(),
                  ErrorKind::kRuntime);
    }
    if (v != 0) true_options.push_back(q.options[i]);
  }
  if (true_options.size() != 1) {
    std::string which;
    for (const std::string& o : true_options) which += (which.empty() ? "" : ", ") + o;
    throw Error("question '" + q.id + "': the runs make " + std::to_string(true_options.size()) +
                    " options correct" + (which.empty() ? "" : " (" + which + ")") +
                    "; correct_if must single out exactly one (the lab needs fixing)",
                ErrorKind::kRuntime);
  }
  return true_options.front();
}

double ExpectedNumber(const LabQuestion& q, const LabValues& values) {
  if (!q.measured.empty()) {
    auto it = values.find(q.measured);
    if (it == values.end()) {
      throw Error("question '" + q.id + "': no measured value '" + q.measured +
                      "' (did the step run?)",
                  ErrorKind::kRuntime);
    }
    return it->second;
  }
  try {
    return EvaluateFormula(q.expected, values);
  } catch (const Error& e) {
    throw Error("question '" + q.id + "': expected: " + e.what(), ErrorKind::kRuntime);
  }
}

void AppendSentence(std::string* text, const std::string& sentence) {
  if (sentence.empty()) return;
  if (!text->empty()) *text += "\n";
  *text += sentence;
}

}  // namespace

const LabAnswer* LabAnswers::Find(const std::string& question_id) const {
  for (const LabAnswer& a : answers) {
    if (a.question_id == question_id) return &a;
  }
  return nullptr;
}

LabAnswers ParseLabAnswers(std::string_view text, const std::string& path) {
  const TomlValue root = ParseToml(text, path);
  LabAnswers out;
  out.path = path;
  for (const TomlEntry& e : root.entries) {
    if (e.key == "lab" || e.key == "student") {
      if (e.value.type != TomlType::kString) throw FileError(path, e.line, e.key, "must be a string");
      (e.key == "lab" ? out.lab : out.student) = e.value.string_value;
    } else if (e.key == "answers") {
      if (e.value.type != TomlType::kTable) {
        throw FileError(path, e.line, "answers", "must be a table ([answers])");
      }
      for (const TomlEntry& a : e.value.entries) {
        LabAnswer answer;
        answer.question_id = a.key;
        answer.line = a.line;
        if (a.value.is_number()) {
          answer.is_number = true;
          answer.number = a.value.number();
        } else if (a.value.type == TomlType::kString) {
          answer.text = a.value.string_value;
        } else {
          throw FileError(path, a.line, "answers." + a.key,
                          std::string("must be a number or a string, not ") +
                              TomlTypeName(a.value.type));
        }
        out.answers.push_back(std::move(answer));
      }
    } else {
      throw FileError(path, e.line, e.key, "unknown field (lab, student, [answers])");
    }
  }
  return out;
}

LabAnswers LoadLabAnswers(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw FileError(path, 0, "", "no such file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw FileError(path, 0, "", ec.message());
  if (size > kMaxTomlBytes) {
    throw FileError(path, 0, "", "the file is " + std::to_string(size) +
                                     " bytes; answers files are at most " +
                                     std::to_string(kMaxTomlBytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw FileError(path, 0, "", "cannot read the file");
  return ParseLabAnswers(text.str(), path);
}

std::string WriteLabAnswers(const LabAnswers& answers) {
  std::ostringstream out;
  if (!answers.lab.empty()) out << "lab = " << TomlQuote(answers.lab) << "\n";
  if (!answers.student.empty()) out << "student = " << TomlQuote(answers.student) << "\n";
  out << "[answers]\n";
  for (const LabAnswer& a : answers.answers) {
    out << TomlKey(a.question_id) << " = "
        << (a.is_number ? TomlNumber(a.number) : TomlQuote(a.text)) << "\n";
  }
  return out.str();
}

const char* LabVerdictName(LabVerdict verdict) {
  switch (verdict) {
    case LabVerdict::kCorrect: return "correct";
    case LabVerdict::kWrong: return "wrong";
    case LabVerdict::kMissing: return "missing";
    case LabVerdict::kInvalid: return "invalid";
  }
  return "?";
}

bool LabQuestionNeedsRun(const LabStep& step, const LabQuestion& question) {
  if (!step.runs()) return false;
  if (!question.measured.empty()) return true;
  const LabValues params = LabParamValues(step.scenario, step.params);
  auto reads_measurement = [&](const std::string& text) {
    for (const std::string& name : Formula::Parse(text).Variables()) {
      if (params.count(name) == 0) return true;  // a measurement or a variant's value
    }
    return false;
  };
  if (!question.expected.empty() && reads_measurement(question.expected)) return true;
  for (const std::string& condition : question.correct_if) {
    if (reads_measurement(condition)) return true;
  }
  return false;
}

namespace {

/// The values a step's questions are checked against: a fresh run when
/// any question needs one, else the parameters alone.
LabStepValues StepValues(const LabStep& step) {
  for (const LabQuestion& q : step.questions) {
    if (LabQuestionNeedsRun(step, q)) return RunLabStep(step);
  }
  LabStepValues values;
  if (step.runs()) values.values = LabParamValues(step.scenario, step.params);
  return values;
}

}  // namespace

LabAnswer ExpectedLabAnswer(const LabQuestion& question, const LabValues& values) {
  LabAnswer a;
  a.question_id = question.id;
  if (question.kind == LabQuestionKind::kNumber) {
    a.is_number = true;
    a.number = ExpectedNumber(question, values);
  } else {
    a.text = CorrectOption(question, values);
  }
  return a;
}

LabQuestionResult CheckLabAnswer(const LabStep& step, const LabQuestion& q,
                                 const LabValues& values, const LabAnswer* given,
                                 const std::string& lang) {
  const LabWords& words = LabWordsFor(lang);
  LabQuestionResult r;
  r.step_id = step.id;
  r.question_id = q.id;
  r.kind = q.kind;
  r.prompt = q.prompt;
  r.units = q.units;
  r.max_points = q.points;

  if (q.kind == LabQuestionKind::kNumber) {
    r.expected = ExpectedNumber(q, values);
    // A tiny relative floor so that an exact answer survives rounding in
    // the lab's formula (tolerance 0 means "exactly", up to that).
    r.tolerance = std::max({q.tolerance * std::fabs(r.expected), q.tolerance_abs,
                            1e-9 * std::fabs(r.expected)});
    r.expected_text = WithUnits(r.expected, q.units);
    if (q.tolerance > 0 || q.tolerance_abs > 0) {
      r.expected_text += q.tolerance_abs > q.tolerance * std::fabs(r.expected)
                             ? " ± " + Num(q.tolerance_abs)
                             : " ± " + Num(100 * q.tolerance) + "%";
    }
    if (given == nullptr) {
      r.verdict = LabVerdict::kMissing;
      r.feedback = Fill(words.missing_number, {{"expected", r.expected_text}});
    } else {
      r.given_text = given->is_number ? TomlNumber(given->number) : given->text;
      double value = given->number;
      if (!given->is_number && !ParseNumberText(WithoutUnits(given->text, q.units), &value)) {
        r.verdict = LabVerdict::kInvalid;
        r.feedback = Fill(words.not_a_number,
                          {{"given", given->text},
                           {"in_units", q.units.empty() ? "" : Fill(words.in_units, {{"units", q.units}})},
                           {"expected", r.expected_text}});
      } else {
        r.given = value;
        const double diff = value - r.expected;
        if (std::fabs(diff) <= r.tolerance) {
          r.verdict = LabVerdict::kCorrect;
          r.points = q.points;
          r.feedback = Fill(words.correct_number,
                            {{"value", WithUnits(value, q.units)}, {"expected", r.expected_text}});
        } else {
          r.verdict = LabVerdict::kWrong;
          std::string how;
          if (r.expected != 0) {
            how = Fill(diff > 0 ? words.percent_high : words.percent_low,
                       {{"percent", Num(std::fabs(100 * diff / r.expected))}});
          } else {
            how = diff > 0 ? words.too_high : words.too_low;
          }
          if (r.expected != 0 && value != 0 && (value / r.expected >= 1.9 || r.expected / value >= 1.9)) {
            how += Fill(words.factor, {{"factor", Num(diff > 0 ? value / r.expected : r.expected / value)}});
          }
          r.feedback = Fill(words.wrong_number,
                            {{"how", how}, {"value", WithUnits(value, q.units)}, {"expected", r.expected_text}});
          const std::string& specific = diff > 0 ? q.feedback_high : q.feedback_low;
          AppendSentence(&r.feedback, specific.empty() ? q.feedback : specific);
        }
      }
    }
  } else {
    r.expected_text = CorrectOption(q, values);
    if (given == nullptr) {
      r.verdict = LabVerdict::kMissing;
      r.feedback = Fill(words.missing_option, {{"expected", r.expected_text}});
    } else {
      r.given_text = given->is_number ? TomlNumber(given->number) : given->text;
      const std::string typed = Lower(Trim(r.given_text));
      auto match = std::find_if(q.options.begin(), q.options.end(), [&](const std::string& o) {
        return Lower(Trim(o)) == typed;
      });
      // The same option written in another of the lab's languages.
      for (const std::vector<std::string>& other : q.other_options) {
        for (std::size_t i = 0; match == q.options.end() && i < other.size() && i < q.options.size(); ++i) {
          if (Lower(Trim(other[i])) == typed) match = q.options.begin() + static_cast<long>(i);
        }
      }
      if (match == q.options.end()) {
        std::string list;
        for (const std::string& o : q.options) list += (list.empty() ? "" : words.list_separator) + o;
        r.verdict = LabVerdict::kInvalid;
        r.feedback = Fill(words.not_an_option,
                          {{"given", r.given_text}, {"options", list}, {"expected", r.expected_text}});
      } else if (*match == r.expected_text) {
        r.verdict = LabVerdict::kCorrect;
        r.points = q.points;
        r.feedback = Fill(words.correct_option, {{"expected", r.expected_text}});
      } else {
        r.verdict = LabVerdict::kWrong;
        r.feedback = Fill(words.wrong_option, {{"given", *match}, {"expected", r.expected_text}});
        AppendSentence(&r.feedback, q.feedback);
      }
    }
  }
  AppendSentence(&r.feedback, q.explain);
  return r;
}

std::vector<LabStepValues> GradeLabRuns(const Lab& lab) {
  std::vector<LabStepValues> runs;
  for (const LabStep& step : lab.steps) {
    runs.push_back(step.questions.empty() ? LabStepValues{} : StepValues(step));
  }
  return runs;
}

LabGradeReport GradeLab(const Lab& lab, const LabAnswers& answers) {
  return GradeLab(lab, answers, GradeLabRuns(lab));
}

LabGradeReport GradeLab(const Lab& lab, const LabAnswers& answers,
                        const std::vector<LabStepValues>& runs) {
  if (runs.size() != lab.steps.size()) {
    throw Error("GradeLab: " + std::to_string(runs.size()) + " runs for " +
                    std::to_string(lab.steps.size()) + " steps",
                ErrorKind::kRuntime);
  }
  if (!answers.lab.empty() && answers.lab != lab.id) {
    throw FileError(answers.path, 0, "lab",
                    "the answers are for lab '" + answers.lab + "', not '" + lab.id + "'");
  }
  LabGradeReport report;
  report.lab_id = lab.id;
  report.lab_title = lab.title;
  report.lang = lab.lang;
  report.student = answers.student;
  for (std::size_t i = 0; i < lab.steps.size(); ++i) {
    const LabStep& step = lab.steps[i];
    if (step.questions.empty()) continue;
    const LabStepValues& run = runs[i];
    const LabValues& values = run.values;
    for (const std::string& s : run.summaries) report.run_summaries.push_back(step.id + ": " + s);
    for (const LabQuestion& q : step.questions) {
      LabQuestionResult r = CheckLabAnswer(step, q, values, answers.Find(q.id), lab.lang);
      report.score += r.points;
      report.max_score += r.max_points;
      report.results.push_back(std::move(r));
    }
  }
  for (const LabAnswer& a : answers.answers) {
    if (lab.FindQuestion(a.question_id) == nullptr) report.unknown_answers.push_back(a.question_id);
  }
  return report;
}

LabAnswers LabAnswerKey(const Lab& lab) {
  LabAnswers key;
  key.lab = lab.id;
  key.student = "answer key";
  for (const LabStep& step : lab.steps) {
    if (step.questions.empty()) continue;
    const LabValues values = StepValues(step).values;
    for (const LabQuestion& q : step.questions) key.answers.push_back(ExpectedLabAnswer(q, values));
  }
  return key;
}

std::string FormatLabReport(const LabGradeReport& report) {
  const LabWords& words = LabWordsFor(report.lang);
  std::ostringstream out;
  out << Fill(words.report_title, {{"id", report.lab_id}, {"title", report.lab_title}}) << "\n";
  if (!report.student.empty()) out << Fill(words.student, {{"student", report.student}}) << "\n";
  if (!report.run_summaries.empty()) {
    out << words.runs << "\n";
    for (const std::string& s : report.run_summaries) out << "  " << s << "\n";
  }
  out << "\n";
  int n = 0;
  for (const LabQuestionResult& r : report.results) {
    ++n;
    out << Fill(words.question_line, {{"n", std::to_string(n)},
                                      {"id", r.question_id},
                                      {"step", r.step_id},
                                      {"verdict", VerdictWord(words, r.verdict)},
                                      {"points", std::to_string(r.points)},
                                      {"max", std::to_string(r.max_points)}})
        << "\n";
    out << "    " << r.prompt << "\n";
    out << "    " << words.expected << r.expected_text << "\n";
    out << "    " << words.given << (r.given_text.empty() ? words.none : r.given_text) << "\n";
    std::istringstream lines(r.feedback);
    std::string line;
    while (std::getline(lines, line)) out << "    " << line << "\n";
    out << "\n";
  }
  for (const std::string& id : report.unknown_answers) {
    out << Fill(words.unknown_answer, {{"id", id}}) << "\n";
  }
  out << Fill(words.score, {{"score", std::to_string(report.score)}, {"max", std::to_string(report.max_score)}})
      << "\n";
  return out.str();
}

std::string LabReportJson(const LabGradeReport& report) {
  std::ostringstream out;
  JsonWriter w(out);
  w.BeginObject();
  w.Field("lab", report.lab_id);
  w.Field("title", report.lab_title);
  w.Field("lang", report.lang);
  w.Field("student", report.student);
  w.Field("score", report.score);
  w.Field("max_score", report.max_score);
  w.Key("questions");
  w.BeginArray();
  for (const LabQuestionResult& r : report.results) {
    w.BeginObject();
    w.Field("id", r.question_id);
    w.Field("step", r.step_id);
    w.Field("kind", r.kind == LabQuestionKind::kNumber ? "number" : "choice");
    w.Field("verdict", LabVerdictName(r.verdict));
    w.Field("points", r.points);
    w.Field("max_points", r.max_points);
    w.Key("expected");
    if (r.kind == LabQuestionKind::kNumber) {
      w.Double(r.expected);
    } else {
      w.String(r.expected_text);
    }
    w.Key("given");
    if (r.verdict == LabVerdict::kMissing) {
      w.Null();
    } else if (r.kind == LabQuestionKind::kNumber && r.verdict != LabVerdict::kInvalid) {
      w.Double(r.given);
    } else {
      w.String(r.given_text);
    }
    if (r.kind == LabQuestionKind::kNumber) w.Field("tolerance", r.tolerance);
    w.Field("units", r.units);
    w.Field("feedback", r.feedback);
    w.EndObject();
  }
  w.EndArray();
  w.Key("unknown_answers");
  w.BeginArray();
  for (const std::string& id : report.unknown_answers) w.String(id);
  w.EndArray();
  w.Key("runs");
  w.BeginArray();
  for (const std::string& s : report.run_summaries) w.String(s);
  w.EndArray();
  w.EndObject();
  out << "\n";
  return out.str();
}

}  // namespace shardlab
