#include "app/gui/views/draw_util.h"

#include <algorithm>
#include <cmath>

namespace shardlab::gui {
namespace {

float Channel(Color color, int shift) { return static_cast<float>((color >> shift) & 0xFF); }

}  // namespace

Color WithAlpha(Color color, float alpha) {
  const float a = Channel(color, IM_COL32_A_SHIFT) * std::clamp(alpha, 0.0f, 1.0f);
  return (color & ~IM_COL32_A_MASK) | (static_cast<Color>(a + 0.5f) << IM_COL32_A_SHIFT);
}

Color MixColor(Color color, Color other, float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  Color out = 0;
  for (int shift : {IM_COL32_R_SHIFT, IM_COL32_G_SHIFT, IM_COL32_B_SHIFT, IM_COL32_A_SHIFT}) {
    const float v = Channel(color, shift) + (Channel(other, shift) - Channel(color, shift)) * t;
    out |= static_cast<Color>(v + 0.5f) << shift;
  }
  return out;
}

Color ContrastText(Color background) {
  // Rec. 601 luma is plenty to choose between black and white.
  const float luma = 0.299f * Channel(background, IM_COL32_R_SHIFT) +
                     0.587f * Channel(background, IM_COL32_G_SHIFT) +
                     0.114f * Channel(background, IM_COL32_B_SHIFT);
  return luma > 140.0f ? IM_COL32(16, 16, 20, 255) : IM_COL32(250, 250, 250, 255);
}

void Hatch(ImDrawList* list, ImVec2 min, ImVec2 max, float anchor_x, Color color, float spacing_px) {
  const float h = max.y - min.y;
  if (h <= 0 || spacing_px <= 0) return;
  // Lines run from (a, max.y) up to (a + h, min.y); the first that reaches min.x.
  float a = anchor_x + std::floor((min.x - h - anchor_x) / spacing_px) * spacing_px;
  for (; a < max.x; a += spacing_px) {
    const float t0 = std::max(0.0f, min.x - a);
    const float t1 = std::min(h, max.x - a);
    if (t0 < t1) list->AddLine(ImVec2(a + t0, max.y - t0), ImVec2(a + t1, max.y - t1), color);
  }
}

const std::string* FitText(const std::string* candidates, int count, float max_width_px) {
  for (int i = 0; i < count; ++i) {
    if (candidates[i].empty()) continue;
    if (ImGui::CalcTextSize(candidates[i].c_str()).x <= max_width_px) return &candidates[i];
  }
  return nullptr;
}

void DrawCenteredText(ImDrawList* list, ImVec2 center, Color color, const std::string& text) {
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  list->AddText(ImVec2(center.x - size.x * 0.5f, center.y - size.y * 0.5f), color, text.c_str());
}

ImVec2 TextSizeAt(float font_px, const std::string& text) {
  return ImGui::GetFont()->CalcTextSizeA(font_px, 1e30f, 0.0f, text.c_str());
}

void DrawCenteredTextAt(ImDrawList* list, ImVec2 center, Color color, const std::string& text,
                        float font_px) {
  const ImVec2 size = TextSizeAt(font_px, text);
  list->AddText(ImGui::GetFont(), font_px, ImVec2(center.x - size.x * 0.5f, center.y - size.y * 0.5f),
                color, text.c_str());
}

Color ErrorShadeColor(const Theme& theme, double shade) {
  return MixColor(theme.text, theme.error, static_cast<float>(std::clamp(shade, 0.0, 1.0)));
}

}  // namespace shardlab::gui
