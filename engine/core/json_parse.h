// A small strict JSON reader with caps, for files that come from anywhere
// (traces recorded on another machine): the input size, the nesting depth,
// a string's length and the number of values are capped, so a hostile or
// broken file is one clear error, never a crash, a stack overflow or a
// huge allocation. Errors name the source, line and column:
// "run.json:3:17: expected ',' or '}' in an object".
//
// Two ways to read:
//   ParseJson(text, "run.json")           the whole document as a JsonValue tree
//   JsonParser p(text, "run.json");       pull: walk a large top-level
//   p.BeginObject(); while (p.NextMember(&key)) { ... p.ParseValue() or p.SkipValue() }
// The pull form keeps one element of a huge array in memory at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/error.h"

namespace shardlab {

struct JsonLimits {
  std::size_t max_bytes = std::size_t{1} << 30;   // the whole text
  int max_depth = 64;                             // nested arrays and objects
  std::size_t max_string_bytes = std::size_t{1} << 20;
  std::size_t max_values = std::size_t{1} << 26;  // every value parsed, in all
};

struct JsonMember;

struct JsonValue {
  enum class Type : std::uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> items;                            // kArray
  std::vector<JsonMember> members;  // kObject, in file order

  bool is_number() const { return type == Type::kNumber; }
  bool is_string() const { return type == Type::kString; }
  bool is_object() const { return type == Type::kObject; }
  bool is_array() const { return type == Type::kArray; }
  /// The first member named `key` of an object; null when absent or not an object.
  const JsonValue* Find(std::string_view key) const;
};

// An object's member. Not a std::pair: clang with libstdc++ rejects a pair
// holding the JsonValue that is still being defined.
struct JsonMember {
  std::string first;   // the key
  JsonValue second;
};

class JsonParser {
 public:
  /// Throws Error "<source>: ... larger than ..." when `text` is over the cap.
  JsonParser(std::string_view text, std::string source, JsonLimits limits = {});

  /// Consumes '{' (throws otherwise).
  void BeginObject();
  /// Next member of the innermost open object: true with its key (the
  /// caller then reads the value), false after its '}'.
  bool NextMember(std::string* key);
  /// Consumes '['.
  void BeginArray();
  /// True when the innermost open array has another element (read it
  /// next), false after its ']'.
  bool NextElement();
  /// Reads one whole value.
  JsonValue ParseValue();
  /// Reads one whole value and drops it.
  void SkipValue() { (void)ParseValue(); }
  /// Throws unless only whitespace is left.
  void ExpectEnd();

  /// "source:line:col: message" at the current position.
  Error ErrorHere(const std::string& message) const { return ErrorAt(at_, message); }
  /// The same at byte `offset` (counting lines costs a pass: errors only).
  Error ErrorAt(std::size_t offset, const std::string& message) const;
  /// Where the next value starts (after whitespace), for ErrorAt later.
  std::size_t NextOffset() {
    Peek();
    return at_;
  }

 private:
  char Peek();  // after whitespace; '\0' at the end
  void Expect(char c, const char* what);
  std::string ParseString();
  double ParseNumber();
  JsonValue ParseValueAt(int depth);
  void Count();
  void Enter();

  std::string_view text_;
  std::string source_;
  JsonLimits limits_;
  std::size_t at_ = 0;
  std::size_t values_ = 0;
  // Pull API: per open container, whether it has had an element yet.
  std::vector<bool> first_;
};

/// The whole of `text` as one value. Throws Error naming `source`.
JsonValue ParseJson(std::string_view text, const std::string& source, const JsonLimits& limits = {});

}  // namespace shardlab
