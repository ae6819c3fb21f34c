// The tensor-parallel layers (engine/model/tp_layer.h) computed in double
// with a bound for every element of the output y, the input gradient dx and
// every weight gradient, in the σ model of bounds.h. The rules, beside the
// product's (σ² through W², c_k·Σ terms² for the rounding of length k):
//
//   sums, bias, residual   σ² adds; one rounding (u·result)²
//   column sum (k rows)    Σσ² + c_k·Σ terms²
//   relu                   as mlp_bounds.h: σ kept where z > −λσz; in the
//                          backward a switch within λσz of 0 costs
//                          (|g| + λσg)², in full
//   softmax (n columns)    dp_j = p_j·(ds_j − Σ p_i·ds_i):
//                          σp_j² ≤ 2·p_j²·(σs_j² + Σ p_i²·σs_i²) + ((n + 5)·u·p_j)²
//   softmax backward       ds_j = p_j·(dp_j − Σ dp·p), both factors with error:
//                          (a + b + c)² ≤ 3(a² + b² + c²) for each term
//   layer norm             dy = rstd·(dx − mean(dx) − ŷ·mean(ŷ·dx)), again
//                          with the 3(a² + b² + c²) rule, and the rounding
//                          of the row's mean and variance (length-n sums)
//   layer norm backward    the same rule on dy, plus the input's own error
//                          through ŷ and rstd, first order
//
// Where two errors are not independent (the softmax's sum contains p_j's
// own term) the rule adds their squares as if they were, and the factor 2
// or 3 covers the correlation (|a + b|² ≤ 2(a² + b²)).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/tp_layer.h"

namespace shardlab {

struct TpBoundedTensor {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> value, bound;
};

class TpBoundedReference {
 public:
  /// `unit_roundoff`: of the dtype the backend computes in.
  TpBoundedReference(const TpLayerConfig& config, std::uint64_t seed, double unit_roundoff);
  /// "y", "dx", "dA", "db", ... (the names of TpLayerReference); throws
  /// std::out_of_range for a name the layer does not have.
  const TpBoundedTensor& tensor(const std::string& name) const;

 private:
  std::vector<std::pair<std::string, TpBoundedTensor>> tensors_;
};

}  // namespace shardlab
