#include "engine/core/fill.h"

namespace shardlab {

// SplitMix64's finalizer: a good 64-bit mix, cheap, and counter-based so any
// element can be regenerated without the ones before it.
static std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

float InputValue(std::uint64_t seed, std::int64_t stream, std::int64_t index) {
  const std::uint64_t h =
      Mix(seed ^ Mix(static_cast<std::uint64_t>(stream) * 0x100000001b3ull ^
                     Mix(static_cast<std::uint64_t>(index))));
  const int k = static_cast<int>(h % 2048) - 1024;  // [-1024, 1024)
  return static_cast<float>(k) / 1024.0f;
}

void FillInputs(std::span<float> out, std::uint64_t seed, std::int64_t stream) {
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = InputValue(seed, stream, static_cast<std::int64_t>(i));
}

}  // namespace shardlab
