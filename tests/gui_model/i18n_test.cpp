// The app's language (app/gui/i18n): every phrase the app draws through
// Tr("...") has its Chinese, no Chinese entry is left unused, a translated
// printf format takes the same arguments, the scenario specs' titles,
// parameters and units all have their Chinese, and the locale and --lang
// pick the language. The source scan reads app/gui as the compiler does
// (comments left out, adjacent literals joined, escapes decoded), so a key
// is the exact text the table is looked up with.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/gui/i18n/glyph_set.h"
#include "app/gui/i18n/language.h"
#include "app/gui/i18n/spec_text.h"
#include "app/gui/model/scenario_fields.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab::gui {
namespace {

namespace fs = std::filesystem;

/// Sets the language for one test and puts English back after it.
struct LanguageScope {
  explicit LanguageScope(Language language) { SetLanguage(language); }
  ~LanguageScope() { SetLanguage(Language::kEnglish); }
};

/// `text` with // and /* */ comments blanked (string and char literals kept).
std::string WithoutComments(const std::string& text) {
  std::string out = text;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (c == '"' || c == '\'') {
      for (++i; i < out.size() && out[i] != c; ++i) {
        if (out[i] == '\\') ++i;
      }
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      while (i + 1 < out.size() && !(out[i] == '*' && out[i + 1] == '/')) {
        if (out[i] != '\n') out[i] = ' ';
        ++i;
      }
      if (i + 1 < out.size()) out[i] = out[i + 1] = ' ';
    }
  }
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct TrCall {
  std::string key;        // the literal's bytes, as the compiler makes them
  std::string where;      // "app/gui/views/x.cpp:12"
  bool literal = true;    // false: Tr(something that is not a string literal)
};

/// Every Tr( call in `code` (comments already blanked).
std::vector<TrCall> FindTrCalls(const std::string& code, const std::string& file) {
  std::vector<TrCall> calls;
  for (std::size_t at = code.find("Tr("); at != std::string::npos; at = code.find("Tr(", at + 3)) {
    const char before = at > 0 ? code[at - 1] : ' ';
    if (std::isalnum(static_cast<unsigned char>(before)) || before == '_') continue;  // Format(, ...Tr(
    TrCall call;
    call.where = file + ":" + std::to_string(1 + std::count(code.begin(), code.begin() + at, '\n'));
    std::size_t i = at + 3;
    bool any = false;
    for (;;) {
      while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
      if (i >= code.size() || code[i] != '"') break;
      any = true;
      for (++i; i < code.size() && code[i] != '"'; ++i) {
        if (code[i] != '\\') {
          call.key += code[i];
          continue;
        }
        const char e = code[++i];
        if (e == 'n') {
          call.key += '\n';
        } else if (e == 't') {
          call.key += '\t';
        } else if (e == 'x') {
          int value = 0;
          while (i + 1 < code.size() && HexDigit(code[i + 1]) >= 0) value = value * 16 + HexDigit(code[++i]);
          call.key += static_cast<char>(value);
        } else {
          call.key += e;  // \" \\ \'
        }
      }
      ++i;
    }
    while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
    call.literal = any && i < code.size() && code[i] == ')';
    calls.push_back(call);
  }
  return calls;
}

/// Every Tr call in app/gui's sources (outside i18n/, which defines it).
std::vector<TrCall> AppTrCalls() {
  std::vector<TrCall> calls;
  const fs::path root = fs::path(SHARDLAB_SOURCE_DIR) / "app" / "gui";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".h") continue;
    if (entry.path().parent_path().filename() == "i18n") continue;  // Tr's own declaration and definition
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string file = fs::relative(entry.path(), SHARDLAB_SOURCE_DIR).string();
    for (TrCall& call : FindTrCalls(WithoutComments(text.str()), file)) calls.push_back(std::move(call));
  }
  return calls;
}

/// The printf conversions of `format` in order ("%d", "%.3f", "%s"); "%%" is none.
std::vector<std::string> Conversions(const std::string& format) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') continue;
    if (i + 1 < format.size() && format[i + 1] == '%') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < format.size() && std::string("-+ #0123456789.*hlzjtL").find(format[j]) != std::string::npos) ++j;
    out.push_back(format.substr(i, j - i + 1));
    i = j;
  }
  return out;
}

TEST(I18nSourceScan, ReadsLiteralsAsTheCompilerDoes) {
  // The scanner itself, on code written for it: joined literals, escapes,
  // a hex escape that stops at the literal's end, comments, a non-literal.
  const std::string code = WithoutComments(
      "a = Tr(\"one\\n\" \"two\");  // Tr(\"in a comment\")\n"
      "b = Tr(\"X\\xC2\\xB7\" \"A\"); /* Tr(\"also\") */ c = Format(Tr(\"%d GPUs\"), n);\n"
      "d = Tr(name); e = MyTr(\"not ours\");\n");
  const std::vector<TrCall> calls = FindTrCalls(code, "f.cpp");
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].key, "one\ntwo");
  EXPECT_EQ(calls[1].key, "X\xC2\xB7" "A");
  EXPECT_EQ(calls[2].key, "%d GPUs");
  EXPECT_EQ(calls[2].where, "f.cpp:2");
  EXPECT_TRUE(calls[2].literal);
  EXPECT_FALSE(calls[3].literal);
  EXPECT_EQ(Conversions("%d of %d, %.3f%% %s"), (std::vector<std::string>{"%d", "%d", "%.3f", "%s"}));
}

TEST(I18nPhrases, EveryPhraseTheAppDrawsHasItsChineseAndEveryEntryIsUsed) {
  const std::vector<TrCall> calls = AppTrCalls();
  ASSERT_GT(calls.size(), 200u) << "the scan found too few Tr calls: is SHARDLAB_SOURCE_DIR right?";
  std::map<std::string, std::string> table;
  for (const PhraseEntry& e : ChinesePhrases()) {
    EXPECT_TRUE(table.emplace(e.english, e.chinese).second) << "two entries for '" << e.english << "'";
  }
  std::set<std::string> used;
  for (const TrCall& call : calls) {
    EXPECT_TRUE(call.literal) << call.where << ": Tr() takes a string literal (the table's key), not an expression";
    if (!call.literal) continue;
    used.insert(call.key);
    EXPECT_TRUE(table.count(call.key) != 0) << call.where << ": no Chinese for \"" << call.key << "\"";
  }
  for (const auto& [english, chinese] : table) {
    EXPECT_TRUE(used.count(english) != 0) << "the Chinese table has \"" << english << "\", which no Tr() uses";
    EXPECT_FALSE(chinese.empty()) << english;
    // The same arguments in the same order: a format that differs would read garbage.
    EXPECT_EQ(Conversions(chinese), Conversions(english)) << "\"" << english << "\" -> \"" << chinese << "\"";
  }
}

TEST(I18nPhrases, TrAnswersInTheLanguageSet) {
  EXPECT_STREQ(Tr("Play"), "Play");
  {
    LanguageScope chinese(Language::kChinese);
    EXPECT_STREQ(Tr("Play"), "\xE6\x92\xAD\xE6\x94\xBE");  // 播放
    EXPECT_STREQ(Tr("a phrase nobody translated"), "a phrase nobody translated");
    EXPECT_EQ(Format(Tr("%d GPUs"), 8), "8 \xE4\xB8\xAA GPU");  // 8 个 GPU
  }
  EXPECT_STREQ(Tr("Play"), "Play");
}

/// The scenarios the engine registers (not a test's own).
bool BuiltIn(const ScenarioSpec& spec) { return spec.name != "gui-test-scenario"; }

TEST(I18nSpecTexts, EveryScenarioParameterAndUnitHasItsChineseAndNoEntryIsStale) {
  std::set<std::string> keys;
  for (const ScenarioSpec& spec : Scenarios()) {
    if (!BuiltIn(spec)) continue;
    keys.insert(spec.name);
    for (const ParamSpec& p : spec.params) {
      keys.insert(spec.name + "." + p.name);
      if (!p.unit.empty()) keys.insert("unit:" + p.unit);
    }
  }
  ASSERT_GT(keys.size(), 50u);
  for (const std::string& key : keys) {
    const SpecTextEntry* e = FindChineseSpecText(key);
    EXPECT_NE(e, nullptr) << "no Chinese for the spec's \"" << key << "\" (app/gui/i18n/spec_text.cpp)";
    if (e == nullptr) continue;
    EXPECT_STRNE(e->title, "") << key;
    if (key.rfind("unit:", 0) != 0) {
      EXPECT_STRNE(e->help, "") << key;
    }
  }
  std::set<std::string> seen;
  for (const SpecTextEntry& e : ChineseSpecTexts()) {
    EXPECT_TRUE(seen.insert(e.key).second) << "two entries for " << e.key;
    EXPECT_TRUE(keys.count(e.key) != 0) << "spec_text.cpp has \"" << e.key << "\", which no scenario has";
  }
}

TEST(I18nSpecTexts, ThePanelFieldsSpeakChineseAndKeepWhatZeroMeans) {
  ScenarioSettings settings = DefaultSettings("allreduce");
  const std::vector<PanelField> english = PanelFields(settings, 8);
  LanguageScope chinese(Language::kChinese);
  const std::vector<PanelField> fields = PanelFields(settings, 8);
  ASSERT_EQ(fields.size(), english.size());
  const ScenarioSpec* spec = SpecOf("allreduce");
  ASSERT_NE(spec, nullptr);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const PanelField& f = fields[i];
    EXPECT_EQ(f.name, english[i].name);
    EXPECT_EQ(f.value, english[i].value);  // values stay what the engine reads
    const SpecTextEntry* e = FindChineseSpecText(spec->name + "." + f.name);
    ASSERT_NE(e, nullptr) << f.name;
    EXPECT_EQ(f.label, e->title);
    EXPECT_EQ(f.help.rfind(e->help, 0), 0u) << f.help;
    // Where English says what 0 (or "all") means, so does Chinese.
    EXPECT_EQ(f.zero_text.empty(), english[i].zero_text.empty()) << f.name << ": " << f.zero_text;
  }
  const auto ranks = std::find_if(fields.begin(), fields.end(), [](const PanelField& f) { return f.name == "ranks"; });
  ASSERT_NE(ranks, fields.end());
  EXPECT_EQ(ranks->format, "%d \xE4\xB8\xAA GPU");  // "%d 个 GPU"
  const std::vector<ScenarioChoice> choices = ScenarioChoices();
  const auto pipeline =
      std::find_if(choices.begin(), choices.end(), [](const ScenarioChoice& c) { return c.name == "pipeline"; });
  ASSERT_NE(pipeline, choices.end());
  EXPECT_EQ(pipeline->title, FindChineseSpecText("pipeline")->title);  // 流水线并行
}

TEST(I18nLanguage, LocaleAndFlagPickTheLanguage) {
  EXPECT_EQ(LanguageFromLocale(nullptr, nullptr, "zh_CN.UTF-8"), Language::kChinese);
  EXPECT_EQ(LanguageFromLocale(nullptr, nullptr, "zh_TW.UTF-8"), Language::kChinese);
  EXPECT_EQ(LanguageFromLocale(nullptr, nullptr, "en_US.UTF-8"), Language::kEnglish);
  EXPECT_EQ(LanguageFromLocale(nullptr, nullptr, nullptr), Language::kEnglish);
  EXPECT_EQ(LanguageFromLocale("", "", "C.UTF-8"), Language::kEnglish);
  // POSIX order: LC_ALL, then LC_MESSAGES, then LANG; an empty one is unset.
  EXPECT_EQ(LanguageFromLocale("C", nullptr, "zh_CN.UTF-8"), Language::kEnglish);
  EXPECT_EQ(LanguageFromLocale("", "zh_CN.UTF-8", "en_US.UTF-8"), Language::kChinese);
  EXPECT_EQ(LanguageFromLocale("zh_CN.GB18030", "en_US", "en_US"), Language::kChinese);
  EXPECT_EQ(LanguageFromLocale(nullptr, nullptr, "zhx"), Language::kEnglish);  // not a "zh" locale
  EXPECT_EQ(ParseLanguage("zh-CN"), Language::kChinese);
  EXPECT_EQ(ParseLanguage("zh_cn"), Language::kChinese);
  EXPECT_EQ(ParseLanguage("en"), Language::kEnglish);
  EXPECT_EQ(ParseLanguage("fr"), std::nullopt);
  EXPECT_EQ(ParseLanguage(""), std::nullopt);
  EXPECT_STREQ(LanguageCode(Language::kChinese), "zh-CN");
  EXPECT_STREQ(LanguageCode(Language::kEnglish), "en");
}

TEST(I18nGlyphs, TheAtlasIsAskedForEveryCharacterOfTheChineseAndNoMore) {
  std::set<char32_t> points;
  AddCodepoints("a\xC2\xB7\xE6\x92\xAD\xF0\x9F\x98\x80z", &points);  // a · 播 😀 z
  EXPECT_EQ(points, (std::set<char32_t>{0xB7, 0x64AD, 0x1F600}));
  points.clear();
  AddCodepoints("\xE6\x92", &points);  // cut short: drawn as the replacement character
  EXPECT_EQ(points, (std::set<char32_t>{0xFFFD}));

  const std::set<char32_t> needed = ChineseCodepoints({});
  std::set<char32_t> expected;
  for (const PhraseEntry& e : ChinesePhrases()) AddCodepoints(e.chinese, &expected);
  for (const SpecTextEntry& e : ChineseSpecTexts()) {
    AddCodepoints(e.title, &expected);
    AddCodepoints(e.help, &expected);
  }
  AddCodepoints(LanguageName(Language::kChinese), &expected);
  EXPECT_EQ(needed, expected);
  EXPECT_GT(needed.size(), 300u);
  EXPECT_LT(needed.size(), 2000u);  // a few hundred characters, not the font's 20,000
  EXPECT_TRUE(needed.count(0x6C14) != 0);  // 气 (气泡)
  EXPECT_TRUE(ChineseCodepoints({"\xE9\xBE\x98"}).count(0x9F98) != 0);  // a lab's text adds its own: 龘

  // Ranges: neighbours join, the list ends with 0, nothing above 16 bits.
  EXPECT_EQ(GlyphRangesOf({0x41, 0x42, 0x43, 0x4E00, 0x1F600}),
            (std::vector<std::uint16_t>{0x41, 0x43, 0x4E00, 0x4E00, 0}));
  const std::vector<std::uint16_t> ranges = GlyphRangesOf(needed);
  std::size_t covered = 0;
  for (std::size_t i = 0; i + 1 < ranges.size(); i += 2) covered += ranges[i + 1] - ranges[i] + 1u;
  EXPECT_EQ(covered, needed.size());
}

TEST(I18nGlyphs, LabTextsAreReadFromEveryLabFolder) {
  const fs::path dir = fs::temp_directory_path() / ("shardlab-i18n-test-" + std::to_string(::getpid()));
  fs::create_directories(dir / "01-a");
  fs::create_directories(dir / "02-b");
  std::ofstream(dir / "01-a" / "lab.zh-CN.toml") << "title = \"\xE7\x8E\xAF\"\n";   // 环
  std::ofstream(dir / "02-b" / "idea.zh-CN.txt") << "\xE6\xA1\xB6\n";               // 桶
  std::ofstream(dir / "02-b" / "notes.md") << "\xE9\xBE\x98\n";                      // not a lab text
  std::set<char32_t> points;
  for (const std::string& text : LabTexts(dir.string(), "")) AddCodepoints(text, &points);
  EXPECT_EQ(points, (std::set<char32_t>{0x73AF, 0x6876}));
  EXPECT_TRUE(LabTexts((dir / "missing").string(), "").empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace shardlab::gui
