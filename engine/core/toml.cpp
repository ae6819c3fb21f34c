#include "engine/core/toml.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/json.h"

namespace shardlab {
namespace {

std::string SizeMessage(std::uintmax_t size) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "file is %.1f MiB (%ju bytes); the limit is 1 MiB (%zu bytes)",
                static_cast<double>(size) / (1024.0 * 1024.0), size, kMaxTomlBytes);
  return buf;
}

bool IsBareKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool IsDecimalDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDecimalDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsOctalDigit(char c) { return c >= '0' && c <= '7'; }
bool IsBinaryDigit(char c) { return c == '0' || c == '1'; }

// A control character that TOML forbids raw in strings and comments (tab is allowed).
bool IsForbiddenControl(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

// Copies `digits` without its underscores into `out`; false unless every
// underscore sits between two digits and there is at least one digit.
bool StripUnderscores(std::string_view digits, bool (*is_digit)(char), std::string* out) {
  if (digits.empty()) return false;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    const char c = digits[i];
    if (c == '_') {
      if (i == 0 || i + 1 == digits.size() || !is_digit(digits[i - 1]) || !is_digit(digits[i + 1]))
        return false;
      continue;
    }
    if (!is_digit(c)) return false;
    out->push_back(c);
  }
  return true;
}

void AppendUtf8(std::uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Rejects NUL bytes and malformed UTF-8 (overlong forms, surrogates, code
// points past U+10FFFF) before parsing, so the parser never sees them.
void CheckEncoding(std::string_view text, const std::string& path) {
  int line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (c == 0) throw FileError(path, line, "", "NUL byte in file (is it a binary file?)");
    if (c < 0x80) {
      ++i;
      continue;
    }
    // Lead byte: how many continuation bytes follow, its payload bits, and
    // the smallest code point that needs this many bytes (to catch overlongs).
    int extra = 0;
    std::uint32_t cp = 0;
    std::uint32_t min_cp = 0;
    if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
      min_cp = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
      min_cp = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
      min_cp = 0x10000;
    }
    bool ok = extra > 0 && i + static_cast<std::size_t>(extra) < text.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (next & 0x3F);
    }
    if (ok && (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (!ok) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "invalid UTF-8 (byte 0x%02X); save the file as UTF-8", c);
      throw FileError(path, line, "", buf);
    }
    i += static_cast<std::size_t>(extra) + 1;
  }
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& path) : text_(text), path_(path) {
    root_.type = TomlType::kTable;
    root_.line = 1;
    table_ = &root_;
  }

  TomlValue Parse() {
    // A UTF-8 byte order mark is allowed and ignored.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    while (!AtEnd()) {
      SkipSpaces();
      if (AtEnd()) break;
      if (ConsumeNewline()) continue;
      const char c = Peek();
      if (c == '#') {
        ExpectLineEnd();
      } else if (c == '[') {
        ParseHeader();
      } else {
        ParseKeyValue();
      }
    }
    return std::move(root_);
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw FileError(path_, line_, "", message);
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool StartsWith(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }

  // What sits at the cursor, for "expected X, found Y" messages.
  std::string Describe() const {
    if (AtEnd()) return "end of file";
    const auto c = static_cast<unsigned char>(Peek());
    if (c == '\n' || c == '\r') return "end of line";
    if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02X", c);
    return buf;
  }

  void SkipSpaces() {
    while (Peek() == ' ' || Peek() == '\t') ++pos_;
  }

  bool ConsumeNewline() {
    if (Peek() == '\n') {
      ++pos_;
      ++line_;
      return true;
    }
    if (Peek() == '\r' && Peek(1) == '\n') {
      pos_ += 2;
      ++line_;
      return true;
    }
    return false;
  }

  // From '#' up to (not including) the end of the line.
  void SkipComment() {
    ++pos_;
    while (!AtEnd() && Peek() != '\n') {
      const auto c = static_cast<unsigned char>(Peek());
      if (c == '\r' && Peek(1) == '\n') break;
      if (IsForbiddenControl(c)) Fail("control character in comment");
      ++pos_;
    }
  }

  // Spaces, an optional comment, then a newline or the end of the file.
  void ExpectLineEnd() {
    SkipSpaces();
    if (Peek() == '#') SkipComment();
    if (AtEnd() || ConsumeNewline()) return;
    Fail("expected the end of the line, found " + Describe());
  }

  // Inside arrays: whitespace, newlines and comments.
  void SkipArraySpace() {
    for (;;) {
      SkipSpaces();
      if (ConsumeNewline()) continue;
      if (Peek() == '#') {
        SkipComment();
        continue;
      }
      return;
    }
  }

  static std::string JoinPath(const std::vector<std::string>& path) {
    std::string out;
    for (const auto& part : path) {
      if (!out.empty()) out += '.';
      out += TomlKey(part);
    }
    return out;
  }

  std::string ParseKeyPart() {
    const char c = Peek();
    if (c == '"') {
      if (StartsWith("\"\"\"")) Fail("a key cannot be a multi-line string");
      return ParseBasicString();
    }
    if (c == '\'') {
      if (StartsWith("'''")) Fail("a key cannot be a multi-line string");
      return ParseLiteralString();
    }
    const std::size_t start = pos_;
    while (IsBareKeyChar(Peek())) ++pos_;
    if (pos_ == start) Fail("expected a key, found " + Describe());
    return std::string(text_.substr(start, pos_ - start));
  }

  // key, "quoted key" or dotted.key.path; leaves the cursor after trailing spaces.
  std::vector<std::string> ParseKeyPath() {
    std::vector<std::string> path;
    for (;;) {
      SkipSpaces();
      path.push_back(ParseKeyPart());
      if (static_cast<int>(path.size()) > kMaxTomlDepth)
        Fail("key nested more than " + std::to_string(kMaxTomlDepth) + " levels deep");
      SkipSpaces();
      if (Peek() != '.') return path;
      ++pos_;
    }
  }

  static TomlEntry* FindEntry(TomlValue* table, const std::string& key) {
    for (auto& entry : table->entries) {
      if (entry.key == key) return &entry;
    }
    return nullptr;
  }

  static TomlEntry* AddTable(TomlValue* parent, const std::string& key, int line) {
    TomlEntry& entry = parent->entries.emplace_back();
    entry.key = key;
    entry.line = line;
    entry.value.type = TomlType::kTable;
    entry.value.line = line;
    return &entry;
  }

  std::string AlreadyDefined(const std::string& key, const TomlEntry& entry) const {
    return "'" + key + "' is already defined as " + TomlTypeName(entry.value.type) + " on line " +
           std::to_string(entry.line);
  }

  // [table] or [[array.of.tables]].
  void ParseHeader() {
    const int header_line = line_;
    const bool is_array = Peek(1) == '[';
    pos_ += is_array ? 2 : 1;
    SkipSpaces();
    if (Peek() == '[' || Peek() == ']')
      Fail(std::string("expected a table name after '") + (is_array ? "[[" : "[") + "', found " +
           Describe());
    const std::vector<std::string> path = ParseKeyPath();
    if (is_array) {
      if (Peek() != ']' || Peek(1) != ']') Fail("expected ']]' to close the table header");
      pos_ += 2;
    } else {
      if (Peek() != ']') Fail("expected ']' to close the table header, found " + Describe());
      ++pos_;
    }
    TomlValue* table = &root_;
    for (std::size_t k = 0; k + 1 < path.size(); ++k) {
      TomlEntry* entry = FindEntry(table, path[k]);
      if (entry == nullptr) entry = AddTable(table, path[k], header_line);
      if (entry->value.type == TomlType::kArray && entry->value.array_of_tables) {
        table = &entry->value.items.back();
      } else if (entry->value.type == TomlType::kTable) {
        table = &entry->value;
      } else {
        Fail(AlreadyDefined(path[k], *entry) + ", not a table");
      }
    }
    const std::string& last = path.back();
    TomlEntry* entry = FindEntry(table, last);
    if (is_array) {
      if (entry == nullptr) {
        entry = &table->entries.emplace_back();
        entry->key = last;
        entry->line = header_line;
        entry->value.type = TomlType::kArray;
        entry->value.line = header_line;
        entry->value.array_of_tables = true;
      } else if (entry->value.type != TomlType::kArray || !entry->value.array_of_tables) {
        Fail(AlreadyDefined(JoinPath(path), *entry) + "; cannot add [[" + JoinPath(path) +
             "]] tables to it");
      }
      TomlValue& added = entry->value.items.emplace_back();
      added.type = TomlType::kTable;
      added.line = header_line;
      added.defined_by_header = true;
      table_ = &added;
    } else {
      if (entry == nullptr) {
        entry = AddTable(table, last, header_line);
      } else if (entry->value.type != TomlType::kTable) {
        Fail(AlreadyDefined(JoinPath(path), *entry));
      } else if (entry->value.defined_by_header) {
        Fail("table [" + JoinPath(path) + "] is defined twice (first on line " +
             std::to_string(entry->value.line) + ")");
      }
      entry->value.defined_by_header = true;
      entry->value.line = header_line;
      table_ = &entry->value;
    }
    // Tables nest one level per path part; keys below them count from there.
    table_depth_ = static_cast<int>(path.size());
    ExpectLineEnd();
  }

  void ParseKeyValue() {
    const int key_line = line_;
    const std::vector<std::string> path = ParseKeyPath();
    if (Peek() != '=') Fail("expected '=' after key '" + JoinPath(path) + "', found " + Describe());
    ++pos_;
    SkipSpaces();
    const int depth = table_depth_ + static_cast<int>(path.size()) - 1;
    if (depth > kMaxTomlDepth)
      Fail("tables nested more than " + std::to_string(kMaxTomlDepth) + " levels deep");

    // Dotted keys make (or extend) sub-tables of the current table.
    TomlValue* table = table_;
    for (std::size_t k = 0; k + 1 < path.size(); ++k) {
      TomlEntry* entry = FindEntry(table, path[k]);
      if (entry == nullptr) entry = AddTable(table, path[k], key_line);
      if (entry->value.type != TomlType::kTable)
        Fail(AlreadyDefined(path[k], *entry) + ", not a table");
      table = &entry->value;
    }
    const std::string& last = path.back();
    if (const TomlEntry* existing = FindEntry(table, last)) {
      Fail("duplicate key '" + JoinPath(path) + "' (first defined on line " +
           std::to_string(existing->line) + ")");
    }
    TomlValue value = ParseValue(depth);
    ExpectLineEnd();
    TomlEntry& entry = table->entries.emplace_back();
    entry.key = last;
    entry.line = key_line;
    entry.value = std::move(value);
  }

  TomlValue ParseValue(int depth) {
    TomlValue value;
    value.line = line_;
    const char c = Peek();
    if (c == '"') {
      value.type = TomlType::kString;
      value.string_value = StartsWith("\"\"\"") ? ParseMultilineBasicString() : ParseBasicString();
    } else if (c == '\'') {
      value.type = TomlType::kString;
      value.string_value = StartsWith("'''") ? ParseMultilineLiteralString() : ParseLiteralString();
    } else if (c == '[') {
      return ParseArray(depth);
    } else if (c == '{') {
      Fail("inline tables { ... } are not supported; use a [table] header");
    } else {
      return ParseScalarToken();
    }
    return value;
  }

  TomlValue ParseArray(int depth) {
    if (depth + 1 > kMaxTomlDepth)
      Fail("arrays nested more than " + std::to_string(kMaxTomlDepth) + " levels deep");
    TomlValue array;
    array.type = TomlType::kArray;
    array.line = line_;
    ++pos_;
    for (;;) {
      SkipArraySpace();
      if (Peek() == ']') break;
      if (AtEnd()) Fail("unterminated array (opened on line " + std::to_string(array.line) + ")");
      array.items.push_back(ParseValue(depth + 1));
      SkipArraySpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == ']') break;
      if (AtEnd()) Fail("unterminated array (opened on line " + std::to_string(array.line) + ")");
      Fail("expected ',' or ']' in array, found " + Describe());
    }
    ++pos_;
    return array;
  }

  // Booleans, integers and floats: one token up to a delimiter.
  TomlValue ParseScalarToken() {
    TomlValue value;
    value.line = line_;
    const std::size_t start = pos_;
    while (!AtEnd()) {
      const char c = Peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#' || c == ',' || c == ']')
        break;
      ++pos_;
    }
    const std::string_view token = text_.substr(start, pos_ - start);
    if (token.empty()) Fail("expected a value, found " + Describe());
    if (token == "true" || token == "false") {
      value.type = TomlType::kBool;
      value.bool_value = token == "true";
      return value;
    }
    if (ParseInteger(token, &value.int_value)) {
      value.type = TomlType::kInteger;
      return value;
    }
    if (ParseFloat(token, &value.float_value)) {
      value.type = TomlType::kFloat;
      return value;
    }
    const std::string shown =
        token.size() > 40 ? std::string(token.substr(0, 40)) + "..." : std::string(token);
    if (token.find(':') != std::string_view::npos ||
        (token.size() >= 10 && token[4] == '-' && token[7] == '-' && IsDecimalDigit(token[0])))
      Fail("dates and times are not supported ('" + shown + "')");
    const char first = token[0];
    const bool word = std::all_of(token.begin(), token.end(), IsBareKeyChar);
    if (word && ((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z')))
      Fail("invalid value '" + shown + "' (strings need quotes: \"" + shown + "\")");
    Fail("invalid value '" + shown + "'");
  }

  // True when `token` is an integer; fails (throws) when it is one but overflows.
  bool ParseInteger(std::string_view token, std::int64_t* out) const {
    std::string digits;
    int base = 10;
    bool negative = false;
    if (token.size() > 2 && token[0] == '0' &&
        (token[1] == 'x' || token[1] == 'o' || token[1] == 'b')) {
      base = token[1] == 'x' ? 16 : token[1] == 'o' ? 8 : 2;
      bool (*is_digit)(char) = base == 16 ? IsHexDigit : base == 8 ? IsOctalDigit : IsBinaryDigit;
      if (!StripUnderscores(token.substr(2), is_digit, &digits)) return false;
    } else {
      std::string_view body = token;
      if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
        negative = body[0] == '-';
        body.remove_prefix(1);
      }
      if (!StripUnderscores(body, IsDecimalDigit, &digits)) return false;
      if (digits.size() > 1 && digits[0] == '0') return false;  // leading zeros
      if (negative) digits.insert(digits.begin(), '-');
    }
    std::int64_t parsed = 0;
    const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), parsed, base);
    if (result.ec == std::errc::result_out_of_range)
      Fail("integer '" + std::string(token) + "' does not fit in 64 bits");
    if (result.ec != std::errc() || result.ptr != digits.data() + digits.size()) return false;
    *out = parsed;
    return true;
  }

  bool ParseFloat(std::string_view token, double* out) const {
    std::string_view body = token;
    bool negative = false;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
      negative = body[0] == '-';
      body.remove_prefix(1);
    }
    if (body == "inf" || body == "nan") {
      const double v = body == "inf" ? std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::quiet_NaN();
      *out = negative ? -v : v;
      return true;
    }
    // int-part [. fraction] [e exponent], with a fraction or an exponent.
    const std::size_t exp_at = body.find_first_of("eE");
    const std::string_view mantissa = body.substr(0, exp_at);
    const std::size_t dot_at = mantissa.find('.');
    const std::string_view int_part = mantissa.substr(0, dot_at);
    std::string clean = negative ? "-" : "";
    std::string digits;
    if (!StripUnderscores(int_part, IsDecimalDigit, &digits)) return false;
    if (digits.size() > 1 && digits[0] == '0') return false;
    clean += digits;
    if (dot_at != std::string_view::npos) {
      digits.clear();
      if (!StripUnderscores(mantissa.substr(dot_at + 1), IsDecimalDigit, &digits)) return false;
      clean += "." + digits;
    }
    if (exp_at != std::string_view::npos) {
      std::string_view exponent = body.substr(exp_at + 1);
      clean += 'e';
      if (!exponent.empty() && (exponent[0] == '+' || exponent[0] == '-')) {
        if (exponent[0] == '-') clean += '-';
        exponent.remove_prefix(1);
      }
      digits.clear();
      if (!StripUnderscores(exponent, IsDecimalDigit, &digits)) return false;
      clean += digits;
    }
    if (dot_at == std::string_view::npos && exp_at == std::string_view::npos) return false;
    double parsed = 0;
    const auto result = std::from_chars(clean.data(), clean.data() + clean.size(), parsed);
    if (result.ec == std::errc::result_out_of_range)
      Fail("float '" + std::string(token) + "' is out of range");
    if (result.ec != std::errc() || result.ptr != clean.data() + clean.size()) return false;
    *out = parsed;
    return true;
  }

  std::uint32_t ParseHexDigits(int count) {
    std::uint32_t cp = 0;
    for (int k = 0; k < count; ++k) {
      const char c = Peek();
      if (!IsHexDigit(c)) Fail("\\u and \\U escapes need " + std::to_string(count) + " hex digits");
      cp =
          cp * 16 + static_cast<std::uint32_t>(IsDecimalDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
      ++pos_;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      char buf[80];
      std::snprintf(buf, sizeof buf, "escape \\u%X is not a Unicode scalar value", cp);
      Fail(buf);
    }
    return cp;
  }

  // After a backslash in a basic string.
  void ParseEscape(std::string* out) {
    const char c = Peek();
    ++pos_;
    switch (c) {
      case 'b': out->push_back('\b'); return;
      case 't': out->push_back('\t'); return;
      case 'n': out->push_back('\n'); return;
      case 'f': out->push_back('\f'); return;
      case 'r': out->push_back('\r'); return;
      case 'e': out->push_back('\x1b'); return;
      case '"': out->push_back('"'); return;
      case '\\': out->push_back('\\'); return;
      case 'u': AppendUtf8(ParseHexDigits(4), out); return;
      case 'U': AppendUtf8(ParseHexDigits(8), out); return;
      default:
        --pos_;
        Fail("invalid escape '\\" + (c == '\0' ? std::string() : std::string(1, c)) +
             "' in string");
    }
  }

  std::string ParseBasicString() {
    const int start_line = line_;
    ++pos_;
    std::string out;
    for (;;) {
      if (AtEnd() || Peek() == '\n' || (Peek() == '\r' && Peek(1) == '\n'))
        Fail("unterminated string (opened on line " + std::to_string(start_line) + ")");
      const char c = Peek();
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\\') {
        ++pos_;
        ParseEscape(&out);
        continue;
      }
      if (IsForbiddenControl(static_cast<unsigned char>(c)))
        Fail("control character in string; write it as an escape such as \\n or \\u0001");
      out.push_back(c);
      ++pos_;
    }
  }

  std::string ParseLiteralString() {
    const int start_line = line_;
    ++pos_;
    std::string out;
    for (;;) {
      if (AtEnd() || Peek() == '\n' || (Peek() == '\r' && Peek(1) == '\n'))
        Fail("unterminated string (opened on line " + std::to_string(start_line) + ")");
      const char c = Peek();
      if (c == '\'') {
        ++pos_;
        return out;
      }
      if (IsForbiddenControl(static_cast<unsigned char>(c))) Fail("control character in string");
      out.push_back(c);
      ++pos_;
    }
  }

  // Shared by """ and ''': `quote` is the delimiter character. A newline
  // right after the opening delimiter is not part of the string (TOML's
  // rule, and the reason TomlQuote escapes a leading newline instead).
  std::string ParseMultiline(char quote) {
    const int start_line = line_;
    pos_ += 3;
    ConsumeNewline();
    std::string out;
    for (;;) {
      if (AtEnd())
        Fail("unterminated multi-line string (opened on line " + std::to_string(start_line) + ")");
      const char c = Peek();
      if (c == quote) {
        std::size_t run = 0;
        while (Peek(run) == quote) ++run;
        if (run >= 3) {
          if (run > 5) Fail("too many quotes at the end of a multi-line string");
          out.append(run - 3, quote);
          pos_ += run;
          return out;
        }
        out.append(run, quote);
        pos_ += run;
        continue;
      }
      if (ConsumeNewline()) {
        out.push_back('\n');
        continue;
      }
      if (c == '\\' && quote == '"') {
        ++pos_;
        // A backslash ending a line trims the newline and the whitespace after it.
        std::size_t look = 0;
        while (Peek(look) == ' ' || Peek(look) == '\t') ++look;
        if (Peek(look) == '\n' || (Peek(look) == '\r' && Peek(look + 1) == '\n')) {
          pos_ += look;
          for (;;) {
            SkipSpaces();
            if (!ConsumeNewline()) break;
          }
          continue;
        }
        ParseEscape(&out);
        continue;
      }
      if (IsForbiddenControl(static_cast<unsigned char>(c))) Fail("control character in string");
      out.push_back(c);
      ++pos_;
    }
  }

  std::string ParseMultilineBasicString() { return ParseMultiline('"'); }
  std::string ParseMultilineLiteralString() { return ParseMultiline('\''); }

  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
  int line_ = 1;
  TomlValue root_;
  TomlValue* table_ = nullptr;  // where key = value lines go
  int table_depth_ = 0;
};

}  // namespace

const char* TomlTypeName(TomlType type) {
  switch (type) {
    case TomlType::kString: return "a string";
    case TomlType::kInteger: return "an integer";
    case TomlType::kFloat: return "a float";
    case TomlType::kBool: return "a boolean";
    case TomlType::kArray: return "an array";
    case TomlType::kTable: return "a table";
  }
  return "?";
}

const TomlEntry* TomlValue::Find(std::string_view key) const {
  for (const auto& entry : entries) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

TomlValue ParseToml(std::string_view text, const std::string& path_for_errors) {
  if (text.size() > kMaxTomlBytes)
    throw FileError(path_for_errors, 0, "", SizeMessage(text.size()));
  CheckEncoding(text, path_for_errors);
  return Parser(text, path_for_errors).Parse();
}

TomlValue LoadTomlFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found)
    throw FileError(path, 0, "", "no such file");
  if (ec) throw FileError(path, 0, "", "cannot read file: " + ec.message());
  if (status.type() != std::filesystem::file_type::regular)
    throw FileError(path, 0, "", "not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw FileError(path, 0, "", "cannot read file: " + ec.message());
  if (size > kMaxTomlBytes) throw FileError(path, 0, "", SizeMessage(size));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, 0, "", "cannot open file");
  // Read at most one byte past the limit, in case the file grew since file_size.
  std::string text(kMaxTomlBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw FileError(path, 0, "", "read error");
  return ParseToml(text, path);
}

std::string TomlQuote(std::string_view text) {
  // A TOML basic string has JSON's escapes (\b \t \n \f \r \" \\ \uXXXX),
  // and JsonQuote also escapes DEL, which TOML forbids raw.
  return JsonQuote(text);
}

std::string TomlKey(std::string_view key) {
  bool bare = !key.empty();
  for (const char c : key) bare = bare && IsBareKeyChar(c);
  return bare ? std::string(key) : TomlQuote(key);
}

std::string TomlNumber(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  // Whole numbers below 2^53 print as integers; everything else as the
  // shortest decimal that reads back bit-identical.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(value));
    return std::string(buf, r.ptr);
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  std::string text(buf, r.ptr);
  // to_chars may print "1e+20"-style text, which is valid TOML; a bare
  // mantissa always has a '.' or an exponent here since the value is not whole.
  return text;
}

}  // namespace shardlab
