// Deterministic input data that every backend fills identically.
#pragma once

#include <cstdint>
#include <span>

namespace shardlab {

/// Fills `out` with values k/1024 for integer k in [-1024, 1024), from a
/// counter-based hash of (seed, stream, index). Sums of up to 2^13 such
/// values are exact in float32 whatever the order, so a correct reduction
/// compares equal to its reference; any other value is a real error.
void FillInputs(std::span<float> out, std::uint64_t seed, std::int64_t stream);

/// The value FillInputs puts at `index` (for references that do not hold
/// whole buffers).
float InputValue(std::uint64_t seed, std::int64_t stream, std::int64_t index);

}  // namespace shardlab
