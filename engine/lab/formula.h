// Formulas in lab files: `expected = "2*(ranks-1)/ranks * size / 1e6"`,
// `correct_if = ["ring.time_us < tree.time_us", ...]`.
//
//   text ──► tokens ──► recursive-descent parse ──► tree ──► Evaluate(variables)
//                        (depth capped at 64; every error names the column)
//
// Grammar, loosest binding first:
//   or      := and ("||" and)*
//   and     := compare ("&&" compare)*
//   compare := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)?
//   sum     := product (("+" | "-") product)*
//   product := unary (("*" | "/") unary)*
//   unary   := ("-" | "+" | "!") unary | power
//   power   := atom ("^" unary)?            right-associative: 2^3^2 = 2^9
//   atom    := number | name | name "(" args ")" | "(" or ")"
// Numbers: 12, 0.5, 1e-3, and a size suffix K M G T (binary, as sizes are
// written in scenarios: 64M = 64·2^20). Names: letters, digits, '_' and '.'
// (variant.quantity), starting with a letter or '_'. Constants: pi, e,
// KiB MiB GiB TiB (2^10..2^40), KB MB GB TB (10^3..10^12).
// Functions: min(a, b, ...), max(a, b, ...), abs, sqrt, log2, log10, ln,
// exp, ceil, floor, round, if(condition, then, else).
// Comparisons and logic give 1 (true) or 0 (false); any non-zero is true.
// Division by zero, sqrt or log of a negative, a result that is not a
// finite number: evaluation errors that name the formula.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// Variable values by name (parameters and measured quantities).
using FormulaVariables = std::map<std::string, double>;

inline constexpr int kMaxFormulaDepth = 64;
inline constexpr std::size_t kMaxFormulaChars = 4096;

struct FormulaNode;

class Formula {
 public:
  /// Parses `text`. Throws Error(kInvalidInput) "column 7: expected ')'
  /// after the arguments of min, found end of formula".
  static Formula Parse(std::string_view text);

  Formula();
  ~Formula();
  Formula(const Formula&) = delete;
  Formula& operator=(const Formula&) = delete;
  Formula(Formula&&) noexcept;
  Formula& operator=(Formula&&) noexcept;

  /// The value, or Error(kInvalidInput) "unknown name 'x'", "division by zero".
  double Evaluate(const FormulaVariables& variables) const;

  /// Names the formula reads (not constants or functions), sorted, unique.
  std::vector<std::string> Variables() const;

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::unique_ptr<FormulaNode> root_;
};

/// Parses and evaluates in one call (throws as both do).
double EvaluateFormula(std::string_view text, const FormulaVariables& variables);

}  // namespace shardlab
