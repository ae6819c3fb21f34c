// The app in Chinese, end to end: the real `shardlab` binary in scripted
// mode with --glyph-check, which reads the last frame's draw data back and
// counts the characters drawn from the font atlas and those drawn as the
// missing-glyph box (the atlas's fallback glyph). A Chinese window with a
// lab open must draw hundreds of Chinese characters and no box; with a
// "CJK" font that has no Chinese in it the same window must fail the check,
// so the check can see a box. Window tests need an X display.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "app/gui/app/fonts.h"
#include "tests/common/run_program.h"

namespace shardlab::gui {
namespace {

namespace fs = std::filesystem;

const std::string kRingLab = SHARDLAB_TEST_DATA_DIR "/lab_panel/01-mini-ring";

bool HaveDisplay() {
  const char* display = std::getenv("DISPLAY");
  return display != nullptr && display[0] != '\0';
}

/// --glyph-check's line, read back.
struct GlyphLine {
  std::string language;
  int drawn = -1;
  int cjk = -1;
  int fell_back = -1;
};

std::optional<GlyphLine> ParseGlyphLine(const std::string& out) {
  const std::regex re(R"(glyph check \(([a-zA-Z-]+)\): (\d+) characters drawn \((\d+) CJK\), (\d+) fell back)");
  std::smatch m;
  if (!std::regex_search(out, m, re)) return std::nullopt;
  return GlyphLine{m[1].str(), std::stoi(m[2].str()), std::stoi(m[3].str()), std::stoi(m[4].str())};
}

test_util::ProgramResult RunApp(std::vector<std::string> args, const test_util::TempDir& dir) {
  const std::vector<std::string> common = {"--frames", "3", "--glyph-check", "--window-width", "1280",
                                           "--window-height", "800", "--progress-dir",
                                           (dir.path() / "progress").string(), "--lab", kRingLab};
  args.insert(args.end(), common.begin(), common.end());
  return test_util::RunProgram(SHARDLAB_APP_PATH, args, dir.path());
}

TEST(GuiChinese, APanelInChineseDrawsNoMissingGlyphBoxes) {
  if (!HaveDisplay()) GTEST_SKIP() << "no X display (DISPLAY is unset): run under xvfb-run";
  if (FindCjkFont().empty()) GTEST_SKIP() << "no CJK font installed (scripts/install-deps.sh installs fonts-wqy-microhei)";
  test_util::TempDir dir;
  const test_util::ProgramResult r = RunApp({"--lang", "zh-CN"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::optional<GlyphLine> line = ParseGlyphLine(r.out);
  ASSERT_TRUE(line.has_value()) << r.out;
  EXPECT_EQ(line->language, "zh-CN");
  EXPECT_EQ(line->fell_back, 0) << r.out;
  // Menus, panel titles, the scenario's fields, the lab panel's buttons:
  // well over a hundred Chinese characters on screen.
  EXPECT_GT(line->cjk, 100) << r.out;
  EXPECT_GT(line->drawn, line->cjk);
}

TEST(GuiChinese, AFontWithoutChineseFailsTheCheck) {
  if (!HaveDisplay()) GTEST_SKIP() << "no X display (DISPLAY is unset): run under xvfb-run";
  // DejaVu Sans is a readable font without a single CJK glyph: every Chinese
  // character falls back to the box, and the check must say so.
  std::string latin_only;
  for (const char* path : kFontPaths) {
    if (fs::exists(path)) latin_only = path;
  }
  if (latin_only.empty()) GTEST_SKIP() << "DejaVu Sans is not installed";
  test_util::TempDir dir;
  const test_util::ProgramResult r = RunApp({"--lang", "zh-CN", "--cjk-font", latin_only}, dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::optional<GlyphLine> line = ParseGlyphLine(r.out);
  ASSERT_TRUE(line.has_value()) << r.out;
  EXPECT_GT(line->fell_back, 100) << r.out;
  EXPECT_EQ(line->cjk, 0) << r.out;
  EXPECT_NE(r.err.find("drawn as the missing-glyph box"), std::string::npos) << r.err;
}

TEST(GuiChinese, WithoutACjkFontTheAppSaysSoOnceAndShowsEnglish) {
  if (!HaveDisplay()) GTEST_SKIP() << "no X display (DISPLAY is unset): run under xvfb-run";
  test_util::TempDir dir;
  const test_util::ProgramResult r =
      RunApp({"--lang", "zh-CN", "--cjk-font", (dir.path() / "no-such-font.ttc").string()}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("no CJK font found for Chinese"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("showing English"), std::string::npos) << r.err;
  const std::optional<GlyphLine> line = ParseGlyphLine(r.out);
  ASSERT_TRUE(line.has_value()) << r.out;
  EXPECT_EQ(line->language, "en");
  EXPECT_EQ(line->fell_back, 0) << r.out;
  EXPECT_EQ(line->cjk, 0) << r.out;
}

TEST(GuiChinese, TheLocalePicksChineseAndLangOverridesIt) {
  if (!HaveDisplay()) GTEST_SKIP() << "no X display (DISPLAY is unset): run under xvfb-run";
  if (FindCjkFont().empty()) GTEST_SKIP() << "no CJK font installed";
  // The child inherits this environment: a Chinese locale, nothing set above LANG.
  struct Env {
    std::string name;
    std::optional<std::string> old;
  };
  std::vector<Env> saved;
  for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* value = std::getenv(name);
    saved.push_back({name, value != nullptr ? std::optional<std::string>(value) : std::nullopt});
    unsetenv(name);
  }
  setenv("LANG", "zh_CN.UTF-8", 1);
  test_util::TempDir dir;
  const test_util::ProgramResult chinese = RunApp({}, dir);
  const test_util::ProgramResult english = RunApp({"--lang", "en"}, dir);
  for (const Env& e : saved) {
    if (e.old) {
      setenv(e.name.c_str(), e.old->c_str(), 1);
    } else {
      unsetenv(e.name.c_str());
    }
  }
  ASSERT_EQ(chinese.exit_code, 0) << chinese.err;
  ASSERT_EQ(english.exit_code, 0) << english.err;
  const std::optional<GlyphLine> zh = ParseGlyphLine(chinese.out);
  const std::optional<GlyphLine> en = ParseGlyphLine(english.out);
  ASSERT_TRUE(zh && en) << chinese.out << english.out;
  EXPECT_EQ(zh->language, "zh-CN");
  EXPECT_GT(zh->cjk, 100);
  EXPECT_EQ(en->language, "en");
  EXPECT_EQ(en->cjk, 0);  // "简体中文" is baked for View > Language, but the closed menu draws none
  EXPECT_EQ(en->fell_back, 0);
}

TEST(GuiChinese, BadLangFlagIsOneLineAndExitTwo) {
  test_util::TempDir dir;
  const test_util::ProgramResult r = test_util::RunProgram(SHARDLAB_APP_PATH, {"--lang", "fr"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "shardlab: error: --lang: unknown language 'fr' (use zh-CN or en)\n");
  const test_util::ProgramResult g = test_util::RunProgram(SHARDLAB_APP_PATH, {"--glyph-check"}, dir.path());
  EXPECT_EQ(g.exit_code, 2);
  EXPECT_NE(g.err.find("--glyph-check: needs --frames N"), std::string::npos) << g.err;
}

}  // namespace
}  // namespace shardlab::gui
