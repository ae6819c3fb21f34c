// Helpers for the field readers' tests: the real files of tests/data/real/,
// independent counts over their text (simple scans that share no code with
// the readers), and inputs made in the test (gzip, deep nesting, long lines).
#pragma once

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

#include "engine/field/field_file.h"
#include "engine/field/field_reader.h"

namespace shardlab::field_test {

inline std::string RealPath(const std::string& name) {
  return std::string(SHARDLAB_TEST_DATA_DIR) + "/real/" + name;
}

inline std::string RealText(const std::string& name) {
  std::ifstream in(RealPath(name), std::ios::binary);
  if (!in) throw std::runtime_error("missing " + RealPath(name));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// How many times `pattern` matches in `text` (an independent count: a regex scan).
inline int Matches(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

/// Reads `bytes` as a field file named `name` and inspects it.
inline Inspection InspectBytes(const std::string& bytes, const std::string& name = "test-file") {
  return InspectFieldFile(FieldFileFromBytes(bytes, name));
}

/// The message of the Error that inspecting `bytes` throws, or "" when it does not throw.
inline std::string ErrorOf(const std::string& bytes, const std::string& name = "test-file") {
  try {
    InspectBytes(bytes, name);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// `text` gzip-compressed (level 1: the tests compress large inputs).
inline std::string Gzip(const std::string& text) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib");
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("zlib deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace shardlab::field_test
