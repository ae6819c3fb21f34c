// Lab formulas: values against hand-computed ones, every parse error with
// its column, evaluation errors, and hostile nesting that must end in an
// error rather than a stack overflow.
#include "engine/lab/formula.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "engine/core/error.h"

namespace shardlab {
namespace {

double Eval(const std::string& text, const FormulaVariables& vars = {}) {
  return EvaluateFormula(text, vars);
}

std::string ParseError(const std::string& text) {
  try {
    Formula::Parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Formula, FollowsPrecedenceAndAssociativity) {
  EXPECT_DOUBLE_EQ(Eval("1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(Eval("(1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(Eval("10 - 4 - 3"), 3);
  EXPECT_DOUBLE_EQ(Eval("64 / 4 / 2"), 8);
  EXPECT_DOUBLE_EQ(Eval("2 ^ 3 ^ 2"), 512);  // right-associative
  EXPECT_DOUBLE_EQ(Eval("-2 ^ 2"), -4);      // unary minus binds looser than ^
  EXPECT_DOUBLE_EQ(Eval("2 ^ -1"), 0.5);
  EXPECT_DOUBLE_EQ(Eval("--3"), 3);
  EXPECT_DOUBLE_EQ(Eval("1e3 + 2.5e-1 + .5"), 1000.75);
}

TEST(Formula, ComputesTheRingAllReduceTimeOfLabOne) {
  const FormulaVariables vars = {{"ranks", 8}, {"size", 26e9}};
  EXPECT_NEAR(Eval("2*(ranks-1)/ranks*size/600e9*1e3", vars), 75.8333333, 1e-6);
}

TEST(Formula, KnowsFunctionsConstantsAndSizeSuffixes) {
  EXPECT_DOUBLE_EQ(Eval("min(3, 1, 2) + max(4, 9)"), 10);
  EXPECT_DOUBLE_EQ(Eval("log2(1024) + sqrt(16) + abs(-2)"), 16);
  EXPECT_DOUBLE_EQ(Eval("ceil(2.1) + floor(2.9) + round(2.5)"), 8);
  EXPECT_DOUBLE_EQ(Eval("64M"), 64.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(Eval("1K + 1G"), 1024.0 + 1073741824.0);
  EXPECT_DOUBLE_EQ(Eval("MiB / KiB + GB / MB"), 1024 + 1000);
  EXPECT_NEAR(Eval("ln(e) + log10(1000) + exp(0)"), 5, 1e-12);
  EXPECT_NEAR(Eval("pi"), 3.14159265358979, 1e-12);
}

TEST(Formula, ComparesAndBranches) {
  const FormulaVariables vars = {{"time_us", 9.8}, {"tree.time_us", 7.0}};
  EXPECT_EQ(Eval("time_us <= tree.time_us", vars), 0);
  EXPECT_EQ(Eval("tree.time_us < time_us", vars), 1);
  EXPECT_EQ(Eval("1 < 2 && 2 >= 2 && 3 != 4 && 5 == 5", vars), 1);
  EXPECT_EQ(Eval("0 || 0", vars), 0);
  EXPECT_EQ(Eval("!0 + !7", vars), 1);
  EXPECT_EQ(Eval("if(time_us > 9, 100, 200)", vars), 100);
}

TEST(Formula, ListsTheNamesItReads) {
  const Formula f = Formula::Parse("2*(ranks-1)/ranks*size + tree.time_us + pi + min(ranks, 3)");
  EXPECT_EQ(f.Variables(), (std::vector<std::string>{"ranks", "size", "tree.time_us"}));
}

struct BadFormula {
  const char* text;
  const char* message;  // a part of the expected message, column included
};

class FormulaParseError : public ::testing::TestWithParam<BadFormula> {};

TEST_P(FormulaParseError, NamesTheColumn) {
  const BadFormula& c = GetParam();
  const std::string message = ParseError(c.text);
  EXPECT_NE(message.find(c.message), std::string::npos)
      << "formula '" << c.text << "' gave: " << message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FormulaParseError,
    ::testing::Values(BadFormula{"", "empty formula"},
                      BadFormula{"2 +", "column 4: expected a number"},
                      BadFormula{"(1 + 2", "column 7: expected ')'"},
                      BadFormula{"min(1, 2", "column 9: expected ',' or ')'"},
                      BadFormula{"foo(2)", "column 1: unknown function 'foo'"},
                      BadFormula{"sqrt(1, 2)", "column 1: sqrt takes 1 argument, given 2"},
                      BadFormula{"max()", "max takes at least 1 argument"},
                      BadFormula{"1.2.3", "column 1: malformed number"},
                      BadFormula{"2x", "column 2: unexpected 'x' after a number"},
                      BadFormula{"1e", "column 3: expected digits after the exponent"},
                      BadFormula{"1 < 2 < 3", "comparisons do not chain"},
                      BadFormula{"2 $ 3", "column 3: unexpected '$'"},
                      BadFormula{"a..b", "column 1: malformed name"},
                      BadFormula{"3 4", "column 3: unexpected '4'"}));

TEST(Formula, RefusesDeepNestingWithoutOverflowingTheStack) {
  // Within the 4096-character cap, far deeper than the depth cap.
  EXPECT_NE(ParseError(std::string(2000, '(') + "1" + std::string(2000, ')'))
                .find("nested more than 64 levels"),
            std::string::npos);
  EXPECT_NE(ParseError(std::string(4000, '-') + "1").find("nested more than"),
            std::string::npos);
  EXPECT_NE(ParseError("2" + std::string(4000, '^') + "2").find("column 3: expected a number"),
            std::string::npos);
  std::string powers = "2";
  for (int i = 0; i < 1000; ++i) powers += "^2";
  EXPECT_NE(ParseError(powers).find("nested more than"), std::string::npos);
  // Within the cap is fine.
  EXPECT_DOUBLE_EQ(Eval(std::string(30, '(') + "7" + std::string(30, ')')), 7);
}

TEST(Formula, RefusesOverlongText) {
  EXPECT_NE(ParseError(std::string(5000, '1')).find("at most 4096"), std::string::npos);
}

TEST(Formula, EvaluationErrorsNameTheFormula) {
  auto message = [](const std::string& text, const FormulaVariables& vars = {}) -> std::string {
    try {
      EvaluateFormula(text, vars);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message("ranks + 1"), "formula 'ranks + 1': unknown name 'ranks'");
  EXPECT_EQ(message("1 / (2 - 2)"), "formula '1 / (2 - 2)': division by zero");
  EXPECT_NE(message("sqrt(-1)").find("sqrt of a negative number"), std::string::npos);
  EXPECT_NE(message("log2(0)").find("not positive"), std::string::npos);
  EXPECT_NE(message("10 ^ 400").find("not a finite number"), std::string::npos);
}

}  // namespace
}  // namespace shardlab
