#include "engine/core/json_parse.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace shardlab {

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (type != Type::kObject) return nullptr;
  for (const auto& [name, value] : members) {
    if (name == key) return &value;
  }
  return nullptr;
}

JsonParser::JsonParser(std::string_view text, std::string source, JsonLimits limits)
    : text_(text), source_(std::move(source)), limits_(limits) {
  if (text_.size() > limits_.max_bytes) {
    throw Error(source_ + ": " + std::to_string(text_.size()) + " bytes is larger than the " +
                std::to_string(limits_.max_bytes) + " this reader accepts");
  }
}

Error JsonParser::ErrorAt(std::size_t offset, const std::string& message) const {
  int line = 1;
  int column = 1;
  const std::size_t end = std::min(offset, text_.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text_[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return Error(source_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message);
}

char JsonParser::Peek() {
  while (at_ < text_.size()) {
    const char c = text_[at_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return c;
    ++at_;
  }
  return '\0';
}

void JsonParser::Expect(char c, const char* what) {
  if (Peek() != c) {
    throw ErrorHere(at_ >= text_.size() ? std::string("the text ends where ") + what + " was expected"
                                        : std::string("expected ") + what);
  }
  ++at_;
}

void JsonParser::Count() {
  if (++values_ > limits_.max_values) {
    throw ErrorHere("more than " + std::to_string(limits_.max_values) + " values");
  }
}

void JsonParser::Enter() {
  if (static_cast<int>(first_.size()) >= limits_.max_depth) {
    throw ErrorHere("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
  }
}

void JsonParser::BeginObject() {
  Enter();
  Expect('{', "'{'");
  Count();
  first_.push_back(true);
}

void JsonParser::BeginArray() {
  Enter();
  Expect('[', "'['");
  Count();
  first_.push_back(true);
}

bool JsonParser::NextMember(std::string* key) {
  if (first_.empty()) throw ErrorHere("no object is open");
  const char c = Peek();
  if (c == '}') {
    ++at_;
    first_.pop_back();
    return false;
  }
  if (!first_.back()) {
    if (c != ',') throw ErrorHere(c == '\0' ? "the text ends inside an object" : "expected ',' or '}' in an object");
    ++at_;
    Peek();
  }
  first_.back() = false;
  if (Peek() != '"') throw ErrorHere("expected a member name in quotes");
  *key = ParseString();
  Expect(':', "':' after a member name");
  return true;
}

bool JsonParser::NextElement() {
  if (first_.empty()) throw ErrorHere("no array is open");
  const char c = Peek();
  if (c == ']') {
    ++at_;
    first_.pop_back();
    return false;
  }
  if (!first_.back()) {
    if (c != ',') throw ErrorHere(c == '\0' ? "the text ends inside an array" : "expected ',' or ']' in an array");
    ++at_;
  }
  first_.back() = false;
  return true;
}

void JsonParser::ExpectEnd() {
  if (Peek() != '\0') throw ErrorHere("unexpected text after the end of the document");
}

JsonValue JsonParser::ParseValue() { return ParseValueAt(static_cast<int>(first_.size())); }

JsonValue JsonParser::ParseValueAt(int depth) {
  Count();
  JsonValue value;
  const char c = Peek();
  switch (c) {
    case '{': {
      if (depth >= limits_.max_depth) {
        throw ErrorHere("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
      }
      ++at_;
      value.type = JsonValue::Type::kObject;
      if (Peek() == '}') {
        ++at_;
        return value;
      }
      for (;;) {
        if (Peek() != '"') throw ErrorHere("expected a member name in quotes");
        std::string key = ParseString();
        Expect(':', "':' after a member name");
        value.members.push_back(JsonMember{std::move(key), ParseValueAt(depth + 1)});
        const char next = Peek();
        if (next == ',') {
          ++at_;
          continue;
        }
        if (next == '}') {
          ++at_;
          return value;
        }
        throw ErrorHere(next == '\0' ? "the text ends inside an object" : "expected ',' or '}' in an object");
      }
    }
    case '[': {
      if (depth >= limits_.max_depth) {
        throw ErrorHere("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
      }
      ++at_;
      value.type = JsonValue::Type::kArray;
      if (Peek() == ']') {
        ++at_;
        return value;
      }
      for (;;) {
        value.items.push_back(ParseValueAt(depth + 1));
        const char next = Peek();
        if (next == ',') {
          ++at_;
          continue;
        }
        if (next == ']') {
          ++at_;
          return value;
        }
        throw ErrorHere(next == '\0' ? "the text ends inside an array" : "expected ',' or ']' in an array");
      }
    }
    case '"':
      value.type = JsonValue::Type::kString;
      value.string = ParseString();
      return value;
    case 't':
    case 'f':
    case 'n': {
      const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
      if (text_.substr(at_, word.size()) != word) throw ErrorHere("unknown word (expected true, false or null)");
      at_ += word.size();
      if (c != 'n') {
        value.type = JsonValue::Type::kBool;
        value.boolean = c == 't';
      }
      return value;
    }
    case '\0': throw ErrorHere("the text ends where a value was expected");
    default:
      if (c == '-' || (c >= '0' && c <= '9')) {
        value.type = JsonValue::Type::kNumber;
        value.number = ParseNumber();
        return value;
      }
      throw ErrorHere(std::string("unexpected character '") + (c >= 32 && c < 127 ? std::string(1, c) : "?") + "'");
  }
}

double JsonParser::ParseNumber() {
  // The JSON grammar, checked by hand; strtod then converts what it allows.
  const std::size_t start = at_;
  auto digit = [&] { return at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9'; };
  if (text_[at_] == '-') ++at_;
  if (!digit()) throw ErrorHere("a number needs a digit");
  if (text_[at_] == '0') {
    ++at_;
  } else {
    while (digit()) ++at_;
  }
  if (at_ < text_.size() && text_[at_] == '.') {
    ++at_;
    if (!digit()) throw ErrorHere("a number needs a digit after '.'");
    while (digit()) ++at_;
  }
  if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
    ++at_;
    if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
    if (!digit()) throw ErrorHere("a number needs a digit in its exponent");
    while (digit()) ++at_;
  }
  if (at_ - start > 64) throw ErrorHere("a number of more than 64 characters");
  const std::string digits(text_.substr(start, at_ - start));
  errno = 0;
  const double number = std::strtod(digits.c_str(), nullptr);
  if (!std::isfinite(number)) {
    at_ = start;
    throw ErrorHere("number " + digits + " is out of range");
  }
  return number;
}

namespace {

void AppendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string JsonParser::ParseString() {
  ++at_;  // the opening quote
  std::string out;
  auto hex4 = [&]() -> std::uint32_t {
    if (text_.size() - at_ < 4) throw ErrorHere("the text ends inside a \\u escape");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = HexDigit(text_[at_ + static_cast<std::size_t>(i)]);
      if (d < 0) throw ErrorHere("\\u needs four hex digits");
      v = v * 16 + static_cast<std::uint32_t>(d);
    }
    at_ += 4;
    return v;
  };
  for (;;) {
    if (at_ >= text_.size()) throw ErrorHere("the text ends inside a string");
    if (out.size() > limits_.max_string_bytes) {
      throw ErrorHere("a string longer than " + std::to_string(limits_.max_string_bytes) + " bytes");
    }
    const char c = text_[at_];
    if (c == '"') {
      ++at_;
      return out;
    }
    if (static_cast<unsigned char>(c) < 0x20) throw ErrorHere("a control character inside a string");
    if (c != '\\') {
      out += c;
      ++at_;
      continue;
    }
    ++at_;
    if (at_ >= text_.size()) throw ErrorHere("the text ends inside a string");
    const char e = text_[at_++];
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        std::uint32_t cp = hex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // a surrogate pair's first half
          if (text_.substr(at_, 2) != "\\u") throw ErrorHere("an unpaired surrogate in a \\u escape");
          at_ += 2;
          const std::uint32_t low = hex4();
          if (low < 0xDC00 || low > 0xDFFF) throw ErrorHere("an unpaired surrogate in a \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          throw ErrorHere("an unpaired surrogate in a \\u escape");
        }
        AppendUtf8(out, cp);
        break;
      }
      default: --at_; throw ErrorHere(std::string("unknown escape '\\") + e + "'");
    }
  }
}

JsonValue ParseJson(std::string_view text, const std::string& source, const JsonLimits& limits) {
  JsonParser parser(text, source, limits);
  JsonValue value = parser.ParseValue();
  parser.ExpectEnd();
  return value;
}

}  // namespace shardlab
