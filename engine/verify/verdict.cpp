#include "engine/verify/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace shardlab {
namespace {

std::string Number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

std::string Ratio(double r) {
  if (!std::isfinite(r)) return "inf";
  char text[32];
  std::snprintf(text, sizeof text, r < 0.01 ? "%.1e" : "%.2f", r);
  return text;
}

// |got − want| / bound, with NaN and a broken zero bound as +inf.
double RatioOf(double got, double want, double bound) {
  const double error = std::fabs(got - want);
  if (std::isnan(error)) return std::numeric_limits<double>::infinity();
  if (error == 0) return 0;
  if (!(bound > 0)) return std::numeric_limits<double>::infinity();
  return error / bound;
}

}  // namespace

const char* VerdictName(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::kCorrect: return "correct";
    case VerdictKind::kWrong: return "WRONG";
    case VerdictKind::kNotChecked: break;
  }
  return "not checked";
}

Verdict NotChecked(std::string reason) {
  Verdict v;
  v.reason = std::move(reason);
  return v;
}

double RelativeTensorError(std::span<const float> got, std::span<const double> want) {
  return RelativeTensorError(got, want, {});
}

double RelativeTensorError(std::span<const float> got, std::span<const double> want,
                           std::span<const double> allowance) {
  if (got.size() != want.size() || (!allowance.empty() && allowance.size() != want.size()))
    return std::numeric_limits<double>::infinity();
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!allowance.empty() && !std::isnan(d)) d = std::max(0.0, d - allowance[i]);
    diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(diff, d);
    scale = std::max(scale, std::fabs(want[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

std::string Verdict::MarginText() const {
  return "max error " + Ratio(worst.ratio) + " of its bound, " + worst.tensor;
}

std::string Verdict::Detail() const {
  switch (kind) {
    case VerdictKind::kCorrect: return MarginText();
    case VerdictKind::kWrong:
      if (!reason.empty()) return reason;
      return worst.tensor + " element " + std::to_string(worst.worst_index) + " is " + Number(worst.value) +
             ", reference " + Number(worst.reference) + ", bound " + Number(worst.bound) + " (error " +
             Ratio(worst.ratio) + " of its bound)";
    case VerdictKind::kNotChecked: break;
  }
  return reason;
}

std::string Verdict::Text() const {
  if (kind == VerdictKind::kWrong) return "WRONG: " + Detail();
  return std::string(VerdictName(kind)) + " (" + Detail() + ")";
}

void WriteVerdictJson(JsonWriter& json, const Verdict& v) {
  json.Key("verdict");
  json.BeginObject();
  json.Field("result", std::string(VerdictName(v.kind)));
  json.Key("reason");
  if (v.reason.empty()) json.Null(); else json.String(v.reason);
  const bool element = v.checked() && v.worst.worst_index >= 0;
  json.Key("tensor");
  if (element) json.String(v.worst.tensor); else json.Null();
  json.Key("element");
  if (element) json.Int(v.worst.worst_index); else json.Null();
  for (const auto& [key, value] : {std::pair{"value", v.worst.value}, std::pair{"reference", v.worst.reference},
                                   std::pair{"bound", v.worst.bound}, std::pair{"margin", v.worst.ratio}}) {
    json.Key(key);
    if (element) json.Double(value); else json.Null();
  }
  json.Field("tensors", v.tensors);
  json.Field("elements", v.elements);
  json.EndObject();
}

void VerdictJudge::Consider(const TensorJudgement& t) {
  ++verdict_.tensors;
  verdict_.elements += t.elements;
  if (!any_ || t.ratio > verdict_.worst.ratio) verdict_.worst = t;
  any_ = true;
}

void VerdictJudge::Compare(const std::string& tensor, std::span<const float> got,
                           std::span<const double> want, std::span<const double> bound) {
  if (got.size() != want.size() || bound.size() != want.size()) {
    Fail(tensor + " holds " + std::to_string(got.size()) + " elements, the reference " +
         std::to_string(want.size()));
    return;
  }
  TensorJudgement t;
  t.tensor = tensor;
  t.elements = static_cast<std::int64_t>(want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double r = RatioOf(got[i], want[i], bound[i]);
    if (t.worst_index < 0 || r > t.ratio) {
      t.worst_index = static_cast<std::int64_t>(i);
      t.ratio = r;
      t.value = got[i];
      t.reference = want[i];
      t.bound = bound[i];
    }
  }
  Consider(t);
}

void VerdictJudge::CompareScalar(const std::string& tensor, double got, double want, double bound) {
  TensorJudgement t;
  t.tensor = tensor;
  t.elements = 1;
  t.worst_index = 0;
  t.value = got;
  t.reference = want;
  t.bound = bound;
  t.ratio = RatioOf(got, want, bound);
  Consider(t);
}

void VerdictJudge::Fail(const std::string& what) {
  if (verdict_.reason.empty()) verdict_.reason = what;
}

Verdict VerdictJudge::Finish() const {
  Verdict v = verdict_;
  if (!v.reason.empty()) {
    v.kind = VerdictKind::kWrong;
  } else if (!any_) {
    v.reason = "nothing to compare";
  } else {
    v.kind = v.worst.ratio <= 1 ? VerdictKind::kCorrect : VerdictKind::kWrong;
  }
  return v;
}

}  // namespace shardlab
