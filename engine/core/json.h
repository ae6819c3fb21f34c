// A small streaming JSON writer for CLI output and trace files: commas and
// escaping are its job, so callers write structure only.
//
//   JsonWriter w(out);
//   w.BeginObject(); w.Key("ranks"); w.Int(8); w.EndObject();
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace shardlab {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out, bool pretty = false) : out_(out), pretty_(pretty) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  void String(std::string_view value);
  void Int(std::int64_t value);
  void Double(double value);  // non-finite values are written as null
  void Bool(bool value);
  void Null();

  /// Key + value in one call.
  template <typename T> void Field(std::string_view key, const T& value);

 private:
  void BeforeValue();
  void Newline();
  std::ostream& out_;
  bool pretty_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

/// `text` as a JSON string literal with quotes, escaped (control characters,
/// quotes, backslashes; bytes >= 0x80 pass through).
std::string JsonQuote(std::string_view text);

template <typename T> void JsonWriter::Field(std::string_view key, const T& value) {
  Key(key);
  if constexpr (std::is_same_v<T, bool>) Bool(value);
  else if constexpr (std::is_integral_v<T>) Int(static_cast<std::int64_t>(value));
  else if constexpr (std::is_floating_point_v<T>) Double(static_cast<double>(value));
  else String(std::string_view(value));
}

}  // namespace shardlab
