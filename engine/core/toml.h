// A small TOML-subset reader and string writer for user-written files
// (topology files, lab files).
//
// Why our own and not toml++: the files come from students, so malformed
// input is the normal case, and Debian's toml++ aborts on some of it,
// recurses without limit on deep nesting (a line of 100,000 '[' overflows
// the stack), and trims a string that starts with a newline on the way back.
// This reader is small enough to read in one sitting:
//
//   text ──► size / NUL / UTF-8 checks ──► line-by-line parse ──► TomlValue tree
//            (before any parsing)          (iterative; arrays      (every key keeps
//                                           recurse, capped at 32)  its line number)
//
// Supported: comments; `key = value` with bare, "quoted" and dotted keys;
// [table] and [[array.of.tables]] headers; basic strings with escapes
// (\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX), literal 'strings', multi-line
// """ and ''' strings; decimal/hex/octal/binary integers; floats (with inf,
// nan); booleans; arrays (any element types, nesting capped).
// Not supported, with a clear error: inline tables, dates and times.
//
// Every error is a shardlab::Error (kInvalidInput) reading
// "path:line: message"; nothing is read past a failed check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// Files larger than this are rejected before parsing.
inline constexpr std::size_t kMaxTomlBytes = std::size_t{1} << 20;
/// Deepest nesting of arrays and tables (dotted keys count one level each).
inline constexpr int kMaxTomlDepth = 32;

enum class TomlType : std::uint8_t { kString, kInteger, kFloat, kBool, kArray, kTable };

/// "string", "integer", ... for error messages.
const char* TomlTypeName(TomlType type);

struct TomlEntry;

/// One value of the document tree; tables keep their keys in file order.
struct TomlValue {
  TomlType type = TomlType::kTable;
  int line = 0;                    // where the value (a table: its header) starts
  std::string string_value;        // kString
  std::int64_t int_value = 0;      // kInteger
  double float_value = 0;          // kFloat
  bool bool_value = false;         // kBool
  std::vector<TomlValue> items;    // kArray
  std::vector<TomlEntry> entries;  // kTable

  // Parser bookkeeping, so that a table is defined once and only arrays made
  // by [[...]] headers accept more tables.
  bool defined_by_header = false;
  bool array_of_tables = false;

  bool is_number() const { return type == TomlType::kInteger || type == TomlType::kFloat; }
  /// The value of an integer or float as a double.
  double number() const {
    return type == TomlType::kInteger ? static_cast<double>(int_value) : float_value;
  }
  /// The entry of a table named `key`, or nullptr.
  const TomlEntry* Find(std::string_view key) const;
};

struct TomlEntry {
  std::string key;
  int line = 0;  // line of the key (or of the header that made it)
  TomlValue value;
};

/// Parses `text`; `path_for_errors` prefixes every message. Throws Error.
TomlValue ParseToml(std::string_view text, const std::string& path_for_errors);

/// Reads and parses a file, checking its size before reading it. Throws Error.
TomlValue LoadTomlFile(const std::string& path);

/// `text` as a TOML basic string with quotes: control characters (newlines
/// included), quotes and backslashes escaped, so it reads back identical.
std::string TomlQuote(std::string_view text);

/// `key` bare when it can be, else quoted.
std::string TomlKey(std::string_view key);

/// Shortest text that reads back as exactly `value` (integers without ".0");
/// "inf", "-inf", "nan" for non-finite values.
std::string TomlNumber(double value);

}  // namespace shardlab
