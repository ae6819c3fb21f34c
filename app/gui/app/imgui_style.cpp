#include "app/gui/app/imgui_style.h"

#include <imgui.h>

namespace shardlab::gui {
namespace {

ImVec4 Rgba(int rgb, float alpha = 1.0f) {
  return ImVec4(static_cast<float>((rgb >> 16) & 0xFF) / 255.0f,
                static_cast<float>((rgb >> 8) & 0xFF) / 255.0f,
                static_cast<float>(rgb & 0xFF) / 255.0f, alpha);
}

void DarkColors(ImGuiStyle& style) {
  ImGui::StyleColorsDark(&style);
  ImVec4* c = style.Colors;
  c[ImGuiCol_Text] = Rgba(0xE8EAED);
  c[ImGuiCol_TextDisabled] = Rgba(0x8A9099);
  c[ImGuiCol_WindowBg] = Rgba(0x1E2228);
  c[ImGuiCol_ChildBg] = Rgba(0x16191E);
  c[ImGuiCol_PopupBg] = Rgba(0x262B33);
  c[ImGuiCol_Border] = Rgba(0x3A3F47);
  c[ImGuiCol_FrameBg] = Rgba(0x2C323B);
  c[ImGuiCol_FrameBgHovered] = Rgba(0x38404B);
  c[ImGuiCol_FrameBgActive] = Rgba(0x434C59);
  c[ImGuiCol_TitleBg] = Rgba(0x262B33);
  c[ImGuiCol_TitleBgActive] = Rgba(0x2F3640);
  c[ImGuiCol_MenuBarBg] = Rgba(0x262B33);
  c[ImGuiCol_Button] = Rgba(0x34507A);
  c[ImGuiCol_ButtonHovered] = Rgba(0x41679E);
  c[ImGuiCol_ButtonActive] = Rgba(0x4F7BBB);
  c[ImGuiCol_Header] = Rgba(0x34507A);
  c[ImGuiCol_HeaderHovered] = Rgba(0x41679E);
  c[ImGuiCol_HeaderActive] = Rgba(0x4F7BBB);
  c[ImGuiCol_SliderGrab] = Rgba(0x6FA0E0);
  c[ImGuiCol_SliderGrabActive] = Rgba(0x8DB6EE);
  c[ImGuiCol_CheckMark] = Rgba(0x8DB6EE);
  c[ImGuiCol_PlotHistogram] = Rgba(0x56B4E9);
}

// High contrast for projectors: black on white, every control framed,
// nothing conveyed by a pale tint alone.
void LightColors(ImGuiStyle& style) {
  ImGui::StyleColorsLight(&style);
  ImVec4* c = style.Colors;
  c[ImGuiCol_Text] = Rgba(0x000000);
  c[ImGuiCol_TextDisabled] = Rgba(0x4A4A4A);
  c[ImGuiCol_WindowBg] = Rgba(0xFFFFFF);
  c[ImGuiCol_ChildBg] = Rgba(0xFFFFFF);
  c[ImGuiCol_PopupBg] = Rgba(0xFFFFFF);
  c[ImGuiCol_Border] = Rgba(0x000000);
  c[ImGuiCol_FrameBg] = Rgba(0xEDEDED);
  c[ImGuiCol_FrameBgHovered] = Rgba(0xDADADA);
  c[ImGuiCol_FrameBgActive] = Rgba(0xC8C8C8);
  c[ImGuiCol_TitleBg] = Rgba(0xE0E0E0);
  c[ImGuiCol_TitleBgActive] = Rgba(0xD0D0D0);
  c[ImGuiCol_MenuBarBg] = Rgba(0xE6E6E6);
  c[ImGuiCol_Button] = Rgba(0xD6E4F5);
  c[ImGuiCol_ButtonHovered] = Rgba(0xB3CDEE);
  c[ImGuiCol_ButtonActive] = Rgba(0x8FB3E3);
  c[ImGuiCol_Header] = Rgba(0xB3CDEE);
  c[ImGuiCol_HeaderHovered] = Rgba(0x9DBFEA);
  c[ImGuiCol_HeaderActive] = Rgba(0x7FA9E0);
  c[ImGuiCol_SliderGrab] = Rgba(0x0B4F9C);
  c[ImGuiCol_SliderGrabActive] = Rgba(0x083A73);
  c[ImGuiCol_CheckMark] = Rgba(0x000000);
  c[ImGuiCol_Separator] = Rgba(0x000000);
  c[ImGuiCol_PlotHistogram] = Rgba(0x005FB8);
  c[ImGuiCol_ScrollbarGrab] = Rgba(0x6E6E6E);
}

}  // namespace

void ApplyImGuiStyle(ThemeKind kind) {
  ImGuiStyle style;
  if (kind == ThemeKind::kLight) {
    LightColors(style);
    style.FrameBorderSize = 1.0f;
    style.WindowBorderSize = 1.5f;
  } else {
    DarkColors(style);
    style.FrameBorderSize = 0.0f;
    style.WindowBorderSize = 1.0f;
  }
  style.WindowRounding = 0.0f;   // panels tile the window edge to edge
  style.FrameRounding = 3.0f;
  style.GrabRounding = 3.0f;
  style.WindowPadding = ImVec2(10, 8);
  style.FramePadding = ImVec2(6, 4);
  style.ItemSpacing = ImVec2(8, 6);
  // The menu bar is pinned to an exact height (menu_bar.h); a safe-area
  // padding would add to it.
  style.DisplaySafeAreaPadding = ImVec2(0, 0);
  ImGui::GetStyle() = style;
}

}  // namespace shardlab::gui
