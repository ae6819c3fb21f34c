// Inputs found by the fuzz targets (fuzz/, scripts/fuzz.sh), kept in
// tests/data/fuzz/: each once crashed a loader and must now be a clean Error.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "engine/core/error.h"
#include "engine/core/units.h"

namespace shardlab {
namespace {

std::string FuzzInput(const std::string& name) {
  std::ifstream in(std::string(SHARDLAB_TEST_DATA_DIR) + "/fuzz/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// ".000...0007000009334..." (over 128 digits after the point): the scale
// 10^digits wrapped to 0 in 128 bits and ParseSize divided by zero.
TEST(FuzzRegression, SizeWithHundredsOfFractionDigitsIsAnError) {
  const std::string text = FuzzInput("size_long_fraction_div_zero.txt");
  ASSERT_GT(text.size(), 128u);
  try {
    ParseSize(text);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too many digits after the point"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ParseSize("1." + std::string(200, '0') + "MiB"), Error);
  // Fractions that still fit keep working.
  EXPECT_EQ(ParseSize("1.5KiB"), 1536);
  EXPECT_EQ(ParseSize("0.50000000000000000000KiB"), 512);
}

}  // namespace
}  // namespace shardlab
