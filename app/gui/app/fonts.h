// Fonts: DejaVu Sans from the system (package fonts-dejavu-core), found at
// run time, at a real pixel size per font scale, so Ctrl +/- gives crisp
// text for a classroom instead of a stretched bitmap. Without the package
// the app falls back to ImGui's built-in font and says so once.
//
// Chinese: a CJK font from the system (fonts-wqy-microhei or fonts-noto-cjk)
// is merged into both fonts, with only the characters asked for
// (CjkRequest: ChineseCodepoints() in Chinese, the four of "简体中文" for
// View > Language in English), so the atlas stays small and start-up fast.
#pragma once

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

struct ImFont;

namespace shardlab::gui {

/// Text height in pixels at font scale 1.
inline constexpr float kBaseFontPx = 16.0f;
inline constexpr float kMinFontScale = 0.5f;
inline constexpr float kMaxFontScale = 4.0f;

/// Where DejaVu Sans is looked for, first hit wins.
inline constexpr const char* kFontPaths[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
};

/// DejaVu Sans Mono, for preformatted text (the lab panel's formulas and
/// tables); without it they use the regular font.
inline constexpr const char* kMonoFontPaths[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/dejavu/DejaVuSansMono.ttf",
};

/// Where a CJK font is looked for (file, face in a collection), first hit
/// wins: WenQuanYi Micro Hei (5 MB), then Noto Sans CJK SC.
struct CjkFontFile {
  const char* path;
  int face;
};
inline constexpr CjkFontFile kCjkFontPaths[] = {
    {"/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", 0},
    {"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2},  // faces: JP, KR, SC, TC, HK
    {"/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc", 0},
};

/// The characters to bake from a CJK font.
struct CjkRequest {
  std::string font_path;          // "" : the first of kCjkFontPaths that is readable
  std::set<char32_t> codepoints;  // empty: no CJK font is loaded at all
};

/// What the last BuildFontAtlas did about CJK.
struct CjkAtlasInfo {
  std::string path;       // the font used; "" when none was found
  int asked = 0;          // code points asked for
  int baked = 0;          // of those, glyphs in the regular font after the build
  int missing = 0;        // asked for but in no font: they would draw as the fallback box
  int atlas_width = 0;    // the atlas texture, pixels
  int atlas_height = 0;
  double build_ms = 0;    // time to build the atlas (CPU side)
};
const CjkAtlasInfo& LastCjkAtlasInfo();

/// The first readable CJK font, or "" when none is installed.
std::string FindCjkFont();

/// The fixed-width font BuildFontAtlas added (a little smaller than the
/// regular one, so tables fit), or null when there is none.
ImFont* MonoFont();

/// Refills ImGui's font atlas at kBaseFontPx * `font_scale` (clamped),
/// with Latin, Greek (the formulas' α), arrows and maths symbols, U+FFFD
/// (the fallback glyph, drawn for a character no font has) and `cjk`'s
/// characters from the CJK font. Returns "" or a note saying the built-in
/// font is used instead. Does not touch GL: call before the renderer is
/// initialised, or use ReloadFonts.
std::string BuildFontAtlas(float font_scale, const CjkRequest& cjk = {});

/// Between frames, with the OpenGL3 backend running: rebuilds the atlas
/// and re-uploads its texture. Returns what BuildFontAtlas returns.
std::string ReloadFonts(float font_scale, const CjkRequest& cjk = {});

/// The pixel size BuildFontAtlas uses for `font_scale` (header-only, so
/// the screenshot tests can compute the menu bar's height).
inline float FontPixels(float font_scale) {
  const float scale = std::isfinite(font_scale) ? std::clamp(font_scale, kMinFontScale, kMaxFontScale)
                                                : 1.0f;
  return std::round(kBaseFontPx * scale);
}

}  // namespace shardlab::gui
