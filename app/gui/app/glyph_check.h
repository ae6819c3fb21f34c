// Glyph check: which characters a frame really drew, read back from ImGui's
// draw data, so a test can prove that a Chinese panel shows no missing-glyph
// boxes.
//
//   ImGui::Render() ─► ImDrawData: per command, quads textured from the atlas
//                     ─► a quad's top-left UV is one glyph's (U0, V0): which
//                        code point was drawn
//                     ─► a vertex inside the font's FallbackGlyph UV box: a
//                        character the font lacks, drawn as the box (U+FFFD
//                        or '?', ImFont::FindGlyph's answer for it)
//
// A glyph clipped at a panel's edge has its UVs moved: it counts as drawn
// only when it falls back (its vertices still lie inside the box).
#pragma once

#include <string>

struct ImDrawData;

namespace shardlab::gui {

struct GlyphCount {
  int drawn = 0;      // glyph quads of any font in the atlas (whole ones)
  int cjk = 0;        // of those, CJK ideographs, punctuation and fullwidth forms (U+2E80..U+FFEF)
  int fell_back = 0;  // quads of a font's fallback glyph: a character no font had
};

/// Counts the glyphs `draw_data` draws from the current font atlas.
GlyphCount CountGlyphs(const ImDrawData& draw_data);

/// "glyph check: 1234 characters drawn (456 Chinese), 0 fell back to the
/// missing-glyph box; atlas 1024x2048, 1203 glyphs"
std::string GlyphCheckLine(const GlyphCount& count);

}  // namespace shardlab::gui
