// A run's report as plain data, filled once by the scenario's Summarize:
// the rows every front end prints under the scenario's own tables, and the
// fields of its --json. Nothing here formats for a terminal; the CLI lays
// the rows out (app/cli/scenario_run.cpp) and writes the fields.
//
//   # compute         1.23 us     the busiest rank's compute ops     a row: label, text, formula
//   # step time       4.56 us     forward + backward of the layer    (--json "step_time_us": 4.56)
//   #
//   # Estimate (seed text): ...                                      a row of text alone
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/verify/verdict.h"

namespace shardlab {

struct ReportField;

/// A --json value: null, a switch, an integer, a number, text, or a list
/// or object of them (a table's rows).
struct ReportValue {
  enum class Kind : std::uint8_t { kNull, kBool, kInt, kNumber, kText, kList, kObject };
  Kind kind = Kind::kNull;
  bool flag = false;
  std::int64_t integer = 0;
  double number = 0;
  std::string text;
  std::vector<ReportValue> items;   // kList
  std::vector<ReportField> fields;  // kObject, in order

  ReportValue() = default;
  template <class T>
    requires std::is_arithmetic_v<T>
  ReportValue(T value) {  // NOLINT: a number is a value
    if constexpr (std::is_same_v<T, bool>) {
      kind = Kind::kBool;
      flag = value;
    } else if constexpr (std::is_integral_v<T>) {
      kind = Kind::kInt;
      integer = static_cast<std::int64_t>(value);
    } else {
      kind = Kind::kNumber;
      number = static_cast<double>(value);
    }
  }
  ReportValue(std::string value);  // NOLINT: text is a value
  ReportValue(const char* value);  // NOLINT
  static ReportValue List();
  static ReportValue Object();
  /// `value` when `present`, else null ("correct": null when not checked).
  static ReportValue Maybe(bool present, ReportValue value);

  /// Appends a field to an object (this), returning the object.
  ReportValue& Add(std::string key, ReportValue value);
  /// Appends an item to a list (this), returning the list.
  ReportValue& Push(ReportValue value);
};

// An object's field. Not a std::pair (see JsonMember in core/json_parse.h).
struct ReportField {
  std::string key;
  ReportValue value;
};

/// One line of the report: "# LABEL  TEXT  FORMULA"; with a key, also one
/// field of --json. A row without a label is a line of text alone ("" for
/// an empty "#" line); a row with a key but no label or text is --json only.
struct ReportRow {
  std::string label;    // "step time"; leading spaces indent it
  std::string text;     // what was measured, as read: "1.23 us"
  std::string formula;  // what stands beside it: "formula (p-1)/m = 0.3750", a note
  std::string key;      // --json: "step_time_us"; "" for none
  ReportValue value;    // --json: 1.23 (microseconds)

  ReportRow(std::string label_ = "", std::string text_ = "", std::string formula_ = "", std::string key_ = "",
            ReportValue value_ = {})
      : label(std::move(label_)), text(std::move(text_)), formula(std::move(formula_)), key(std::move(key_)),
        value(std::move(value_)) {}
};

/// A time as a row: "1.23 us" in the text, microseconds under `key` in --json.
ReportRow TimeRow(std::string label, std::string key, double ns, std::string formula = "");

/// Rows that share their columns.
struct ReportBlock {
  std::size_t label_width = 0;  // the labels' column, after "# "
  std::size_t text_width = 0;   // the texts' column with two spaces after; 0: three spaces after the text
  /// Where it is printed among the scenario's own tables: 0 before the
  /// first, 1 after it (or after all of them), 2 after the second.
  int position = 1;
  std::vector<ReportRow> rows;
};

/// What Summarize says of a run beside its quantities.
struct Report {
  std::vector<ReportBlock> blocks;
  /// --json fields after those of the rows (a table's rows, the check).
  ReportValue fields = ReportValue::Object();
  /// The text after "# Result: " (may hold more lines); "": the verdict's.
  std::string result;

  /// A new block with these columns, returned for its rows.
  ReportBlock& Block(std::size_t label_width = 0, std::size_t text_width = 0);
  /// A row of text alone in the last block ("" is an empty "#" line).
  void Line(std::string text);
};

/// The check's fields of every scenario's --json: "checked", "correct" and
/// each error (null when not checked), "not_checked_reason" (null when checked).
void AddCheckFields(ReportValue& fields, bool checked, bool correct,
                    const std::vector<std::pair<const char*, double>>& errors, const std::string& not_checked);

/// The "# Result:" of a checked training step: "correct (max error ...;
/// after one step, <against>; loss 1.5 vs 1.5)", and when it is wrong
/// "#   worst tensor: <worst>" on a line of its own (none when empty).
std::string StepCheckText(const Verdict& verdict, const std::string& against, double loss,
                          double reference_loss, const std::string& worst);

/// The "# Result:" of a checked layer: "not checked: <reason>", "correct:
/// <correct> (<margin><margin_tail>)", "WRONG: <wrong> (<detail>)" ("WRONG:
/// <detail>" for no `wrong`).
std::string LayerCheckText(const Verdict& verdict, bool checked, const std::string& not_checked,
                           const std::string& correct, const std::string& wrong,
                           const std::string& margin_tail = "");

}  // namespace shardlab
