// Fonts: DejaVu Sans from the system (package fonts-dejavu-core), found at
// run time, at a real pixel size per font scale, so Ctrl +/- gives crisp
// text for a classroom instead of a stretched bitmap. Without the package
// the app falls back to ImGui's built-in font and says so once.
#pragma once

#include <algorithm>
#include <cmath>
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

/// The fixed-width font BuildFontAtlas added (a little smaller than the
/// regular one, so tables fit), or null when there is none.
ImFont* MonoFont();

/// Refills ImGui's font atlas at kBaseFontPx * `font_scale` (clamped),
/// with Latin, Greek (the formulas' α), arrows and maths symbols. Returns
/// "" or a note saying the built-in font is used instead. Does not touch
/// GL: call before the renderer is initialised, or use ReloadFonts.
std::string BuildFontAtlas(float font_scale);

/// Between frames, with the OpenGL3 backend running: rebuilds the atlas
/// and re-uploads its texture. Returns what BuildFontAtlas returns.
std::string ReloadFonts(float font_scale);

/// The pixel size BuildFontAtlas uses for `font_scale` (header-only, so
/// the screenshot tests can compute the menu bar's height).
inline float FontPixels(float font_scale) {
  const float scale = std::isfinite(font_scale) ? std::clamp(font_scale, kMinFontScale, kMaxFontScale)
                                                : 1.0f;
  return std::round(kBaseFontPx * scale);
}

}  // namespace shardlab::gui
