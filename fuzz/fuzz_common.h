// Shared by the libFuzzer targets: a shardlab::Error is a correct rejection
// of bad input; anything else escaping (another exception, a crash, a
// sanitizer report, a hang) is a finding.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "engine/core/error.h"

namespace shardlab::fuzz {

inline std::string_view AsText(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Aborts (so libFuzzer saves the input) when a promise the target checks
// does not hold, e.g. a round trip that changed the value.
[[noreturn]] inline void Broken(const char* what) {
  std::fprintf(stderr, "fuzz: broken promise: %s\n", what);
  std::abort();
}

// Runs body; swallows shardlab::Error only.
template <typename Body>
int Guard(Body&& body) {
  try {
    body();
  } catch (const shardlab::Error&) {
  }
  return 0;
}

}  // namespace shardlab::fuzz
