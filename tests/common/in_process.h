// Runs a CLI command's main in this process and returns what it printed on
// stdout: how tests see a scenario that only their binary registered.
#pragma once

#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace shardlab::test_util {

/// What `main(words)` prints on stdout; an exception it throws (a bad flag
/// is an Error) passes through with stdout restored.
inline std::string InProcess(int (*main)(std::span<const std::string>), std::vector<std::string> words) {
  std::ostringstream captured;
  std::streambuf* saved = std::cout.rdbuf(captured.rdbuf());
  try {
    main(words);
  } catch (...) {
    std::cout.rdbuf(saved);
    throw;
  }
  std::cout.rdbuf(saved);
  return captured.str();
}

}  // namespace shardlab::test_util
