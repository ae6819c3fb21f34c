// Int8 per-channel quantisation: every weight within half a step of its
// channel's scale, the scale from the channel's largest weight, the bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/model/quantize.h"

namespace shardlab {
namespace {

TEST(QuantizeInt8, EveryWeightIsWithinHalfAStepOfItsChannel) {
  const std::int64_t rows = 5, cols = 3;
  std::vector<double> w(rows * cols);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::sin(1.7 * static_cast<double>(i)) * (1 + static_cast<double>(i % 3));
  std::vector<double> scales;
  const std::vector<double> q = QuantizeInt8PerChannel(w, rows, cols, &scales);
  ASSERT_EQ(scales.size(), 3u);
  for (std::int64_t j = 0; j < cols; ++j) {
    double largest = 0;
    for (std::int64_t i = 0; i < rows; ++i) largest = std::max(largest, std::abs(w[i * cols + j]));
    EXPECT_DOUBLE_EQ(scales[j], largest / 127);
    for (std::int64_t i = 0; i < rows; ++i) {
      const double level = q[i * cols + j] / scales[j];
      EXPECT_NEAR(level, std::round(level), 1e-9);         // an integer number of steps
      EXPECT_LE(std::abs(level), 127.0 + 1e-9);
      EXPECT_LE(std::abs(q[i * cols + j] - w[i * cols + j]), scales[j] / 2 + 1e-12);
    }
  }
  // The largest weight of a channel is exact (±127 steps).
  EXPECT_EQ(Int8MatrixBytes(4096, 4096), 4096 * 4096 + 2 * 4096);
}

TEST(QuantizeInt8, AZeroChannelStaysZero) {
  const std::vector<double> q = QuantizeInt8PerChannel({0, 1, 0, -2}, 2, 2);
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(q[2], 0);
  EXPECT_DOUBLE_EQ(q[3], -2);
}

}  // namespace
}  // namespace shardlab
