#include "app/gui/app/test_log.h"

#include <imgui.h>
// The last item's flags (ImGui 1.86 has no public GetItemFlags): a
// disabled widget is logged as such, so a test does not wait to hover it.
#include <imgui_internal.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string_view>

namespace shardlab::gui::test_log {
namespace {

struct Mark {
  int x0, y0, x1, y1;
  const char* state;  // hidden, disabled, clipped, shown, hovered or active
  bool operator==(const Mark& o) const {
    return x0 == o.x0 && y0 == o.y0 && x1 == o.x1 && y1 == o.y1 && std::string_view(state) == o.state;
  }
};

// UI thread only, like ImGui itself.
std::ofstream g_out;
std::map<std::string, Mark> g_frame;   // marked this frame
std::map<std::string, Mark> g_logged;  // as the log last said

int Px(float v) { return static_cast<int>(std::lround(v)); }

}  // namespace

bool Open(const std::string& path) {
  g_out.open(path, std::ios::out | std::ios::trunc);
  return g_out.good();
}

bool IsOpen() { return g_out.is_open(); }

void Line(const std::string& text) {
  if (!g_out.is_open()) return;
  g_out << text << '\n' << std::flush;
}

/// True when the centre of [min, max], where a test clicks, lies well
/// inside what the window draws now: a widget cut by its panel's edge there
/// is "clipped" (a selectable's rectangle overhangs its popup a little on
/// every side, so the whole rectangle is no test).
bool CentreVisible(const ImVec2& min, const ImVec2& max) {
  const ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 clip_min = draw->GetClipRectMin();
  const ImVec2 clip_max = draw->GetClipRectMax();
  const float x = (min.x + max.x) / 2, y = (min.y + max.y) / 2;
  const float margin = 4;
  return x >= clip_min.x + margin && x <= clip_max.x - margin && y >= clip_min.y + margin &&
         y <= clip_max.y - margin;
}

void MarkRect(const std::string& name, float x0, float y0, float x1, float y1) {
  if (!g_out.is_open()) return;
  const ImVec2 min(x0, y0), max(x1, y1);
  const char* state = !ImGui::IsRectVisible(min, max)                                    ? "hidden"
                      : ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(min, max) ? "hovered"
                      : !CentreVisible(min, max)                                         ? "clipped"
                                                                                         : "shown";
  g_frame[name] = Mark{Px(x0), Px(y0), Px(x1), Px(y1), state};
}

void MarkItem(const std::string& name) {
  if (!g_out.is_open()) return;
  const ImVec2 min = ImGui::GetItemRectMin();
  const ImVec2 max = ImGui::GetItemRectMax();
  const bool disabled = (GImGui->LastItemData.InFlags & ImGuiItemFlags_Disabled) != 0;
  const char* state = !ImGui::IsItemVisible()          ? "hidden"
                      : disabled                        ? "disabled"
                      : ImGui::IsItemActive()           ? "active"
                      : ImGui::IsItemHovered()          ? "hovered"
                      : !CentreVisible(min, max)        ? "clipped"
                                                        : "shown";
  g_frame[name] = Mark{Px(min.x), Px(min.y), Px(max.x), Px(max.y), state};
}

void EndFrame() {
  if (!g_out.is_open()) return;
  for (const auto& [name, mark] : g_frame) {
    const auto logged = g_logged.find(name);
    if (logged != g_logged.end() && logged->second == mark) continue;
    char line[64];
    std::snprintf(line, sizeof line, " %d %d %d %d %s", mark.x0, mark.y0, mark.x1, mark.y1, mark.state);
    Line("item " + name + line);
  }
  for (const auto& [name, mark] : g_logged) {
    if (g_frame.count(name) == 0) Line("gone " + name);
  }
  g_logged.swap(g_frame);
  g_frame.clear();
}

}  // namespace shardlab::gui::test_log
