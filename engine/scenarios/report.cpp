#include "engine/scenarios/report.h"

#include <iomanip>
#include <sstream>

#include "engine/core/units.h"

namespace shardlab {

ReportValue::ReportValue(std::string value) : kind(Kind::kText), text(std::move(value)) {}
ReportValue::ReportValue(const char* value) : kind(Kind::kText), text(value) {}

ReportValue ReportValue::List() {
  ReportValue v;
  v.kind = Kind::kList;
  return v;
}

ReportValue ReportValue::Object() {
  ReportValue v;
  v.kind = Kind::kObject;
  return v;
}

ReportValue ReportValue::Maybe(bool present, ReportValue value) { return present ? value : ReportValue(); }

ReportValue& ReportValue::Add(std::string key, ReportValue value) {
  fields.push_back({std::move(key), std::move(value)});
  return *this;
}

ReportValue& ReportValue::Push(ReportValue value) {
  items.push_back(std::move(value));
  return *this;
}

ReportRow TimeRow(std::string label, std::string key, double ns, std::string formula) {
  return {std::move(label), FormatTime(static_cast<TimeNs>(ns)), std::move(formula), std::move(key), ns / 1e3};
}

ReportBlock& Report::Block(std::size_t label_width, std::size_t text_width) {
  blocks.push_back({label_width, text_width, 1, {}});
  return blocks.back();
}

void Report::Line(std::string text) {
  if (blocks.empty()) Block();
  blocks.back().rows.push_back({"", std::move(text), "", "", {}});
}

void AddCheckFields(ReportValue& fields, bool checked, bool correct,
                    const std::vector<std::pair<const char*, double>>& errors, const std::string& not_checked) {
  fields.Add("checked", checked);
  fields.Add("correct", ReportValue::Maybe(checked, correct));
  for (const auto& [key, value] : errors) fields.Add(key, ReportValue::Maybe(checked, value));
  fields.Add("not_checked_reason", ReportValue::Maybe(!checked, not_checked));
}

std::string StepCheckText(const Verdict& verdict, const std::string& against, double loss,
                          double reference_loss, const std::string& worst) {
  std::ostringstream out;
  out << VerdictName(verdict.kind) << " (" << verdict.Detail() << "; " << against << "; loss "
      << std::setprecision(6) << loss << " vs " << reference_loss << ")";
  if (!verdict.correct() && !worst.empty()) out << "\n#   worst tensor: " << worst;
  return out.str();
}

std::string LayerCheckText(const Verdict& verdict, bool checked, const std::string& not_checked,
                           const std::string& correct, const std::string& wrong,
                           const std::string& margin_tail) {
  if (!checked) return "not checked: " + not_checked;
  if (verdict.correct()) return "correct: " + correct + " (" + verdict.MarginText() + margin_tail + ")";
  return "WRONG: " + (wrong.empty() ? verdict.Detail() : wrong + " (" + verdict.Detail() + ")");
}

}  // namespace shardlab
