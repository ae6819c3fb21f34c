#include "engine/core/units.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "engine/core/error.h"

namespace shardlab {
namespace {

constexpr Bytes kKiB = 1024;
constexpr Bytes kMiB = kKiB * 1024;
constexpr Bytes kGiB = kMiB * 1024;

/// The message of the Error that ParseSize throws for `text`, or "" if none.
std::string ParseError(std::string_view text, std::string_view what = "--size") {
  try {
    ParseSize(text, what);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "";
}

TEST(ParseSize, ReadsPlainBytes) {
  EXPECT_EQ(ParseSize("8"), 8);
  EXPECT_EQ(ParseSize("0"), 0);
  EXPECT_EQ(ParseSize("512B"), 512);
  EXPECT_EQ(ParseSize("123456789"), 123456789);
}

TEST(ParseSize, ReadsSingleLetterSuffixesAsBinaryLikeNcclTests) {
  EXPECT_EQ(ParseSize("64K"), 64 * kKiB);
  EXPECT_EQ(ParseSize("64M"), 64 * kMiB);
  EXPECT_EQ(ParseSize("1G"), kGiB);
  EXPECT_EQ(ParseSize("2T"), 2 * 1024 * kGiB);
  EXPECT_EQ(ParseSize("64m"), 64 * kMiB);
  EXPECT_EQ(ParseSize("1g"), kGiB);
}

TEST(ParseSize, ReadsIecSuffixesAsBinary) {
  EXPECT_EQ(ParseSize("4KiB"), 4 * kKiB);
  EXPECT_EQ(ParseSize("64MiB"), 64 * kMiB);
  EXPECT_EQ(ParseSize("1GiB"), kGiB);
  EXPECT_EQ(ParseSize("1.5GiB"), 3 * kGiB / 2);
}

TEST(ParseSize, ReadsVendorSuffixesAsDecimal) {
  EXPECT_EQ(ParseSize("1.6GB"), 1'600'000'000);
  EXPECT_EQ(ParseSize("512MB"), 512'000'000);
  EXPECT_EQ(ParseSize("4kB"), 4000);
  EXPECT_EQ(ParseSize("26GB"), 26'000'000'000);
  EXPECT_EQ(ParseSize("1TB"), 1'000'000'000'000);
}

TEST(ParseSize, AcceptsFractionsThatLandOnWholeBytes) {
  EXPECT_EQ(ParseSize("1.5K"), 1536);
  EXPECT_EQ(ParseSize(".5K"), 512);
  EXPECT_EQ(ParseSize("0.25M"), kMiB / 4);
  EXPECT_EQ(ParseSize("2."), 2);
}

TEST(ParseSize, AcceptsSpacesAroundTheUnitSoFormatBytesRoundTrips) {
  EXPECT_EQ(ParseSize("64 MiB"), 64 * kMiB);
  EXPECT_EQ(ParseSize("  8  "), 8);
  EXPECT_EQ(ParseSize(FormatBytes(64 * kMiB)), 64 * kMiB);
  EXPECT_EQ(ParseSize(FormatBytes(3 * kGiB)), 3 * kGiB);
}

TEST(ParseSize, RejectsUnknownUnitsNamingTheFlag) {
  const std::string message = ParseError("12Q");
  EXPECT_NE(message.find("--size"), std::string::npos) << message;
  EXPECT_NE(message.find("'Q'"), std::string::npos) << message;
  EXPECT_NE(ParseError("64MM"), "");
  EXPECT_NE(ParseError("1e9"), "");
  EXPECT_NE(ParseError("0x10"), "");
}

TEST(ParseSize, RejectsEmptyAndNonNumbers) {
  EXPECT_NE(ParseError("").find("missing size"), std::string::npos);
  EXPECT_NE(ParseError("   "), "");
  EXPECT_NE(ParseError("abc").find("not a size"), std::string::npos);
  EXPECT_NE(ParseError("."), "");
  EXPECT_NE(ParseError("K"), "");
  EXPECT_NE(ParseError("1.2.3"), "");
  EXPECT_NE(ParseError("+8"), "");
}

TEST(ParseSize, RejectsNegativeSizes) {
  EXPECT_NE(ParseError("-1").find("must not be negative"), std::string::npos);
  EXPECT_NE(ParseError("-64M"), "");
}

TEST(ParseSize, RejectsFractionsOfAByte) {
  EXPECT_NE(ParseError("1.5").find("whole number of bytes"), std::string::npos);
  EXPECT_NE(ParseError("1.6GiB"), "");  // 1717986918.4 B
  EXPECT_NE(ParseError("0.1K"), "");
}

TEST(ParseSize, RejectsSizesThatOverflow) {
  EXPECT_NE(ParseError("9223372036854775808").find("too large"), std::string::npos);
  EXPECT_EQ(ParseSize("9223372036854775807"), 9223372036854775807LL);
  EXPECT_NE(ParseError("99999999999T").find("too large"), std::string::npos);
  EXPECT_NE(ParseError("8388608T").find("too large"), std::string::npos);  // 2^63
  EXPECT_NE(ParseError(std::string(60, '9')).find("too large"), std::string::npos);
}

TEST(ParseSize, UsesTheCallersNameInMessages) {
  EXPECT_EQ(ParseError("x", "-b").rfind("-b: ", 0), 0u);
}

TEST(FormatBytes, WritesSmallSizesInBytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(8), "8 B");
  EXPECT_EQ(FormatBytes(1000), "1000 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
}

TEST(FormatBytes, WritesExactBinaryMultiplesAsIntegers) {
  EXPECT_EQ(FormatBytes(kKiB), "1 KiB");
  EXPECT_EQ(FormatBytes(64 * kMiB), "64 MiB");
  EXPECT_EQ(FormatBytes(kGiB), "1 GiB");
  EXPECT_EQ(FormatBytes(3 * kGiB), "3 GiB");
  EXPECT_EQ(FormatBytes(1024 * kGiB), "1 TiB");
}

TEST(FormatBytes, WritesOtherPowerOfTwoSizesWithThreeDigitsInBinaryUnits) {
  EXPECT_EQ(FormatBytes(3 * kGiB / 2), "1.50 GiB");
  EXPECT_EQ(FormatBytes(1536 * kKiB), "1.50 MiB");
}

TEST(FormatBytes, WritesOtherSizesWithThreeDigitsInDecimalUnits) {
  EXPECT_EQ(FormatBytes(1'600'000'000), "1.60 GB");
  EXPECT_EQ(FormatBytes(12'345), "12.3 kB");
  EXPECT_EQ(FormatBytes(512'000'000), "512 MB");
  EXPECT_EQ(FormatBytes(999'999), "1.00 MB");  // no "1000 kB"
  EXPECT_EQ(FormatBytes(99'960), "100 kB");    // no "100.0 kB"
}

TEST(FormatBytes, KeepsTheSignOfNegativeValues) {
  EXPECT_EQ(FormatBytes(-64 * kMiB), "-64 MiB");
}

TEST(FormatTime, PicksAUnitAndThreeSignificantDigits) {
  EXPECT_EQ(FormatTime(812), "812 ns");
  EXPECT_EQ(FormatTime(1.5), "1.50 ns");
  EXPECT_EQ(FormatTime(0), "0 ns");
  EXPECT_EQ(FormatTime(4'670'000), "4.67 ms");
  EXPECT_EQ(FormatTime(1.2e9), "1.20 s");
  EXPECT_EQ(FormatTime(12'300), "12.3 us");
  EXPECT_EQ(FormatTime(999.7), "1.00 us");
  EXPECT_EQ(FormatTime(7.5e12), "7500 s");
}

TEST(FormatTime, HandlesNegativeAndNonFiniteValues) {
  EXPECT_EQ(FormatTime(-812), "-812 ns");
  EXPECT_EQ(FormatTime(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(FormatTime(std::numeric_limits<double>::infinity()), "inf");
}

TEST(TransferNs, IsBytesOverGbps) {
  EXPECT_DOUBLE_EQ(TransferNs(300'000, 300), 1000);
  EXPECT_DOUBLE_EQ(TransferNs(100, 0), 0);
}

}  // namespace
}  // namespace shardlab
