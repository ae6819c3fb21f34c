#include "app/gui/app/fonts.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <imgui.h>
#include <imgui_impl_opengl3.h>

namespace shardlab::gui {
namespace {

/// Code point ranges the views' text uses; the atlas keeps a pointer to
/// them, so they live as long as the program.
const ImWchar* GlyphRanges() {
  static const ImWchar ranges[] = {
      0x0020, 0x00FF,  // Basic Latin + Latin-1 (µ, ·, ×)
      0x0370, 0x03FF,  // Greek (α, β, Ψ)
      0x1E21, 0x1E21,  // ḡ (Megatron's sequence-parallel operator)
      0x2010, 0x2027,  // dashes, quotes, bullet, ellipsis
      0x2190, 0x21FF,  // arrows (→ ← ↔)
      0x2200, 0x22FF,  // maths (− ≈ ≤ ∑)
      0x2500, 0x257F,  // box drawing (the seed texts' sketches)
      0x25A0, 0x25FF,  // geometric shapes (▶ ■ ●)
      0,
  };
  return ranges;
}

/// The first readable DejaVu Sans; ImGui asserts on an unreadable path, so
/// look before handing it over.
template <std::size_t N>
const char* FindFontFile(const char* const (&paths)[N]) {
  for (const char* path : paths) {
    std::ifstream probe(path, std::ios::binary);
    if (probe.good()) return path;
  }
  return nullptr;
}

ImFont* g_mono_font = nullptr;  // in the current atlas; reset with it

/// Monospaced text at this share of the regular size: a table line of 60
/// characters fits a lab panel 480 px wide.
constexpr float kMonoScale = 0.875f;

}  // namespace

std::string BuildFontAtlas(float font_scale) {
  ImFontAtlas& atlas = *ImGui::GetIO().Fonts;
  atlas.Clear();
  g_mono_font = nullptr;
  const float pixels = FontPixels(font_scale);
  if (const char* path = FindFontFile(kFontPaths)) {
    ImFontConfig config;
    config.OversampleH = 2;  // crisp enough, and a quarter of the default atlas
    if (atlas.AddFontFromFileTTF(path, pixels, &config, GlyphRanges()) != nullptr) {
      // The first font added stays the default; the mono one is optional.
      if (const char* mono = FindFontFile(kMonoFontPaths)) {
        g_mono_font = atlas.AddFontFromFileTTF(mono, std::round(pixels * kMonoScale), &config, GlyphRanges());
      }
      return "";
    }
    atlas.Clear();
  }
  // ProggyClean is a 13 px bitmap font: scaled it blurs, but it is always there.
  ImFontConfig config;
  config.SizePixels = pixels;
  atlas.AddFontDefault(&config);
  return std::string("DejaVu Sans not found (install fonts-dejavu-core); using ImGui's built-in "
                     "font");
}

ImFont* MonoFont() { return g_mono_font; }

std::string ReloadFonts(float font_scale) {
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  std::string note = BuildFontAtlas(font_scale);
  ImGui_ImplOpenGL3_CreateFontsTexture();
  return note;
}

}  // namespace shardlab::gui
