#include "engine/verify/bounds.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "engine/core/backend_traits.h"

namespace shardlab {

double UnitRoundoff(DType dtype) {
  switch (dtype) {
    case DType::kF16: return std::ldexp(1.0, -11);
    case DType::kBF16: return std::ldexp(1.0, -8);
    case DType::kF32: break;
  }
  return std::ldexp(1.0, -24);
}

double Gamma(std::int64_t k, double unit_roundoff) {
  const double ku = static_cast<double>(k) * unit_roundoff;
  if (ku >= 1) return std::numeric_limits<double>::infinity();
  return ku / (1 - ku);
}

DType ComputeDType(const char* backend_name, DType stored) {
  if (backend_name == nullptr) return stored;
  return BackendTraitsOrDefault(backend_name).computes_in_float32 ? DType::kF32 : stored;
}

double RoundTo(DType dtype, double value) {
  if (dtype == DType::kF32) return static_cast<double>(static_cast<float>(value));
  if (!std::isfinite(value) || value == 0) return value;
  // Significand bits (with the leading one) and the smallest normal exponent.
  const int bits = dtype == DType::kF16 ? 11 : 8;
  const int min_exp = dtype == DType::kF16 ? -14 : -126;
  const double max_finite = dtype == DType::kF16 ? 65504.0 : std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
  int exp = 0;
  std::frexp(value, &exp);  // value = f·2^exp, 0.5 ≤ |f| < 1
  exp = std::max(exp - 1, min_exp);  // subnormals share the smallest exponent's spacing
  const double ulp = std::ldexp(1.0, exp - (bits - 1));
  const double rounded = std::nearbyint(value / ulp) * ulp;  // ties to even (default mode)
  if (std::fabs(rounded) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), value);
  return rounded;
}

std::vector<double> ProductBound(std::span<const double> a, std::span<const double> b,
                                 std::int64_t m, std::int64_t k, std::int64_t n,
                                 double unit_roundoff) {
  std::vector<double> bound(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) {
      const double aip = std::fabs(a[static_cast<std::size_t>(i * k + p)]);
      const double* b_row = b.data() + p * n;
      double* out = bound.data() + i * n;
      for (std::int64_t j = 0; j < n; ++j) out[j] += aip * std::fabs(b_row[j]);
    }
  // The bound of |A|·|B| computed in double is itself rounded: γ_k of double
  // on top, far below the fp32 γ_k but counted.
  const double g = Gamma(k, unit_roundoff) * (1 + Gamma(k + 1, std::ldexp(1.0, -53)));
  for (double& v : bound) v *= g;
  return bound;
}

}  // namespace shardlab
