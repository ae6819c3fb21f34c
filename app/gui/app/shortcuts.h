// Keyboard shortcuts: Space, Right, Left, R, Ctrl +/-/0, Ctrl Q.
//
// ImGui 1.86 keeps only whether a key is down each frame, so a press and
// release that land in one frame (a quick tap on a slow frame, xdotool)
// would be lost. A GLFW key callback records presses instead, and the app
// takes them once per frame.
#pragma once

#include <vector>

struct GLFWwindow;

namespace shardlab::gui {

enum class Shortcut {
  kPlayPause,   // Space
  kStep,        // Right arrow (repeats while held)
  kStepBack,    // Left arrow (repeats while held)
  kReset,       // R
  kFontBigger,  // Ctrl + (Ctrl =, keypad +)
  kFontSmaller, // Ctrl - (keypad -)
  kFontReset,   // Ctrl 0
  kQuit,        // Ctrl Q
};

/// Installs the recording key callback on `window`. Call before
/// ImGui_ImplGlfw_InitForOpenGL(window, true), which chains to it.
void InstallShortcutRecorder(GLFWwindow* window);

/// The shortcuts pressed since the last call, in order (call after
/// ImGui::NewFrame). While a text field has the keyboard (typing "r" into a
/// path must not reset the replay) or a popup (menu, combo, dialog) is
/// open, Space, R and the arrows pressed then are dropped; the Ctrl ones
/// (font size, quit) are kept.
std::vector<Shortcut> TakeShortcuts();

}  // namespace shardlab::gui
