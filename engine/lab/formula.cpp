// Formula parser and evaluator. The parser is recursive descent with an
// explicit depth counter, so "((((...))))" or "----x" from a hostile lab file
// ends in an error, not a stack overflow; evaluation recurses over a tree
// whose depth the parser already bounded.
#include "engine/lab/formula.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cmath>
#include <set>
#include <utility>

#include "engine/core/error.h"

namespace shardlab {

enum class FormulaOp {
  kNumber, kVariable, kCall,
  kNeg, kNot,
  kAdd, kSub, kMul, kDiv, kPow,
  kLess, kLessEq, kGreater, kGreaterEq, kEqual, kNotEqual, kAnd, kOr,
};

struct FormulaNode {
  FormulaOp op = FormulaOp::kNumber;
  double number = 0;
  std::string name;  // variable or function
  std::vector<std::unique_ptr<FormulaNode>> args;
};

namespace {

struct Constant {
  const char* name;
  double value;
};

constexpr Constant kConstants[] = {
    {"pi", 3.14159265358979323846}, {"e", 2.71828182845904523536},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
};

const Constant* FindConstant(const std::string& name) {
  for (const Constant& c : kConstants) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// Functions with their argument counts (-1: one or more).
struct Function {
  const char* name;
  int arity;
};

constexpr Function kFunctions[] = {
    {"min", -1}, {"max", -1}, {"abs", 1}, {"sqrt", 1}, {"log2", 1}, {"log10", 1}, {"ln", 1},
    {"exp", 1}, {"ceil", 1}, {"floor", 1}, {"round", 1}, {"if", 3},
};

const Function* FindFunction(const std::string& name) {
  for (const Function& f : kFunctions) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::unique_ptr<FormulaNode> Leaf(FormulaOp op) {
  auto node = std::make_unique<FormulaNode>();
  node->op = op;
  return node;
}

std::unique_ptr<FormulaNode> Binary(FormulaOp op, std::unique_ptr<FormulaNode> a,
                                    std::unique_ptr<FormulaNode> b) {
  auto node = Leaf(op);
  node->args.push_back(std::move(a));
  node->args.push_back(std::move(b));
  return node;
}

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::unique_ptr<FormulaNode> ParseAll() {
    SkipSpace();
    if (pos_ == text_.size()) Fail("empty formula");
    auto root = ParseOr();
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected " + Describe() + " after a complete formula");
    return root;
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw Error("column " + std::to_string(pos_ + 1) + ": " + message);
  }

  std::string Describe() const {
    if (pos_ >= text_.size()) return "end of formula";
    return "'" + std::string(1, text_[pos_]) + "'";
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes `token` when it comes next (after spaces).
  bool Accept(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  // Every rule that can nest counts a level, so depth is bounded whatever
  // the path through the grammar.
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxFormulaDepth) {
        parser.Fail("nested more than " + std::to_string(kMaxFormulaDepth) + " levels deep");
      }
    }
    ~DepthGuard() { --parser.depth_; }
    Parser& parser;
  };

  std::unique_ptr<FormulaNode> ParseOr() {
    DepthGuard guard(*this);
    auto left = ParseAnd();
    while (Accept("||")) left = Binary(FormulaOp::kOr, std::move(left), ParseAnd());
    return left;
  }

  std::unique_ptr<FormulaNode> ParseAnd() {
    auto left = ParseCompare();
    while (Accept("&&")) left = Binary(FormulaOp::kAnd, std::move(left), ParseCompare());
    return left;
  }

  std::unique_ptr<FormulaNode> ParseCompare() {
    auto left = ParseSum();
    // Two-character operators first, so "<=" is not read as "<" then "=".
    static const std::pair<const char*, FormulaOp> kOps[] = {
        {"<=", FormulaOp::kLessEq}, {">=", FormulaOp::kGreaterEq}, {"==", FormulaOp::kEqual},
        {"!=", FormulaOp::kNotEqual}, {"<", FormulaOp::kLess}, {">", FormulaOp::kGreater}};
    for (const auto& [token, op] : kOps) {
      if (Accept(token)) {
        auto right = ParseSum();
        SkipSpace();
        if (pos_ < text_.size() && (text_[pos_] == '<' || text_[pos_] == '>' ||
                                    (text_[pos_] == '=' && text_.substr(pos_, 2) == "=="))) {
          Fail("comparisons do not chain; use && (a < b && b < c)");
        }
        return Binary(op, std::move(left), std::move(right));
      }
    }
    return left;
  }

  std::unique_ptr<FormulaNode> ParseSum() {
    auto left = ParseProduct();
    for (;;) {
      if (Accept("+")) {
        left = Binary(FormulaOp::kAdd, std::move(left), ParseProduct());
      } else if (Accept("-")) {
        left = Binary(FormulaOp::kSub, std::move(left), ParseProduct());
      } else {
        return left;
      }
    }
  }

  std::unique_ptr<FormulaNode> ParseProduct() {
    auto left = ParseUnary();
    for (;;) {
      if (Accept("*")) {
        left = Binary(FormulaOp::kMul, std::move(left), ParseUnary());
      } else if (Accept("/")) {
        left = Binary(FormulaOp::kDiv, std::move(left), ParseUnary());
      } else {
        return left;
      }
    }
  }

  std::unique_ptr<FormulaNode> ParseUnary() {
    DepthGuard guard(*this);
    SkipSpace();
    if (Accept("-")) {
      auto node = Leaf(FormulaOp::kNeg);
      node->args.push_back(ParseUnary());
      return node;
    }
    if (Accept("+")) return ParseUnary();
    // "!" but not "!=" (which a well-formed formula cannot have here anyway).
    if (pos_ < text_.size() && text_[pos_] == '!' && text_.substr(pos_, 2) != "!=") {
      ++pos_;
      auto node = Leaf(FormulaOp::kNot);
      node->args.push_back(ParseUnary());
      return node;
    }
    return ParsePower();
  }

  std::unique_ptr<FormulaNode> ParsePower() {
    auto base = ParseAtom();
    if (Accept("^")) return Binary(FormulaOp::kPow, std::move(base), ParseUnary());
    return base;
  }

  std::unique_ptr<FormulaNode> ParseAtom() {
    SkipSpace();
    if (pos_ >= text_.size()) Fail("expected a number, a name or '(', found end of formula");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      auto inner = ParseOr();
      if (!Accept(")")) Fail("expected ')', found " + Describe());
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return ParseNumber();
    if (IsNameStart(c)) return ParseName();
    Fail("expected a number, a name or '(', found " + Describe());
  }

  std::unique_ptr<FormulaNode> ParseNumber() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '.')) {
      ++pos_;
    }
    // Exponent: "e" followed by digits (with a sign); a lone "e" is an error.
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      std::size_t p = pos_ + 1;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      if (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) {
        pos_ = p;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
          ++pos_;
        }
      } else {
        pos_ = p;
        Fail("expected digits after the exponent 'e'");
      }
    }
    const std::string digits(text_.substr(start, pos_ - start));
    if (std::count(digits.begin(), digits.end(), '.') > 1 || digits == ".") {
      pos_ = start;
      Fail("malformed number '" + digits + "'");
    }
    double value = std::strtod(digits.c_str(), nullptr);
    if (pos_ < text_.size()) {
      const char s = text_[pos_];
      double scale = 0;
      if (s == 'K') scale = 1024.0;
      if (s == 'M') scale = 1048576.0;
      if (s == 'G') scale = 1073741824.0;
      if (s == 'T') scale = 1099511627776.0;
      if (scale != 0) {
        ++pos_;
        value *= scale;
      }
      if (pos_ < text_.size() && IsNameChar(text_[pos_])) {
        Fail("unexpected '" + std::string(1, text_[pos_]) +
             "' after a number (size suffixes are K, M, G, T; write 2*x for a product)");
      }
    }
    if (!std::isfinite(value)) {
      pos_ = start;
      Fail("number '" + digits + "' is too large");
    }
    auto node = Leaf(FormulaOp::kNumber);
    node->number = value;
    return node;
  }

  std::unique_ptr<FormulaNode> ParseName() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    if (name.back() == '.' || name.find("..") != std::string::npos) {
      pos_ = start;
      Fail("malformed name '" + name + "'");
    }
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '(') {
      const Function* function = FindFunction(name);
      if (function == nullptr) {
        pos_ = start;
        Fail("unknown function '" + name +
             "' (min, max, abs, sqrt, log2, log10, ln, exp, ceil, floor, round, if)");
      }
      ++pos_;
      auto node = Leaf(FormulaOp::kCall);
      node->name = name;
      if (!Accept(")")) {
        do {
          node->args.push_back(ParseOr());
        } while (Accept(","));
        if (!Accept(")")) Fail("expected ',' or ')' in the arguments of " + name + ", found " +
                               Describe());
      }
      const int count = static_cast<int>(node->args.size());
      if (function->arity < 0 ? count == 0 : count != function->arity) {
        pos_ = start;
        std::string want = function->arity < 0 ? "at least 1 argument"
                                               : std::to_string(function->arity) +
                                                     (function->arity == 1 ? " argument"
                                                                           : " arguments");
        Fail(name + " takes " + want + ", given " + std::to_string(count));
      }
      return node;
    }
    if (const Constant* constant = FindConstant(name)) {
      auto node = Leaf(FormulaOp::kNumber);
      node->number = constant->value;
      return node;
    }
    auto node = Leaf(FormulaOp::kVariable);
    node->name = std::move(name);
    return node;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

void CollectVariables(const FormulaNode& node, std::set<std::string>* names) {
  if (node.op == FormulaOp::kVariable) names->insert(node.name);
  for (const auto& arg : node.args) CollectVariables(*arg, names);
}

class Evaluator {
 public:
  Evaluator(const FormulaVariables& variables, const std::string& text)
      : variables_(variables), text_(text) {}

  double Eval(const FormulaNode& n) const {
    switch (n.op) {
      case FormulaOp::kNumber: return n.number;
      case FormulaOp::kVariable: {
        auto it = variables_.find(n.name);
        if (it == variables_.end()) Fail("unknown name '" + n.name + "'");
        return it->second;
      }
      case FormulaOp::kCall: return Call(n);
      case FormulaOp::kNeg: return -Eval(*n.args[0]);
      case FormulaOp::kNot: return Eval(*n.args[0]) == 0 ? 1.0 : 0.0;
      case FormulaOp::kAnd: return (Eval(*n.args[0]) != 0 && Eval(*n.args[1]) != 0) ? 1.0 : 0.0;
      case FormulaOp::kOr: return (Eval(*n.args[0]) != 0 || Eval(*n.args[1]) != 0) ? 1.0 : 0.0;
      default: break;
    }
    const double a = Eval(*n.args[0]);
    const double b = Eval(*n.args[1]);
    switch (n.op) {
      case FormulaOp::kAdd: return a + b;
      case FormulaOp::kSub: return a - b;
      case FormulaOp::kMul: return a * b;
      case FormulaOp::kDiv:
        if (b == 0) Fail("division by zero");
        return a / b;
      case FormulaOp::kPow: return std::pow(a, b);
      case FormulaOp::kLess: return a < b ? 1.0 : 0.0;
      case FormulaOp::kLessEq: return a <= b ? 1.0 : 0.0;
      case FormulaOp::kGreater: return a > b ? 1.0 : 0.0;
      case FormulaOp::kGreaterEq: return a >= b ? 1.0 : 0.0;
      case FormulaOp::kEqual: return a == b ? 1.0 : 0.0;
      case FormulaOp::kNotEqual: return a != b ? 1.0 : 0.0;
      default: break;
    }
    Fail("internal: unknown operator");
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw Error("formula '" + text_ + "': " + message);
  }

  double Call(const FormulaNode& n) const {
    if (n.name == "if") return Eval(*n.args[0]) != 0 ? Eval(*n.args[1]) : Eval(*n.args[2]);
    if (n.name == "min" || n.name == "max") {
      double result = Eval(*n.args[0]);
      for (std::size_t i = 1; i < n.args.size(); ++i) {
        const double v = Eval(*n.args[i]);
        result = n.name == "min" ? std::min(result, v) : std::max(result, v);
      }
      return result;
    }
    const double x = Eval(*n.args[0]);
    if (n.name == "abs") return std::fabs(x);
    if (n.name == "ceil") return std::ceil(x);
    if (n.name == "floor") return std::floor(x);
    if (n.name == "round") return std::round(x);
    if (n.name == "exp") return std::exp(x);
    if (n.name == "sqrt") {
      if (x < 0) Fail("sqrt of a negative number");
      return std::sqrt(x);
    }
    if (x <= 0) Fail(n.name + " of a number that is not positive");
    if (n.name == "log2") return std::log2(x);
    if (n.name == "log10") return std::log10(x);
    return std::log(x);  // ln
  }

  const FormulaVariables& variables_;
  const std::string& text_;
};

}  // namespace

Formula::Formula() = default;
Formula::~Formula() = default;
Formula::Formula(Formula&&) noexcept = default;
Formula& Formula::operator=(Formula&&) noexcept = default;

Formula Formula::Parse(std::string_view text) {
  if (text.size() > kMaxFormulaChars) {
    throw Error("formula is " + std::to_string(text.size()) + " characters long (at most " +
                std::to_string(kMaxFormulaChars) + ")");
  }
  Formula formula;
  formula.text_ = std::string(text);
  formula.root_ = Parser(text).ParseAll();
  return formula;
}

double Formula::Evaluate(const FormulaVariables& variables) const {
  if (!root_) throw Error("empty formula");
  const double value = Evaluator(variables, text_).Eval(*root_);
  if (!std::isfinite(value)) {
    throw Error("formula '" + text_ + "': the result is not a finite number");
  }
  return value;
}

std::vector<std::string> Formula::Variables() const {
  std::set<std::string> names;
  if (root_) CollectVariables(*root_, &names);
  return {names.begin(), names.end()};
}

double EvaluateFormula(std::string_view text, const FormulaVariables& variables) {
  return Formula::Parse(text).Evaluate(variables);
}

}  // namespace shardlab
