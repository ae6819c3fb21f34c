#include "engine/core/json_parse.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace shardlab {
namespace {

std::string ErrorOf(const std::string& text, JsonLimits limits = {}) {
  try {
    ParseJson(text, "t.json", limits);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(JsonParse, ReadsEveryKindOfValue) {
  const JsonValue v = ParseJson(
      R"({"a": [1, -2.5e3, 0.125], "s": "x\"\\\/\n\u00e9\ud83d\ude00", "t": true, "f": false, "n": null, "o": {}})",
      "t.json");
  ASSERT_TRUE(v.is_object());
  const JsonValue* a = v.Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 3u);
  EXPECT_EQ(a->items[1].number, -2500);
  EXPECT_EQ(a->items[2].number, 0.125);
  EXPECT_EQ(v.Find("s")->string, "x\"\\/\n\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_TRUE(v.Find("t")->boolean);
  EXPECT_EQ(v.Find("f")->type, JsonValue::Type::kBool);
  EXPECT_EQ(v.Find("n")->type, JsonValue::Type::kNull);
  EXPECT_TRUE(v.Find("o")->is_object());
  EXPECT_EQ(v.Find("missing"), nullptr);
}

TEST(JsonParse, BrokenTextNamesLineAndColumn) {
  EXPECT_EQ(ErrorOf("{\n  \"a\": 1\n  \"b\": 2}"), "t.json:3:3: expected ',' or '}' in an object");
  EXPECT_EQ(ErrorOf("[1, 2"), "t.json:1:6: the text ends inside an array");
  EXPECT_EQ(ErrorOf("{\"a\": \"unterminated"), "t.json:1:20: the text ends inside a string");
  EXPECT_EQ(ErrorOf(""), "t.json:1:1: the text ends where a value was expected");
  EXPECT_EQ(ErrorOf("[1] x"), "t.json:1:5: unexpected text after the end of the document");
  EXPECT_NE(ErrorOf("[01]"), "");
  EXPECT_NE(ErrorOf("[1.]"), "");
  EXPECT_NE(ErrorOf("[nul]"), "");
  EXPECT_NE(ErrorOf("[\"\\x\"]"), "");
  EXPECT_NE(ErrorOf("[\"\\ud800\"]"), "");  // half a surrogate pair
  EXPECT_NE(ErrorOf("[\"a\tb\"]"), "");     // raw control character
  EXPECT_NE(ErrorOf("[1e999]").find("out of range"), std::string::npos);
}

TEST(JsonParse, CapsDepthStringsValuesAndSize) {
  EXPECT_NE(ErrorOf(std::string(100000, '[')).find("nested deeper than 64"), std::string::npos);
  JsonLimits small;
  small.max_string_bytes = 8;
  EXPECT_NE(ErrorOf("[\"0123456789\"]", small).find("longer than 8"), std::string::npos);
  small = {};
  small.max_values = 3;
  EXPECT_NE(ErrorOf("[1, 2, 3, 4]", small).find("more than 3 values"), std::string::npos);
  small = {};
  small.max_bytes = 4;
  EXPECT_NE(ErrorOf("[1, 2]", small).find("larger than"), std::string::npos);
}

TEST(JsonParse, PullReadingWalksAnArrayOneElementAtATime) {
  JsonParser p(R"({"list": [{"x": 1}, {"x": 2}], "tail": "t"})", "t.json");
  p.BeginObject();
  std::string key;
  int sum = 0;
  std::string tail;
  while (p.NextMember(&key)) {
    if (key == "list") {
      p.BeginArray();
      while (p.NextElement()) sum += static_cast<int>(p.ParseValue().Find("x")->number);
    } else {
      tail = p.ParseValue().string;
    }
  }
  p.ExpectEnd();
  EXPECT_EQ(sum, 3);
  EXPECT_EQ(tail, "t");
}

TEST(JsonParse, RandomTextNeverCrashes) {
  std::mt19937 rng(3);
  const std::string alphabet = "{}[],:\"\\0123456789.eE+-tfnul \n";
  for (int round = 0; round < 5000; ++round) {
    std::string text(rng() % 40, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    try {
      ParseJson(text, "r.json");
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace shardlab
