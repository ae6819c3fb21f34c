#include "engine/field/inspect_text.h"

#include <cmath>
#include <cstdio>

namespace shardlab {

std::string Count(long n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : (plural.empty() ? singular + "s" : plural));
}

std::string JoinInts(const std::vector<int>& values, const char* separator) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? separator : "") + std::to_string(values[i]);
  return text;
}

std::string JoinIntsShort(const std::vector<int>& values) {
  constexpr std::size_t kHead = 16, kTail = 4;
  if (values.size() <= kHead + kTail + 1) return JoinInts(values);
  const std::vector<int> head(values.begin(), values.begin() + kHead);
  const std::vector<int> tail(values.end() - kTail, values.end());
  return JoinInts(head) + " ... (" + std::to_string(values.size()) + " in all) ... " + JoinInts(tail);
}

std::string Pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string Number(double value) {
  char buffer[64];
  if (std::fabs(value - std::round(value)) < 1e-9 && std::fabs(value) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
  }
  return buffer;
}

void JsonInts(JsonWriter& json, const std::vector<int>& values) {
  json.BeginArray();
  for (int v : values) json.Int(v);
  json.EndArray();
}

}  // namespace shardlab
