// Small pieces of the readers' pages: counts in words, lists of ranks,
// columns padded to a width.
#pragma once

#include <string>
#include <vector>

#include "engine/core/json.h"

namespace shardlab {

/// "1 GPU", "8 GPUs", "0 NVLinks"; `plural` when it is not `singular` + "s".
std::string Count(long n, const std::string& singular, const std::string& plural = "");

/// "0 7 6 5"
std::string JoinInts(const std::vector<int>& values, const char* separator = " ");

/// As JoinInts, but a long list shows its first 16 and last 4 values around
/// "... (N in all) ...", so that a page stays readable at a thousand ranks.
std::string JoinIntsShort(const std::vector<int>& values);

/// `text` padded with spaces to `width` (or left as is when longer).
std::string Pad(const std::string& text, std::size_t width);

/// A number as the pages print it: "100", "12.5", "0.04".
std::string Number(double value);

/// `values` as a JSON array of integers.
void JsonInts(JsonWriter& json, const std::vector<int>& values);

}  // namespace shardlab
