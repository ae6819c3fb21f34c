#include "app/gui/app/fonts.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <vector>

#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include "app/gui/i18n/glyph_set.h"

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
      0xFFFD, 0xFFFD,  // the replacement character: ImGui's fallback glyph when present
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
CjkAtlasInfo g_cjk_info;
/// The CJK glyph ranges of the current atlas (it keeps a pointer to them).
std::vector<ImWchar> g_cjk_ranges;

bool Readable(const std::string& path) {
  std::ifstream probe(path, std::ios::binary);
  return probe.good();
}

/// The face of `path` in a collection: the listed one, else the first.
int FaceOf(const std::string& path) {
  for (const CjkFontFile& f : kCjkFontPaths) {
    if (path == f.path) return f.face;
  }
  return 0;
}

/// Merges `path`'s glyphs for g_cjk_ranges into the font added last.
void MergeCjk(ImFontAtlas& atlas, const std::string& path, float pixels) {
  ImFontConfig config;
  config.MergeMode = true;
  config.OversampleH = 1;  // CJK strokes are dense: no horizontal oversampling (ImGui's advice)
  config.PixelSnapH = true;
  config.FontNo = FaceOf(path);
  atlas.AddFontFromFileTTF(path.c_str(), pixels, &config, g_cjk_ranges.data());
}

/// Monospaced text at this share of the regular size: a table line of 60
/// characters fits a lab panel 480 px wide.
constexpr float kMonoScale = 0.875f;

}  // namespace

std::string FindCjkFont() {
  for (const CjkFontFile& f : kCjkFontPaths) {
    if (Readable(f.path)) return f.path;
  }
  return "";
}

const CjkAtlasInfo& LastCjkAtlasInfo() { return g_cjk_info; }

std::string BuildFontAtlas(float font_scale, const CjkRequest& cjk) {
  const auto started = std::chrono::steady_clock::now();
  ImFontAtlas& atlas = *ImGui::GetIO().Fonts;
  atlas.Clear();
  g_mono_font = nullptr;
  g_cjk_info = CjkAtlasInfo{};
  const float pixels = FontPixels(font_scale);
  std::string cjk_path;
  if (!cjk.codepoints.empty()) {
    cjk_path = cjk.font_path.empty() ? FindCjkFont() : (Readable(cjk.font_path) ? cjk.font_path : "");
    const std::vector<std::uint16_t> ranges = GlyphRangesOf(cjk.codepoints);
    g_cjk_ranges.assign(ranges.begin(), ranges.end());
    g_cjk_info.asked = static_cast<int>(std::count_if(cjk.codepoints.begin(), cjk.codepoints.end(),
                                                      [](char32_t c) { return c <= 0xFFFF; }));
  }
  g_cjk_info.path = cjk_path;
  if (const char* path = FindFontFile(kFontPaths)) {
    ImFontConfig config;
    config.OversampleH = 2;  // crisp enough, and a quarter of the default atlas
    if (ImFont* regular = atlas.AddFontFromFileTTF(path, pixels, &config, GlyphRanges())) {
      if (!cjk_path.empty()) MergeCjk(atlas, cjk_path, pixels);
      // The first font added stays the default; the mono one is optional.
      if (const char* mono = FindFontFile(kMonoFontPaths)) {
        g_mono_font = atlas.AddFontFromFileTTF(mono, std::round(pixels * kMonoScale), &config, GlyphRanges());
        if (g_mono_font != nullptr && !cjk_path.empty()) MergeCjk(atlas, cjk_path, std::round(pixels * kMonoScale));
      }
      // Built here, not at the texture's upload, so the report can count.
      atlas.Build();
      for (const char32_t c : cjk.codepoints) {
        if (c > 0xFFFF) continue;
        if (regular->FindGlyphNoFallback(static_cast<ImWchar>(c)) != nullptr) {
          ++g_cjk_info.baked;
        } else {
          ++g_cjk_info.missing;
        }
      }
      g_cjk_info.atlas_width = atlas.TexWidth;
      g_cjk_info.atlas_height = atlas.TexHeight;
      g_cjk_info.build_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
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

std::string ReloadFonts(float font_scale, const CjkRequest& cjk) {
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  std::string note = BuildFontAtlas(font_scale, cjk);
  ImGui_ImplOpenGL3_CreateFontsTexture();
  return note;
}

}  // namespace shardlab::gui
