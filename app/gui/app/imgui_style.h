// ImGui's own widget colours and metrics for a theme, so buttons, frames
// and text match the views' Theme (theme.h stays free of imgui.h).
#pragma once

#include "app/gui/app/theme.h"

namespace shardlab::gui {

/// Sets ImGui::GetStyle() for `kind` (colours, rounding, borders). Call
/// between frames; sizes are in pixels at font scale 1, as the fonts are
/// rebuilt at their real size rather than scaled.
void ApplyImGuiStyle(ThemeKind kind);

}  // namespace shardlab::gui
