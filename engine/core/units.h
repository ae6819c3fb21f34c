// Units used across the engine. Names carry the unit (`size_bytes`,
// `start_ns`, `link_gbps`); these aliases say what a number is.
//
// One identity makes the arithmetic simple: 1 GB/s (10^9 bytes per second,
// as nccl-tests counts) is exactly 1 byte per nanosecond, so
// `time_ns = bytes / gbps`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace shardlab {

using Bytes = std::int64_t;   // a count of bytes
using TimeNs = double;        // nanoseconds since the run began
using Gbps = double;          // gigabytes (10^9 B) per second == bytes per ns
using Flops = double;         // floating-point operations

/// Time to move `bytes` at `gbps` (GB/s), in ns.
inline TimeNs TransferNs(Bytes bytes, Gbps gbps) {
  return gbps > 0 ? static_cast<double>(bytes) / gbps : 0.0;
}

/// Parses a size like nccl-tests does: "8", "64K", "64M", "1G" (binary:
/// K = 1024), plus "1.6GB" / "512MB" (decimal) and "4KiB" (binary).
/// Throws shardlab::Error naming `what` on anything else ("12Q", "0" is
/// accepted here; callers decide whether zero is allowed).
Bytes ParseSize(std::string_view text, std::string_view what = "size");

/// "64 MiB", "1.60 GB"-style text for humans: binary units for exact powers,
/// otherwise three significant digits.
std::string FormatBytes(Bytes bytes);

/// "4.67 ms", "812 ns", "1.20 s".
std::string FormatTime(TimeNs ns);

/// `value` with `digits` digits after the point: FormatFixed(0.3751, 3) is "0.375".
std::string FormatFixed(double value, int digits);

/// GB/s as prose, not a column: "300", "292.7", "12.5", "0.04".
std::string FormatGbps(double gbps);

}  // namespace shardlab
