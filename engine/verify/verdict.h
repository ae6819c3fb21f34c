// The verdict of a run's check, in three values a student can read:
//
//   correct      every checked element is within its bound; the report says
//                how close the worst came: "max error 0.31 of its bound (dw3)"
//   WRONG        an element is outside its bound: the tensor, the element,
//                its value, the reference and the bound
//   not checked  the data was not computed or cannot be read back, and why
//
// A VerdictJudge takes tensors one by one (the backend's floats, the double
// reference, a bound per element from bounds.h / mlp_bounds.h) and keeps
// the worst element of all, measured as error / bound.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "engine/core/json.h"

namespace shardlab {

enum class VerdictKind : std::uint8_t { kCorrect, kWrong, kNotChecked };
/// "correct", "WRONG", "not checked".
const char* VerdictName(VerdictKind kind);

/// One tensor's worst element against its bound.
struct TensorJudgement {
  std::string tensor;            // "dw3 (stage 1)"
  std::int64_t elements = 0;
  std::int64_t worst_index = -1;
  double value = 0;              // the backend's
  double reference = 0;          // the double-precision reference's
  double bound = 0;              // |value − reference| may be this much
  double ratio = 0;              // |value − reference| / bound; +inf for NaN or a zero bound broken
};

struct Verdict {
  VerdictKind kind = VerdictKind::kNotChecked;
  std::string reason;            // not checked: why; WRONG without an element: what
  TensorJudgement worst;         // the element nearest to (or past) its bound
  int tensors = 0;
  std::int64_t elements = 0;
  bool correct() const { return kind == VerdictKind::kCorrect; }
  bool checked() const { return kind != VerdictKind::kNotChecked; }
  /// "correct (max error 0.31 of its bound, dw3 (stage 1))",
  /// "WRONG: dw3 (stage 1) element 1234 is 0.5, reference 0.25, bound 1.2e-06",
  /// "not checked (timing only: the data was not computed)".
  std::string Text() const;
  /// The tail of a correct verdict: "max error 0.31 of its bound, dw3 (stage 1)".
  std::string MarginText() const;
  /// What Text() puts in parentheses (after "WRONG: " for a wrong one).
  std::string Detail() const;
};

Verdict NotChecked(std::string reason);

/// For display beside a verdict: largest |got − want| over the tensor,
/// divided by its largest |want| (+inf for NaN or a size mismatch).
double RelativeTensorError(std::span<const float> got, std::span<const double> want);
/// The same beyond an allowance per element (Adam's sign switches, the
/// bound's `det`): max(0, |got − want| − allowance) over the largest |want|.
double RelativeTensorError(std::span<const float> got, std::span<const double> want,
                           std::span<const double> allowance);

/// The --json object of a verdict, under key "verdict": result ("correct",
/// "WRONG", "not checked"), reason (null unless set), tensor, element,
/// value, reference, bound, margin (error / bound of the worst element),
/// tensors, elements.
void WriteVerdictJson(JsonWriter& json, const Verdict& verdict);

class VerdictJudge {
 public:
  /// Every element of `got` against want ± bound (same sizes, else WRONG
  /// with the sizes named).
  void Compare(const std::string& tensor, std::span<const float> got, std::span<const double> want,
               std::span<const double> bound);
  /// One value (a loss).
  void CompareScalar(const std::string& tensor, double got, double want, double bound);
  /// A failure that has no element (a buffer that could not be read).
  void Fail(const std::string& what);
  Verdict Finish() const;

 private:
  void Consider(const TensorJudgement& t);
  Verdict verdict_;
  bool any_ = false;
};

}  // namespace shardlab
