#include "engine/model/zero_memory.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/core/error.h"

namespace shardlab {

namespace {

/// Four significant digits of `value` (>= 1), trailing zeros of the
/// fraction dropped: 1.007, 31.41, 120, 7.5.
std::string FourDigits(double value, bool keep_zeros) {
  const int decimals = value >= 1000 ? 0 : value >= 100 ? 1 : value >= 10 ? 2 : 3;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string text = buf;
  if (!keep_zeros && text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

/// `value` scaled by 1000 until it is below 1000, with the unit reached.
std::string Scaled(double value, const char* const* units, int unit_count, bool keep_zeros,
                   const char* separator) {
  int unit = 0;
  // Rounding can carry 999.96 up to "1000.0": scale before that happens.
  while (unit + 1 < unit_count && value >= 999.95) {
    value /= 1000;
    ++unit;
  }
  if (unit == 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return std::string(buf) + separator + units[0];
  }
  return FourDigits(value, keep_zeros) + separator + units[unit];
}

}  // namespace

ZeroMemoryFormula ZeroMemoryPerGpu(double psi, int ranks, int stage, int k) {
  const double n = ranks > 0 ? ranks : 1;
  ZeroMemoryFormula f;
  f.parameters = stage >= 3 ? 2 * psi / n : 2 * psi;
  f.gradients = stage >= 2 ? 2 * psi / n : 2 * psi;
  f.optimizer_states = stage >= 1 ? k * psi / n : k * psi;
  return f;
}

std::string ZeroMemoryFormulaText(int stage, int k) {
  const std::string ks = std::to_string(k);
  switch (stage) {
    case 0: return "(2+2+" + ks + ")Ψ";
    case 1: return "4Ψ + " + ks + "Ψ/N";
    case 2: return "2Ψ + (2+" + ks + ")Ψ/N";
    case 3: return "(4+" + ks + ")Ψ/N";
  }
  return "?";
}

double ParseParameterCount(const std::string& text) {
  auto fail = [&]() -> double {
    throw Error("params: '" + text + "' is not a parameter count (e.g. 175B, 7.5B, 350M, 125k)",
                ErrorKind::kInvalidInput);
  };
  if (text.empty() || text.find_first_of("xXpP") != std::string::npos) return fail();  // no hex
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value <= 0) return fail();
  std::string suffix(end);
  double scale = 1;
  if (suffix.size() == 1) {
    switch (std::tolower(static_cast<unsigned char>(suffix[0]))) {
      case 'k': scale = 1e3; break;
      case 'm': scale = 1e6; break;
      case 'b': scale = 1e9; break;
      case 't': scale = 1e12; break;
      default: return fail();
    }
  } else if (!suffix.empty()) {
    return fail();
  }
  const double count = value * scale;
  if (count < 1 || count > 1e15) return fail();
  if (std::fabs(count - std::round(count)) > 1e-6 * count) {
    throw Error("params: '" + text + "' is not a whole number of parameters", ErrorKind::kInvalidInput);
  }
  return std::round(count);
}

std::string ZeroStageName(int stage) {
  if (stage == 0) return "data parallel";
  return "ZeRO-" + std::to_string(stage);
}

std::string ZeroStageSharding(int stage) {
  switch (stage) {
    case 0: return "nothing sharded: every rank holds all model states";
    case 1: return "optimizer states sharded";
    case 2: return "optimizer states and gradients sharded";
    case 3: return "optimizer states, gradients and parameters sharded";
  }
  return "";
}

std::string ParameterCountText(double count) {
  static const char* const kUnits[] = {"", "k", "M", "B", "T", "P"};
  return Scaled(count, kUnits, 6, /*keep_zeros=*/false, "");
}

std::string ModelBytesText(double bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  return Scaled(bytes, kUnits, 6, /*keep_zeros=*/true, " ");
}

}  // namespace shardlab
