#include "engine/lab/lab_writer.h"

#include <sstream>

#include "engine/core/toml.h"

namespace shardlab {
namespace {

std::string StringArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + TomlQuote(items[i]);
  return out + "]";
}

void Field(std::ostream& out, const char* key, const std::string& value) {
  out << key << " = " << TomlQuote(value) << "\n";
}

void FieldIfSet(std::ostream& out, const char* key, const std::string& value) {
  if (!value.empty()) Field(out, key, value);
}

std::string ParamValue(const LabParam& p) {
  switch (p.type) {
    case LabParamType::kString: return TomlQuote(p.text);
    case LabParamType::kNumber: {
      // A whole number is written as an integer; the loader reads both as numbers.
      return TomlNumber(p.number);
    }
    case LabParamType::kBool: return p.flag ? "true" : "false";
  }
  return TomlQuote(p.text);
}

void Params(std::ostream& out, const char* header, const std::vector<LabParam>& params) {
  if (params.empty()) return;
  out << "\n" << header << "\n";
  for (const LabParam& p : params) out << TomlKey(p.name) << " = " << ParamValue(p) << "\n";
}

void Question(std::ostream& out, const LabQuestion& q) {
  const LabQuestion defaults;
  out << "\n[[step.question]]\n";
  Field(out, "id", q.id);
  if (q.kind == LabQuestionKind::kChoice) Field(out, "kind", "choice");
  Field(out, "prompt", q.prompt);
  if (q.points != defaults.points) out << "points = " << q.points << "\n";
  if (q.kind == LabQuestionKind::kNumber) {
    FieldIfSet(out, "expected", q.expected);
    FieldIfSet(out, "measured", q.measured);
    FieldIfSet(out, "units", q.units);
    if (q.tolerance != defaults.tolerance) out << "tolerance = " << TomlNumber(q.tolerance) << "\n";
    if (q.tolerance_abs != defaults.tolerance_abs) {
      out << "tolerance_abs = " << TomlNumber(q.tolerance_abs) << "\n";
    }
  } else {
    out << "options = " << StringArray(q.options) << "\n";
    FieldIfSet(out, "answer", q.answer);
    if (!q.correct_if.empty()) out << "correct_if = " << StringArray(q.correct_if) << "\n";
  }
  FieldIfSet(out, "feedback", q.feedback);
  if (q.kind == LabQuestionKind::kNumber) {
    FieldIfSet(out, "feedback_low", q.feedback_low);
    FieldIfSet(out, "feedback_high", q.feedback_high);
  }
  FieldIfSet(out, "explain", q.explain);
}

}  // namespace

std::string WriteLab(const Lab& lab) {
  std::ostringstream out;
  out << "format = " << lab.format << "\n";
  Field(out, "title", lab.title);
  FieldIfSet(out, "summary", lab.summary);
  out << "minutes = " << lab.minutes << "\n";
  out << "goals = " << StringArray(lab.goals) << "\n";
  if (!lab.prerequisites.empty()) out << "prerequisites = " << StringArray(lab.prerequisites) << "\n";
  for (const LabStep& step : lab.steps) {
    out << "\n[[step]]\n";
    Field(out, "id", step.id);
    Field(out, "title", step.title);
    if (!step.text_file.empty()) {
      Field(out, "text_file", step.text_file);
    } else {
      Field(out, "text", step.text);
    }
    FieldIfSet(out, "scenario", step.scenario);
    if (!step.locked.empty()) out << "locked = " << StringArray(step.locked) << "\n";
    Params(out, "[step.params]", step.params);
    for (const LabVariant& v : step.variants) {
      out << "\n[[step.variant]]\n";
      Field(out, "id", v.id);
      Params(out, "[step.variant.params]", v.params);
    }
    for (const LabQuestion& q : step.questions) Question(out, q);
  }
  return out.str();
}

}  // namespace shardlab
