// Requests arriving at a server: a seeded arrival process (Poisson at a
// rate, prompt and output lengths uniform around their means, an optional
// shared prompt prefix) or a small request file. Every batching policy is
// run on the same list, so their latencies compare request by request.
//
// A request file has one request a line, '#' starts a comment:
//
//   # arrival_ms  prompt  output  [prefix]
//   0             32      16
//   2.5           40      8       system     (requests naming one prefix share
//                                              its first --prefix-tokens tokens)
//
// Errors name the place: "reqs.txt:3:prompt: 'x' is not a whole number".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/units.h"

namespace shardlab {

struct RequestArrival {
  int id = 0;
  TimeNs arrival_ns = 0;
  int prompt = 1;        // prompt tokens (prefill)
  int output = 1;        // tokens to generate (the first comes from the prefill)
  int prefix_group = -1; // requests of one group share the first prefix_tokens of their prompt
  int prefix_tokens = 0;
};

struct ArrivalSpec {
  double rate_per_s = 50;  // Poisson arrivals; must be above 0
  int requests = 200;
  int prompt_mean = 64;    // lengths uniform in [mean/2, 3·mean/2], at least 1
  int output_mean = 64;
  int prefix_tokens = 0;   // > 0: every request's prompt starts with one shared prefix
  std::uint64_t seed = 1;
};

/// Throws Error(kInvalidInput) "rate: ", "requests: ", "prompt-mean: ",
/// "output-mean: ", "prefix-tokens: " for values out of range.
void CheckArrivalSpec(const ArrivalSpec& spec);
std::vector<RequestArrival> GenerateArrivals(const ArrivalSpec& spec);

/// Parses a request file (see above); `prefix_tokens` is what a named
/// prefix shares. Throws Error(kInvalidInput) "path:line:field: message".
std::vector<RequestArrival> ParseRequestFile(const std::string& text, const std::string& path,
                                             int prefix_tokens);
std::vector<RequestArrival> LoadRequestFile(const std::string& path, int prefix_tokens);

}  // namespace shardlab
