#include "engine/algorithms/collective_cost.h"

#include <cstdio>

#include "engine/algorithms/collective.h"

namespace shardlab {

TimeNs RingAllReduceNs(Bytes bytes, int n, Gbps gbps, TimeNs alpha_ns) {
  if (n <= 1 || gbps <= 0) return 0;
  // GB/s is bytes per ns.
  return 2.0 * (n - 1) / n * static_cast<double>(bytes) / gbps + 2.0 * (n - 1) * alpha_ns;
}

namespace {

/// Three significant digits, no exponent: "8.39", "300", "1200".
std::string ThreeDigits(double value) {
  char text[32];
  if (value >= 999.5) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.3g", value);
  }
  return text;
}

}  // namespace

std::string FormulaBytes(double bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int unit = 0;
  while (bytes >= 999.5 && unit < 5) {
    bytes /= 1000.0;
    ++unit;
  }
  return ThreeDigits(bytes) + " " + kUnits[unit];
}

std::string FormulaGbps(Gbps gbps) { return ThreeDigits(gbps) + " GB/s"; }

CollectiveCost RingStepsCost(const CollectiveParams& params, TimeNs alpha_ns, Gbps gbps,
                             bool twice, const char* note) {
  const int n = params.ranks;
  const double m = static_cast<double>(CollectiveSizeBytes(params));
  const double piece = m / n;
  const TimeNs step_ns = alpha_ns + piece / gbps;
  const std::string step_text =
      "(" + FormatTime(alpha_ns) + " + " + FormulaBytes(piece) + " / " + FormulaGbps(gbps) + ")";
  CollectiveCost cost;
  cost.ns = twice ? 2.0 * (n - 1) * step_ns : (n - 1) * step_ns;
  cost.formula = std::string(twice ? "2(n-1)" : "(n-1)") + "·(α + M/(n·B))" + note + " = " +
                 (twice ? "2·" : "") + std::to_string(n - 1) + "·" + step_text;
  return cost;
}

CollectiveCost CollectiveCostWithTotal(CollectiveCost cost) {
  cost.formula += " = " + FormatTime(cost.ns);
  return cost;
}

}  // namespace shardlab
