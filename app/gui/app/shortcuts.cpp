#include "app/gui/app/shortcuts.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <vector>

namespace shardlab::gui {
namespace {

std::vector<Shortcut> g_pressed;  // UI thread only: GLFW calls back from glfwPollEvents

/// The shortcut a key event means, if any.
bool ShortcutFor(int key, int action, int mods, Shortcut* out) {
  const bool press = action == GLFW_PRESS;
  const bool repeat = action == GLFW_REPEAT;
  if (!press && !repeat) return false;
  if ((mods & GLFW_MOD_CONTROL) != 0) {
    if (!press) return false;
    switch (key) {
      case GLFW_KEY_EQUAL:
      case GLFW_KEY_KP_ADD: *out = Shortcut::kFontBigger; return true;
      case GLFW_KEY_MINUS:
      case GLFW_KEY_KP_SUBTRACT: *out = Shortcut::kFontSmaller; return true;
      case GLFW_KEY_0:
      case GLFW_KEY_KP_0: *out = Shortcut::kFontReset; return true;
      case GLFW_KEY_Q: *out = Shortcut::kQuit; return true;
      default: return false;
    }
  }
  if ((mods & (GLFW_MOD_ALT | GLFW_MOD_SUPER)) != 0) return false;
  switch (key) {
    case GLFW_KEY_RIGHT: *out = Shortcut::kStep; return true;  // held: keeps stepping
    case GLFW_KEY_LEFT: *out = Shortcut::kStepBack; return true;
    case GLFW_KEY_SPACE: *out = Shortcut::kPlayPause; return press;
    case GLFW_KEY_R: *out = Shortcut::kReset; return press;
    default: return false;
  }
}

void OnKey(GLFWwindow* window, int key, int scancode, int action, int mods) {
  Shortcut shortcut;
  if (ShortcutFor(key, action, mods, &shortcut)) g_pressed.push_back(shortcut);
}

}  // namespace

void InstallShortcutRecorder(GLFWwindow* window) { glfwSetKeyCallback(window, OnKey); }

std::vector<Shortcut> TakeShortcuts() {
  std::vector<Shortcut> taken;
  taken.swap(g_pressed);
  // While a text field or a popup has the keys, Space, R and the arrows are
  // theirs; the Ctrl shortcuts are nobody's text, so Ctrl+Q still quits
  // with the cursor in a lab's answer box.
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopup)) {
    std::erase_if(taken, [](Shortcut s) {
      return s == Shortcut::kPlayPause || s == Shortcut::kStep || s == Shortcut::kStepBack || s == Shortcut::kReset;
    });
  }
  return taken;
}

}  // namespace shardlab::gui
