#include "engine/core/units.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "engine/core/error.h"

namespace shardlab {
namespace {

// Exact arithmetic for "1.6GB"-style input; __extension__ keeps -Wpedantic quiet.
__extension__ typedef unsigned __int128 U128;

constexpr std::string_view kSizeExamples = "use e.g. 8, 64K, 64M, 1G, 1.6GB, 4KiB";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

/// Bytes per unit for a suffix, or 0 when the suffix is not a unit.
/// Single letters follow nccl-tests (binary, any case); "kB"/"MB"/... are
/// decimal as disk and network vendors use them; "KiB"/"MiB"/... binary.
std::int64_t UnitMultiplier(std::string_view unit) {
  struct Unit { std::string_view name; std::int64_t bytes; };
  static constexpr std::int64_t kKi = 1024;
  static constexpr Unit kUnits[] = {
      {"", 1},                 {"b", 1},
      {"k", kKi},              {"m", kKi * kKi},
      {"g", kKi * kKi * kKi},  {"t", kKi * kKi * kKi * kKi},
      {"p", kKi * kKi * kKi * kKi * kKi},
      {"kib", kKi},            {"mib", kKi * kKi},
      {"gib", kKi * kKi * kKi}, {"tib", kKi * kKi * kKi * kKi},
      {"pib", kKi * kKi * kKi * kKi * kKi},
      {"kb", 1000},            {"mb", 1000 * 1000},
      {"gb", 1000 * 1000 * 1000}, {"tb", 1000LL * 1000 * 1000 * 1000},
      {"pb", 1000LL * 1000 * 1000 * 1000 * 1000},
  };
  for (const Unit& u : kUnits) {
    if (EqualsIgnoreCase(unit, u.name)) return u.bytes;
  }
  return 0;
}

std::string Quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

/// Three significant digits: "812", "4.67", "12.3".
std::string ThreeDigits(double value) {
  char buf[32];
  const double magnitude = std::fabs(value);
  // Thresholds sit where rounding would add a digit ("99.96" -> "100").
  if (magnitude >= 99.95 || magnitude == 0) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else if (magnitude >= 9.995) {
    std::snprintf(buf, sizeof buf, "%.1f", value);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f", value);
  }
  return buf;
}

/// Picks the largest unit in `units` (ascending, each `step` times the one
/// before) that keeps the value >= 1 after rounding to three digits.
std::string ScaledText(double value, double step, const char* const* units, int unit_count) {
  int u = 0;
  // 999.7 rounds to "1000": move up a unit so the text reads "1.00 k".
  while (u + 1 < unit_count && value >= step - 0.5) {
    value /= step;
    ++u;
  }
  return ThreeDigits(value) + " " + units[u];
}

/// ParseSize without exceptions: false and a message (without `what`) on bad input.
bool TryParseSize(std::string_view text, Bytes* out, std::string* error) {
  const std::string_view s = Trim(text);
  if (s.empty()) {
    *error = "missing size (" + std::string(kSizeExamples) + ")";
    return false;
  }
  if (s.front() == '-') {
    *error = "must not be negative (got " + Quoted(s) + ")";
    return false;
  }

  // Mantissa: digits with an optional fraction, kept exact as
  // integer / 10^frac_digits so "1.6GB" is exactly 1600000000.
  std::size_t i = 0;
  U128 mantissa = 0;
  int int_digits = 0;
  int frac_digits = 0;
  constexpr U128 kMantissaCap = static_cast<U128>(1) << 100;
  bool too_long = false;
  while (i < s.size() && IsDigit(s[i])) {
    mantissa = mantissa * 10 + static_cast<unsigned>(s[i] - '0');
    if (mantissa > kMantissaCap) too_long = true;
    ++int_digits;
    ++i;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) {
      mantissa = mantissa * 10 + static_cast<unsigned>(s[i] - '0');
      if (mantissa > kMantissaCap) too_long = true;
      ++frac_digits;
      ++i;
    }
  }
  if (int_digits == 0 && frac_digits == 0) {
    *error = "not a size: " + Quoted(s) + " (" + std::string(kSizeExamples) + ")";
    return false;
  }
  const std::string_view unit = Trim(s.substr(i));
  const std::int64_t multiplier = UnitMultiplier(unit);
  if (multiplier == 0) {
    *error = "unknown unit " + Quoted(unit) + " in " + Quoted(s) + " (" +
             std::string(kSizeExamples) + ")";
    return false;
  }
  if (too_long) {
    *error = Quoted(s) + " is too large";
    return false;
  }

  // 10^frac_digits must fit in 128 bits (10^38 does; 10^128 wraps to 0).
  if (frac_digits > 30) {
    *error = Quoted(s) + " has too many digits after the point";
    return false;
  }
  U128 scale = 1;
  for (int d = 0; d < frac_digits; ++d) scale *= 10;
  const U128 numerator = mantissa * static_cast<U128>(multiplier);
  if (numerator % scale != 0) {
    *error = Quoted(s) + " is not a whole number of bytes";
    return false;
  }
  const U128 bytes = numerator / scale;
  if (bytes > static_cast<U128>(std::numeric_limits<Bytes>::max())) {
    *error = Quoted(s) + " is too large";
    return false;
  }
  *out = static_cast<Bytes>(bytes);
  return true;
}

/// True when `text` parses back to exactly `bytes`.
bool SaysExactly(const std::string& text, Bytes bytes) {
  Bytes parsed = 0;
  std::string ignored;
  return TryParseSize(text, &parsed, &ignored) && parsed == bytes;
}

}  // namespace

Bytes ParseSize(std::string_view text, std::string_view what) {
  Bytes bytes = 0;
  std::string error;
  if (!TryParseSize(text, &bytes, &error)) {
    throw Error(std::string(what) + ": " + error, ErrorKind::kInvalidInput);
  }
  return bytes;
}

std::string FormatBytes(Bytes bytes) {
  if (bytes < 0) {
    // -(min) overflows; no real size gets there, but keep the text sane.
    if (bytes == std::numeric_limits<Bytes>::min()) return "-8 EiB";
    return "-" + FormatBytes(-bytes);
  }
  if (bytes < 1024) return std::to_string(bytes) + " B";

  static const char* const kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  static const char* const kDecimal[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int unit = 0;
  Bytes unit_bytes = 1;
  while (unit + 1 < 7 && bytes / unit_bytes >= 1024) {
    unit_bytes *= 1024;
    ++unit;
  }
  // An exact multiple of its binary unit reads best as such: "64 MiB".
  if (bytes % unit_bytes == 0) return std::to_string(bytes / unit_bytes) + " " + kBinary[unit];
  // Otherwise three digits, in whichever units say the size exactly
  // ("1.60 GB", "1.50 GiB"); decimal when neither does.
  const std::string decimal = ScaledText(static_cast<double>(bytes), 1000.0, kDecimal, 7);
  if (SaysExactly(decimal, bytes)) return decimal;
  const std::string binary = ScaledText(static_cast<double>(bytes), 1024.0, kBinary, 7);
  if (SaysExactly(binary, bytes)) return binary;
  return decimal;
}

std::string FormatTime(TimeNs ns) {
  if (std::isnan(ns)) return "nan";
  if (std::isinf(ns)) return ns > 0 ? "inf" : "-inf";
  if (ns < 0) return "-" + FormatTime(-ns);
  static const char* const kUnits[] = {"ns", "us", "ms", "s"};
  return ScaledText(ns, 1000.0, kUnits, 4);
}

std::string FormatFixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string FormatGbps(double gbps) {
  char buf[64];
  std::snprintf(buf, sizeof buf, gbps >= 10 ? "%.1f" : "%.2f", gbps);
  std::string text = buf;
  while (text.find('.') != std::string::npos && (text.back() == '0' || text.back() == '.')) {
    const bool dot = text.back() == '.';
    text.pop_back();
    if (dot) break;
  }
  return text;
}

}  // namespace shardlab
