// A strict little JSON reader for tests that look inside what we write
// (the CLI's --json, Chrome traces): enough to prove a text is valid JSON
// and to walk it. Throws std::runtime_error at the first fault. Object
// fields keep their order (a trace's first key matters to Perfetto).
#pragma once

#include <cstdlib>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardlab::test_util {

struct JsonField;

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  std::vector<JsonField> fields;

  const Json* Find(const std::string& key) const;
  const Json& At(const std::string& key) const {
    const Json* value = Find(key);
    if (value == nullptr) throw std::runtime_error("no key '" + key + "'");
    return *value;
  }
  const Json& operator[](const std::string& key) const { return At(key); }
  bool Has(const std::string& key) const { return Find(key) != nullptr; }
};

// Not a std::pair: clang with libstdc++ rejects a pair holding the Json that
// is still being defined.
struct JsonField {
  std::string first;
  Json second;
};

inline const Json* Json::Find(const std::string& key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return &v;
  }
  return nullptr;
}

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : s_(text) {}

  /// The one value the text holds; throws on anything else.
  Json ParseDocument() {
    Json value = ParseValue();
    SkipSpace();
    if (pos_ != s_.size()) Fail("text after the document");
    return value;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at byte " + std::to_string(pos_));
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) {
      ++pos_;
    }
  }
  char Peek() {
    SkipSpace();
    if (pos_ >= s_.size()) Fail("unexpected end");
    return s_[pos_];
  }
  void Expect(char c) {
    if (Peek() != c) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void ExpectWord(const char* word) {
    for (const char* p = word; *p != '\0'; ++p, ++pos_) {
      if (pos_ >= s_.size() || s_[pos_] != *p) Fail(std::string("expected ") + word);
    }
  }

  Json ParseValue() {
    Json value;
    const char c = Peek();
    if (c == '{') {
      value.type = Json::Type::kObject;
      ++pos_;
      if (Peek() == '}') {
        ++pos_;
        return value;
      }
      while (true) {
        if (Peek() != '"') Fail("expected a key");
        std::string key = ParseString();
        Expect(':');
        if (value.Has(key)) Fail("duplicate key '" + key + "'");
        value.fields.push_back(JsonField{std::move(key), ParseValue()});
        if (Peek() == ',') {
          ++pos_;
          continue;
        }
        Expect('}');
        return value;
      }
    }
    if (c == '[') {
      value.type = Json::Type::kArray;
      ++pos_;
      if (Peek() == ']') {
        ++pos_;
        return value;
      }
      while (true) {
        value.items.push_back(ParseValue());
        if (Peek() == ',') {
          ++pos_;
          continue;
        }
        Expect(']');
        return value;
      }
    }
    if (c == '"') {
      value.type = Json::Type::kString;
      value.text = ParseString();
      return value;
    }
    if (c == 't' || c == 'f') {
      value.type = Json::Type::kBool;
      value.boolean = c == 't';
      ExpectWord(value.boolean ? "true" : "false");
      return value;
    }
    if (c == 'n') {
      ExpectWord("null");
      return value;
    }
    value.type = Json::Type::kNumber;
    value.number = ParseNumber();
    return value;
  }

  /// JSON's number grammar exactly (no leading zeros, no nan/inf).
  double ParseNumber() {
    std::size_t end = pos_;
    constexpr std::string_view kNumberChars = "+-0123456789.eE";
    while (end < s_.size() && kNumberChars.find(s_[end]) != std::string_view::npos) ++end;
    const std::string token = s_.substr(pos_, end - pos_);
    static const std::regex kNumber(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
    if (token.empty() || !std::regex_match(token, kNumber)) Fail("bad value");
    pos_ = end;
    return std::strtod(token.c_str(), nullptr);
  }

  std::string ParseString() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) Fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) Fail("raw control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) Fail("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          if (pos_ + 4 > s_.size()) Fail("short \\u escape");
          const unsigned code = static_cast<unsigned>(std::stoul(s_.substr(pos_, 4), nullptr, 16));
          pos_ += 4;
          if (code >= 0x80) Fail("this reader decodes only ASCII \\u escapes");
          out.push_back(static_cast<char>(code));
          break;
        }
        default: Fail("bad escape");
      }
    }
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

inline Json ParseJson(const std::string& text) { return JsonReader(text).ParseDocument(); }

}  // namespace shardlab::test_util
