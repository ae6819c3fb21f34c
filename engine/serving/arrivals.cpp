#include "engine/serving/arrivals.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/fill.h"

namespace shardlab {
namespace {

[[noreturn]] void Fail(const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); }

constexpr std::int64_t kArrivalStreams = std::int64_t{7} << 41;

// A uniform number in (0, 1) from the seeded stream (two InputValues: 2^22 levels).
double Uniform(std::uint64_t seed, std::int64_t stream, std::int64_t index) {
  const double hi = (InputValue(seed, stream, 2 * index) + 1.0) * 1024.0;      // 0..2047
  const double lo = (InputValue(seed, stream, 2 * index + 1) + 1.0) * 1024.0;  // 0..2047
  return (hi * 2048.0 + lo + 0.5) / (2048.0 * 2048.0);
}

int Length(std::uint64_t seed, std::int64_t stream, int index, int mean) {
  const int lo = std::max(1, mean / 2), hi = std::max(lo, mean + mean / 2);
  return lo + std::min(hi - lo, static_cast<int>(Uniform(seed, stream, index) * (hi - lo + 1)));
}

}  // namespace

void CheckArrivalSpec(const ArrivalSpec& s) {
  if (!(s.rate_per_s > 0) || !std::isfinite(s.rate_per_s))
  {
    std::ostringstream rate;
    rate << s.rate_per_s;
    Fail("rate: " + rate.str() + " requests/s: the rate must be above 0");
  }
  if (s.requests < 1 || s.requests > 10'000'000) Fail("requests: " + std::to_string(s.requests) + " is outside 1..10000000");
  if (s.prompt_mean < 1 || s.prompt_mean > 1'000'000) Fail("prompt-mean: " + std::to_string(s.prompt_mean) + " is outside 1..1000000");
  if (s.output_mean < 1 || s.output_mean > 1'000'000) Fail("output-mean: " + std::to_string(s.output_mean) + " is outside 1..1000000");
  if (s.prefix_tokens < 0) Fail("prefix-tokens: " + std::to_string(s.prefix_tokens) + " must be 0 or more");
}

std::vector<RequestArrival> GenerateArrivals(const ArrivalSpec& s) {
  CheckArrivalSpec(s);
  std::vector<RequestArrival> out(static_cast<std::size_t>(s.requests));
  double t_s = 0;
  for (int i = 0; i < s.requests; ++i) {
    RequestArrival& r = out[static_cast<std::size_t>(i)];
    r.id = i;
    if (i > 0) t_s += -std::log(Uniform(s.seed, kArrivalStreams, i)) / s.rate_per_s;  // exponential gaps
    r.arrival_ns = static_cast<TimeNs>(std::llround(t_s * 1e9));
    r.prompt = Length(s.seed, kArrivalStreams + 1, i, s.prompt_mean) + s.prefix_tokens;
    r.output = Length(s.seed, kArrivalStreams + 2, i, s.output_mean);
    if (s.prefix_tokens > 0) {
      r.prefix_group = 0;
      r.prefix_tokens = s.prefix_tokens;
    }
  }
  return out;
}

std::vector<RequestArrival> ParseRequestFile(const std::string& text, const std::string& path, int prefix_tokens) {
  std::vector<RequestArrival> out;
  std::map<std::string, int> groups;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  TimeNs last = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = path + ":" + std::to_string(number) + ":";
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty()) continue;
    if (w.size() < 3 || w.size() > 4)
      Fail(where + "request: expected 'arrival_ms prompt output [prefix]', got " + std::to_string(w.size()) + " fields");
    RequestArrival r;
    r.id = static_cast<int>(out.size());
    double ms = 0;
    const auto [p, ec] = std::from_chars(w[0].data(), w[0].data() + w[0].size(), ms);
    if (ec != std::errc() || p != w[0].data() + w[0].size() || !std::isfinite(ms))
      Fail(where + "arrival_ms: '" + w[0] + "' is not a number");
    if (ms < 0) Fail(where + "arrival_ms: " + w[0] + " is negative");
    r.arrival_ns = static_cast<TimeNs>(std::llround(ms * 1e6));
    if (r.arrival_ns < last) Fail(where + "arrival_ms: " + w[0] + " is earlier than the line before (sort by arrival)");
    last = r.arrival_ns;
    auto whole = [&](const std::string& word, const char* field) {
      int v = 0;
      const auto [q, e] = std::from_chars(word.data(), word.data() + word.size(), v);
      if (e != std::errc() || q != word.data() + word.size()) Fail(where + field + ": '" + word + "' is not a whole number");
      if (v < 1) Fail(where + field + ": " + word + " must be at least 1");
      return v;
    };
    r.prompt = whole(w[1], "prompt");
    r.output = whole(w[2], "output");
    if (w.size() == 4) {
      const auto [it, added] = groups.emplace(w[3], static_cast<int>(groups.size()));
      r.prefix_group = it->second;
      r.prefix_tokens = std::min(prefix_tokens, r.prompt);
    }
    out.push_back(r);
  }
  if (out.empty()) Fail(path + ":" + std::to_string(std::max(number, 1)) + ":request: the file has no requests");
  return out;
}

std::vector<RequestArrival> LoadRequestFile(const std::string& path, int prefix_tokens) {
  std::ifstream in(path);
  if (!in) Fail("requests-file: cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseRequestFile(text.str(), path, prefix_tokens);
}

}  // namespace shardlab
