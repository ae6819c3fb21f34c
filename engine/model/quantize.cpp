#include "engine/model/quantize.h"

#include <algorithm>
#include <cmath>

namespace shardlab {

std::vector<double> QuantizeInt8PerChannel(const std::vector<double>& w, std::int64_t rows, std::int64_t cols,
                                           std::vector<double>* scales) {
  std::vector<double> s(static_cast<std::size_t>(cols), 0.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      s[static_cast<std::size_t>(j)] = std::max(s[static_cast<std::size_t>(j)], std::abs(w[static_cast<std::size_t>(i * cols + j)]));
  for (double& v : s) v /= 127.0;
  std::vector<double> out(w.size());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::size_t at = static_cast<std::size_t>(i * cols + j);
      const double sj = s[static_cast<std::size_t>(j)];
      out[at] = sj > 0 ? std::clamp(std::nearbyint(w[at] / sj), -127.0, 127.0) * sj : 0.0;
    }
  if (scales != nullptr) *scales = std::move(s);
  return out;
}

std::int64_t Int8MatrixBytes(std::int64_t rows, std::int64_t cols) { return rows * cols + 2 * cols; }

}  // namespace shardlab
