// The TOML-subset reader: what it accepts, and that hostile input gets one
// clear "path:line: message" error instead of a crash.
#include "engine/core/toml.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/error.h"

namespace shardlab {
namespace {

// The message of the Error that parsing `text` throws ("" when none is thrown).
std::string ParseError(const std::string& text, const std::string& path = "t.toml") {
  try {
    ParseToml(text, path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "";
}

const TomlValue& Get(const TomlValue& table, const std::string& key) {
  const TomlEntry* entry = table.Find(key);
  if (entry == nullptr) throw std::runtime_error("no key " + key);
  return entry->value;
}

std::string RoundTrip(const std::string& s) {
  return Get(ParseToml("s = " + TomlQuote(s), "t.toml"), "s").string_value;
}

TEST(Toml, ParsesTablesArraysOfTablesAndLineNumbers) {
  const std::string text =
      "# comment line\n"
      "name = \"box\"   # trailing comment\n"
      "count = 3\n"
      "\n"
      "[[node]]\n"
      "name = 'gpu0'\n"
      "[[node]]\n"
      "name = \"gpu1\"\n"
      "fast = true\n"
      "[settings.inner]\n"
      "ratio = 0.5\n"
      "\"quoted key\" = [1, 2,\n"
      "  3, # comment inside an array\n"
      "]\n";
  const TomlValue doc = ParseToml(text, "t.toml");
  ASSERT_EQ(doc.entries.size(), 4u);
  EXPECT_EQ(doc.entries[0].key, "name");
  EXPECT_EQ(doc.entries[0].line, 2);
  EXPECT_EQ(Get(doc, "name").string_value, "box");
  EXPECT_EQ(Get(doc, "count").int_value, 3);
  EXPECT_EQ(doc.Find("count")->line, 3);

  const TomlValue& nodes = Get(doc, "node");
  ASSERT_EQ(nodes.type, TomlType::kArray);
  EXPECT_TRUE(nodes.array_of_tables);
  ASSERT_EQ(nodes.items.size(), 2u);
  EXPECT_EQ(nodes.items[0].line, 5);
  EXPECT_EQ(nodes.items[1].line, 7);
  EXPECT_EQ(Get(nodes.items[0], "name").string_value, "gpu0");
  EXPECT_EQ(nodes.items[1].Find("fast")->line, 9);
  EXPECT_TRUE(Get(nodes.items[1], "fast").bool_value);

  const TomlValue& inner = Get(Get(doc, "settings"), "inner");
  EXPECT_DOUBLE_EQ(Get(inner, "ratio").float_value, 0.5);
  const TomlValue& list = Get(inner, "quoted key");
  ASSERT_EQ(list.items.size(), 3u);
  EXPECT_EQ(list.items[2].int_value, 3);
  EXPECT_EQ(inner.Find("quoted key")->line, 12);
}

TEST(Toml, DottedKeysMakeSubTables) {
  const TomlValue doc = ParseToml("a.b.c = 1\na.b.d = 2\n", "t.toml");
  const TomlValue& b = Get(Get(doc, "a"), "b");
  EXPECT_EQ(Get(b, "c").int_value, 1);
  EXPECT_EQ(Get(b, "d").int_value, 2);
}

TEST(Toml, ReadsEscapesAndUnicode) {
  const TomlValue doc = ParseToml(
      "s = \"tab\\there \\\"q\\\" back\\\\slash \\u00e9 \\U0001F600\"\n"
      "lit = 'C:\\path\\no escapes'\n"
      "utf = \"中文\"\n",
      "t.toml");
  EXPECT_EQ(Get(doc, "s").string_value, "tab\there \"q\" back\\slash \xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(Get(doc, "lit").string_value, "C:\\path\\no escapes");
  EXPECT_EQ(Get(doc, "utf").string_value, "中文");
}

TEST(Toml, MultilineStringsTrimTheFirstNewline) {
  const TomlValue doc = ParseToml(
      "a = \"\"\"\nline one\nline two\"\"\"\n"
      "b = '''\n  raw \\n'''\n"
      "c = \"\"\"joined \\\n     here\"\"\"\n"
      "d = \"\"\"ends with quotes\"\"\"\"\"\n",
      "t.toml");
  EXPECT_EQ(Get(doc, "a").string_value, "line one\nline two");
  EXPECT_EQ(Get(doc, "b").string_value, "  raw \\n");
  EXPECT_EQ(Get(doc, "c").string_value, "joined here");
  EXPECT_EQ(Get(doc, "d").string_value, "ends with quotes\"\"");
  EXPECT_EQ(Get(doc, "d").line, 8);
}

TEST(Toml, QuotedStringsRoundTrip) {
  // A leading newline is the case toml++ loses; escaping it keeps it.
  for (const std::string& s :
       {std::string("\nstarts with a newline"), std::string("\n\n"), std::string(""),
        std::string("a\"b\\c"), std::string("\t\r\b\f\x01\x1f\x7f"), std::string("é 中文 😀"),
        std::string("'''\"\"\"")}) {
    EXPECT_EQ(RoundTrip(s), s);
  }
  EXPECT_EQ(TomlQuote("\nx"), "\"\\nx\"");
}

TEST(Toml, KeysAreBareOnlyWhenTheyCanBe) {
  EXPECT_EQ(TomlKey("gpu_0-a"), "gpu_0-a");
  EXPECT_EQ(TomlKey("a b"), "\"a b\"");
  EXPECT_EQ(TomlKey(""), "\"\"");
}

TEST(Toml, ReadsNumbers) {
  const TomlValue doc = ParseToml(
      "a = 1_000\nb = -42\nc = +7\nd = 0xff\ne = 0o17\nf = 0b101\n"
      "g = 1.5\nh = -2.5e-3\ni = 1e3\nj = 6.02E+23\nk = inf\nl = -inf\nm = nan\nn = 0\n",
      "t.toml");
  EXPECT_EQ(Get(doc, "a").int_value, 1000);
  EXPECT_EQ(Get(doc, "b").int_value, -42);
  EXPECT_EQ(Get(doc, "c").int_value, 7);
  EXPECT_EQ(Get(doc, "d").int_value, 255);
  EXPECT_EQ(Get(doc, "e").int_value, 15);
  EXPECT_EQ(Get(doc, "f").int_value, 5);
  EXPECT_EQ(Get(doc, "g").type, TomlType::kFloat);
  EXPECT_DOUBLE_EQ(Get(doc, "h").float_value, -2.5e-3);
  EXPECT_DOUBLE_EQ(Get(doc, "i").float_value, 1000.0);
  EXPECT_DOUBLE_EQ(Get(doc, "j").float_value, 6.02e23);
  EXPECT_TRUE(std::isinf(Get(doc, "k").float_value));
  EXPECT_LT(Get(doc, "l").float_value, 0);
  EXPECT_TRUE(std::isnan(Get(doc, "m").float_value));
  EXPECT_TRUE(Get(doc, "n").is_number());
  EXPECT_EQ(Get(doc, "g").number(), 1.5);
}

TEST(Toml, RejectsMalformedNumbers) {
  for (const std::string bad :
       {"012", "1__0", "_1", "1_", "1.", ".5", "1e", "0x", "1.2.3", "--1", "12x"}) {
    const std::string message = ParseError("x = " + bad + "\n");
    EXPECT_NE(message.find("t.toml:1: invalid value '" + bad + "'"), std::string::npos) << message;
  }
  EXPECT_NE(ParseError("x = 99999999999999999999\n").find("does not fit in 64 bits"),
            std::string::npos);
  EXPECT_NE(ParseError("x = 1e999\n").find("out of range"), std::string::npos);
}

TEST(Toml, NumbersPrintShortestAndReadBackExactly) {
  for (const double v : {0.1, 0.35, 0.7, 1e-7, 123456.789, 1e21, 25.0, -3.0, 12.5, 1.0 / 3.0}) {
    const TomlValue doc = ParseToml("x = " + TomlNumber(v), "t.toml");
    EXPECT_EQ(Get(doc, "x").number(), v) << TomlNumber(v);
  }
  EXPECT_EQ(TomlNumber(25.0), "25");
  EXPECT_EQ(TomlNumber(0.35), "0.35");
}

TEST(Toml, ErrorsNameFileAndLine) {
  EXPECT_EQ(ParseError("a = 1\na = 2\n"), "t.toml:2: duplicate key 'a' (first defined on line 1)");
  EXPECT_EQ(ParseError("[t]\n[t]\n"), "t.toml:2: table [t] is defined twice (first on line 1)");
  EXPECT_EQ(ParseError("x = 1\ny = \"open\n"), "t.toml:2: unterminated string (opened on line 2)");
  EXPECT_EQ(ParseError("x = [1, 2\n"), "t.toml:2: unterminated array (opened on line 1)");
  EXPECT_EQ(ParseError("x = gpu\n"),
            "t.toml:1: invalid value 'gpu' (strings need quotes: \"gpu\")");
  EXPECT_EQ(ParseError("x = 1 2\n"), "t.toml:1: expected the end of the line, found '2'");
  EXPECT_EQ(ParseError("x\n"), "t.toml:1: expected '=' after key 'x', found end of line");
  EXPECT_EQ(ParseError("x =\n"), "t.toml:1: expected a value, found end of line");
  EXPECT_EQ(ParseError("s = \"bad \\q\"\n"), "t.toml:1: invalid escape '\\q' in string");
  EXPECT_EQ(ParseError("s = \"\\ud800\"\n"),
            "t.toml:1: escape \\uD800 is not a Unicode scalar value");
  EXPECT_NE(ParseError("t = { a = 1 }\n").find("inline tables"), std::string::npos);
  EXPECT_NE(ParseError("d = 1979-05-27\n").find("dates and times are not supported"),
            std::string::npos);
  EXPECT_NE(ParseError("d = 07:32:00\n").find("dates and times are not supported"),
            std::string::npos);
  EXPECT_EQ(
      ParseError("a = 1\n[[a]]\n"),
      "t.toml:2: 'a' is already defined as an integer on line 1; cannot add [[a]] tables to it");
  EXPECT_EQ(ParseError("[[a]]\n[a]\n"), "t.toml:2: 'a' is already defined as an array on line 1");
  EXPECT_EQ(ParseError("s = \"a\tb\x01\"\n"),
            "t.toml:1: control character in string; write it as an escape such as \\n or \\u0001");
}

TEST(Toml, RejectsNulBytesWithTheirLine) {
  const std::string text = std::string("a = 1\nb = \"x") + '\0' + "y\"\n";
  EXPECT_EQ(ParseError(text), "t.toml:2: NUL byte in file (is it a binary file?)");
}

TEST(Toml, RejectsInvalidUtf8) {
  EXPECT_EQ(ParseError("a = 1\n\nb = \"\xff\"\n"),
            "t.toml:3: invalid UTF-8 (byte 0xFF); save the file as UTF-8");
  EXPECT_NE(ParseError("b = \"\xc0\xaf\"\n").find("invalid UTF-8"), std::string::npos);  // overlong
  EXPECT_NE(ParseError("b = \"\xed\xa0\x80\"\n").find("invalid UTF-8"),
            std::string::npos);  // surrogate
  EXPECT_NE(ParseError("b = \"\xe4\xb8\"\n").find("invalid UTF-8"),
            std::string::npos);  // cut short
  EXPECT_NE(ParseError("b = \"\xf4\x90\x80\x80\"\n").find("invalid UTF-8"), std::string::npos);
  EXPECT_EQ(ParseError("\xEF\xBB\xBFok = 1\n"), "");  // a byte order mark is fine
}

TEST(Toml, DeepNestingIsAnErrorNotAStackOverflow) {
  const std::string brackets(100000, '[');
  EXPECT_EQ(ParseError("x = " + brackets + "\n"),
            "t.toml:1: arrays nested more than 32 levels deep");
  EXPECT_EQ(ParseError(brackets), "t.toml:1: expected a table name after '[[', found '['");
  EXPECT_EQ(ParseError(brackets + "\n"), "t.toml:1: expected a table name after '[[', found '['");

  std::string ok = "x = " + std::string(32, '[') + std::string(32, ']') + "\n";
  EXPECT_EQ(ParseError(ok), "");
  std::string too_deep = "x = " + std::string(33, '[') + std::string(33, ']') + "\n";
  EXPECT_EQ(ParseError(too_deep), "t.toml:1: arrays nested more than 32 levels deep");

  std::string dotted = "k";
  for (int i = 0; i < 40; ++i) dotted += ".k";
  EXPECT_EQ(ParseError(dotted + " = 1\n"), "t.toml:1: key nested more than 32 levels deep");
  EXPECT_EQ(ParseError("[" + dotted + "]\n"), "t.toml:1: key nested more than 32 levels deep");
}

TEST(Toml, RejectsTextOverOneMebibyte) {
  const std::string big = "# " + std::string(2 << 20, 'x') + "\n";
  EXPECT_EQ(ParseError(big, "big.toml"), "big.toml: file is 2.0 MiB (" +
                                             std::to_string(big.size()) +
                                             " bytes); the limit is 1 MiB (1048576 bytes)");
}

TEST(Toml, RejectsFilesOverOneMebibyteBeforeReadingThem) {
  const auto path = std::filesystem::temp_directory_path() / "shardlab_toml_test_2mib.toml";
  {
    std::ofstream out(path, std::ios::binary);
    out << "a = 1\n" << std::string(2 << 20, '#');
  }
  try {
    LoadTomlFile(path.string());
    ADD_FAILURE() << "a 2 MiB file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the limit is 1 MiB"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ": file is 2.0 MiB", 0), 0u) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(Toml, LoadsFilesAndReportsMissingOnes) {
  const auto path = std::filesystem::temp_directory_path() / "shardlab_toml_test_small.toml";
  {
    std::ofstream out(path, std::ios::binary);
    out << "answer = 42\r\nname = \"crlf\"\r\n";
  }
  const TomlValue doc = LoadTomlFile(path.string());
  EXPECT_EQ(Get(doc, "answer").int_value, 42);
  EXPECT_EQ(Get(doc, "name").string_value, "crlf");
  EXPECT_EQ(doc.Find("name")->line, 2);
  std::filesystem::remove(path);
  EXPECT_THROW(LoadTomlFile(path.string()), Error);
}

}  // namespace
}  // namespace shardlab
