#include "app/gui/app/glyph_check.h"

#include <imgui.h>

#include <map>
#include <utility>
#include <vector>

#include "app/gui/app/fonts.h"
#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

struct UvBox {
  float u0, v0, u1, v1;
  bool Holds(const ImVec2& uv) const { return uv.x >= u0 && uv.x <= u1 && uv.y >= v0 && uv.y <= v1; }
};

}  // namespace

GlyphCount CountGlyphs(const ImDrawData& draw_data) {
  GlyphCount count;
  const ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  if (atlas == nullptr) return count;
  // Every glyph's top-left UV -> its code point; every font's fallback box.
  std::map<std::pair<float, float>, unsigned> glyph_at;
  std::vector<UvBox> fallbacks;
  for (const ImFont* font : atlas->Fonts) {
    for (const ImFontGlyph& g : font->Glyphs) {
      if (g.Visible) glyph_at.emplace(std::make_pair(g.U0, g.V0), g.Codepoint);
    }
    if (const ImFontGlyph* f = font->FallbackGlyph) fallbacks.push_back(UvBox{f->U0, f->V0, f->U1, f->V1});
  }
  int fallback_indices = 0;  // a quad has 6 indices, all inside the box
  int corner_indices = 0;    // a quad names its top-left vertex twice
  int cjk_corners = 0;
  for (int l = 0; l < draw_data.CmdListsCount; ++l) {
    const ImDrawList* list = draw_data.CmdLists[l];
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      if (cmd.UserCallback != nullptr || cmd.TextureId != atlas->TexID) continue;
      for (unsigned i = 0; i < cmd.ElemCount; ++i) {
        const ImDrawIdx index = list->IdxBuffer[static_cast<int>(cmd.IdxOffset + i)];
        const ImVec2 uv = list->VtxBuffer[static_cast<int>(cmd.VtxOffset + index)].uv;
        for (const UvBox& box : fallbacks) {
          if (box.Holds(uv)) {
            ++fallback_indices;
            break;
          }
        }
        const auto it = glyph_at.find(std::make_pair(uv.x, uv.y));
        if (it == glyph_at.end() || it->second <= ' ') continue;
        ++corner_indices;
        if (it->second >= 0x2E80 && it->second <= 0xFFEF) ++cjk_corners;  // not U+FFFD, the box
      }
    }
  }
  count.drawn = corner_indices / 2;
  count.cjk = cjk_corners / 2;
  count.fell_back = (fallback_indices + 5) / 6;
  return count;
}

std::string GlyphCheckLine(const GlyphCount& count) {
  const CjkAtlasInfo& info = LastCjkAtlasInfo();
  const ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  const int glyphs = atlas != nullptr && !atlas->Fonts.empty() ? atlas->Fonts[0]->Glyphs.Size : 0;
  const unsigned fallback = glyphs > 0 && atlas->Fonts[0]->FallbackGlyph != nullptr
                               ? atlas->Fonts[0]->FallbackGlyph->Codepoint
                               : 0;
  return Format("glyph check (%s): %d characters drawn (%d CJK), %d fell back to the missing-glyph box "
                "(U+%04X); atlas %dx%d built in %.0f ms, %d glyphs in the regular font (%d non-ASCII asked for, "
                "%d missing from %s)",
                LanguageCode(CurrentLanguage()), count.drawn, count.cjk, count.fell_back, fallback,
                atlas != nullptr ? atlas->TexWidth : 0, atlas != nullptr ? atlas->TexHeight : 0, info.build_ms, glyphs,
                info.asked, info.missing, info.path.empty() ? "no CJK font" : info.path.c_str());
}

}  // namespace shardlab::gui
