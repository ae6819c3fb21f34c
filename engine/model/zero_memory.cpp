#include "engine/model/zero_memory.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "engine/core/error.h"

namespace shardlab {

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

}  // namespace shardlab
