// Help > Keyboard shortcuts and Help > About, as modal popups.
#pragma once

namespace shardlab::gui {

enum class HelpPopup { kShortcuts, kAbout };

/// Asks for `popup` to open; it appears at the next DrawHelpPopups.
void OpenHelpPopup(HelpPopup popup);

/// Draws whichever help popup is open. Call once per frame at the top
/// level (outside any panel window), so OpenPopup and BeginPopupModal
/// share an ID stack.
void DrawHelpPopups();

}  // namespace shardlab::gui
