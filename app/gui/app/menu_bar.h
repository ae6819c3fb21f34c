// The main menu bar: File (open trace, exports, quit), View (theme, text size,
// language), Labs, Help.
//
// Its height is pinned to MenuBarHeightPx, a function of the font size
// alone, so the app and the screenshot tests compute the same panel
// rectangles with ComputePanelLayout.
#pragma once

#include <string>

#include "app/gui/app/theme.h"
#include "app/gui/i18n/language.h"

namespace shardlab::gui {

/// Vertical padding above and below the menu bar's text.
inline constexpr float kMenuBarPaddingYPx = 4.0f;

/// Height of the menu bar for text `font_px` tall (see FontPixels).
inline float MenuBarHeightPx(float font_px) { return font_px + 2.0f * kMenuBarPaddingYPx; }

enum class MenuAction {
  kNone,
  kOpenTrace,
  kOpenCompareTrace,
  kExportScreenshot,
  kExportTrace,
  kQuit,
  kThemeDark,
  kThemeLight,
  kFontBigger,
  kFontSmaller,
  kFontReset,
  kShowLabs,      // the lab panel's chooser
  kHideLabPanel,
  kShowShortcuts,
  kShowAbout,
  kTogglePlanner,
  kLanguageEnglish,  // View > Language
  kLanguageChinese,
};

/// What the menu bar shows besides its menus.
struct MenuBarInfo {
  ThemeKind theme = ThemeKind::kDark;
  float font_scale = 1.0f;
  bool planner_open = false;      // the 3D layout planner window
  bool can_export_trace = false;  // a recorded run exists
  bool can_compare = false;       // a finished run or a trace is shown
  bool lab_panel_open = false;
  Language language = Language::kEnglish;
  bool chinese_font = true;       // the atlas can draw Chinese (a CJK font was found)
  std::string status;             // right-aligned note ("Saved run.png"), may be empty
  Color status_color = 0;
};

/// Draws the bar at the top of the window; returns the item chosen this
/// frame, if any.
MenuAction DrawMenuBar(const MenuBarInfo& info);

}  // namespace shardlab::gui
