// Small drawing helpers shared by the topology and Gantt views: colour
// arithmetic on packed ImGui colours and text that must fit a box.
#pragma once

#include <string>

#include <imgui.h>

#include "app/gui/app/theme.h"

namespace shardlab::gui {

/// `color` with its alpha multiplied by `alpha` (0..1).
Color WithAlpha(Color color, float alpha);
/// `color` mixed toward `other` by `t` (0: color, 1: other), alpha included.
Color MixColor(Color color, Color other, float t);
/// Black or white, whichever reads better on `background`.
Color ContrastText(Color background);
/// The compare overlay's colour scale: shade 0 (the runs agree) is the
/// text colour, 1 (kFullShadeFactor apart) the error colour.
Color ErrorShadeColor(const Theme& theme, double shade);

/// 45-degree lines across [min, max], `spacing_px` apart and anchored at
/// screen x `anchor_x`, so the pattern moves with what it marks.
void Hatch(ImDrawList* list, ImVec2 min, ImVec2 max, float anchor_x, Color color, float spacing_px = 7.0f);

/// The first of `candidates` (longest first) whose width fits `max_width_px`,
/// or nullptr when none does.
const std::string* FitText(const std::string* candidates, int count, float max_width_px);

/// Draws `text` centred on `center`.
void DrawCenteredText(ImDrawList* list, ImVec2 center, Color color, const std::string& text);

/// Size of `text` in the current font drawn `font_px` high.
ImVec2 TextSizeAt(float font_px, const std::string& text);
/// Draws `text` centred on `center` in the current font, `font_px` high.
void DrawCenteredTextAt(ImDrawList* list, ImVec2 center, Color color, const std::string& text,
                        float font_px);

}  // namespace shardlab::gui
