// The two themes as data. Phase colours follow the Okabe–Ito palette, which
// stays distinguishable for the common colour-vision deficiencies; the light
// theme darkens and saturates them so they survive a washed-out projector
// on white. Pipeline ops take their colour from the micro-batch instead
// (MicrobatchColor; the rule lives in pipeline_gantt, where it is tested).
// Ranks have eight hues of their own (RankColor), spaced around the wheel
// and told apart by lightness too, so GPU 2 is one colour in every view.
#include "app/gui/app/theme.h"

#include <algorithm>
#include <cmath>

#include "app/gui/model/pipeline_gantt.h"

namespace shardlab::gui {
namespace {

/// ImGui's packed layout (IM_COL32) without including imgui.h.
constexpr Color Rgb(std::uint32_t rgb, std::uint32_t alpha = 255) {
  const std::uint32_t r = (rgb >> 16) & 0xFF;
  const std::uint32_t g = (rgb >> 8) & 0xFF;
  const std::uint32_t b = rgb & 0xFF;
  return (alpha << 24) | (b << 16) | (g << 8) | r;
}

/// Per-channel linear mix of two packed colours, `t` in [0, 1].
Color Mix(Color a, Color b, double t) {
  Color out = 0;
  for (int shift = 0; shift < 32; shift += 8) {
    const double ca = (a >> shift) & 0xFF;
    const double cb = (b >> shift) & 0xFF;
    out |= static_cast<Color>(std::lround(ca + (cb - ca) * t)) << shift;
  }
  return out;
}

/// Phase colours and the three stops of the link load ramp of one theme.
struct Palette {
  Color phases[14];  // indexed by Phase
  Color load_mid;    // half load: amber, so 50% reads differently from idle and full
};

Palette DarkPalette() {
  return {{
              Rgb(0x9AA0A6),  // none
              Rgb(0xE69F00),  // reduce-scatter: orange
              Rgb(0x56B4E9),  // all-gather: sky blue
              Rgb(0x2BC48F),  // broadcast: bluish green
              Rgb(0xE8613A),  // reduce: vermillion
              Rgb(0xD884B5),  // all-to-all: reddish purple
              Rgb(0xF0E442),  // forward: yellow
              Rgb(0x3D8FD6),  // backward: blue
              Rgb(0xB8B8B8),  // optimizer: light grey
              Rgb(0x8CCFD9),  // weight gradient: pale cyan, apart from forward and backward
              Rgb(0xB9A2F2),  // MoE router: lavender
              Rgb(0xF08A5D),  // MoE dispatch: salmon
              Rgb(0x78C850),  // MoE expert: leaf green (the long bars of a hot expert)
              Rgb(0x4FB8E8),  // MoE combine: cyan-blue
          },
          Rgb(0xFFC233)};
}

Palette LightPalette() {
  return {{
              Rgb(0x6B6B6B),  // none
              Rgb(0xC45A00),  // reduce-scatter: dark orange
              Rgb(0x005FB8),  // all-gather: strong blue
              Rgb(0x00784A),  // broadcast: dark green
              Rgb(0xB3141B),  // reduce: red
              Rgb(0x8E2C8A),  // all-to-all: purple
              Rgb(0x8A6D00),  // forward: dark yellow
              Rgb(0x1F3D99),  // backward: navy
              Rgb(0x444444),  // optimizer: dark grey
              Rgb(0x00707F),  // weight gradient: dark cyan
              Rgb(0x5B3FB0),  // MoE router: violet
              Rgb(0xC2410C),  // MoE dispatch: burnt orange
              Rgb(0x2E7D32),  // MoE expert: green
              Rgb(0x01579B),  // MoE combine: deep blue
          },
          Rgb(0xE08A00)};
}

Theme MakeDark() {
  Theme t;
  t.kind = ThemeKind::kDark;
  t.background = Rgb(0x16191E);
  t.text = Rgb(0xE8EAED);
  t.text_dim = Rgb(0x9AA0A6);
  t.grid = Rgb(0x3A3F47);
  t.tile_gpu = Rgb(0x2E7D32);     // NVIDIA-ish green: a GPU reads as a GPU
  t.tile_switch = Rgb(0x5E4B8B);
  t.tile_cpu = Rgb(0x37597A);
  t.tile_nic = Rgb(0x7A5B2E);
  t.tile_border = Rgb(0xC8CCD2);
  t.host_frame = Rgb(0x7F8894);
  t.link_idle = Rgb(0x59616D);
  t.link_busy = Rgb(0xFF4B2B);
  t.cursor = Rgb(0xFFFFFF);
  t.folded = Rgb(0x7C838D);
  t.bubble = Rgb(0xFF5C5C);
  t.error = Rgb(0xFF6B6B);
  t.path = Rgb(0xFFB020);
  t.selected = Rgb(0x3FD8FF);
  t.fault = Rgb(0xFF3FA0);
  return t;
}

Theme MakeLight() {
  Theme t;
  t.kind = ThemeKind::kLight;
  t.background = Rgb(0xFFFFFF);
  t.text = Rgb(0x000000);
  t.text_dim = Rgb(0x3C3C3C);     // still 10:1 on white: projectors eat mid greys
  t.grid = Rgb(0xB0B0B0);
  t.tile_gpu = Rgb(0x1B6E20);
  t.tile_switch = Rgb(0x4A2F86);
  t.tile_cpu = Rgb(0x1F4E79);
  t.tile_nic = Rgb(0x7A4A00);
  t.tile_border = Rgb(0x000000);
  t.host_frame = Rgb(0x333333);
  t.link_idle = Rgb(0x8C8C8C);
  t.link_busy = Rgb(0xC0001A);
  t.cursor = Rgb(0x000000);
  t.folded = Rgb(0x777777);
  t.bubble = Rgb(0xD0101A);
  t.error = Rgb(0xC00000);
  t.path = Rgb(0xB35900);
  t.selected = Rgb(0x0057C8);
  t.fault = Rgb(0xC0007A);
  return t;
}

const Palette& PaletteOf(ThemeKind kind) {
  static const Palette dark = DarkPalette();
  static const Palette light = LightPalette();
  return kind == ThemeKind::kLight ? light : dark;
}

}  // namespace

Color Theme::PhaseColor(Phase phase) const {
  const auto index = static_cast<std::size_t>(phase);
  const Palette& palette = PaletteOf(kind);
  return index < std::size(palette.phases) ? palette.phases[index] : palette.phases[0];
}

Color Theme::MicrobatchColor(Phase phase, int microbatch) const {
  if (phase != Phase::kForward && phase != Phase::kBackward && phase != Phase::kWeightGrad) {
    return PhaseColor(phase);
  }
  return Rgb(HsvToRgb(MicrobatchHsv(phase, microbatch, kind == ThemeKind::kLight)));
}

Color Theme::RankColor(int rank) const {
  // Blue, orange, green, red, purple, yellow, teal, pink: neighbours in
  // rank order differ in hue and in lightness.
  static constexpr std::uint32_t kDark[] = {0x4E9BE6, 0xF28E2B, 0x59C26A, 0xE45756,
                                            0xB07AE0, 0xE8C547, 0x5CC8C0, 0xF58FB8};
  static constexpr std::uint32_t kLight[] = {0x1F5FAF, 0xC25E00, 0x2E8540, 0xB8282A,
                                             0x6F3FA0, 0x8F7400, 0x1F7F78, 0xB8196B};
  const std::size_t index = static_cast<std::size_t>(rank < 0 ? 0 : rank) % std::size(kDark);
  return Rgb(kind == ThemeKind::kLight ? kLight[index] : kDark[index]);
}

Color Theme::MemoryColor(MemoryCategory category) const {
  const bool light = kind == ThemeKind::kLight;
  switch (category) {
    case MemoryCategory::kParameters: return PhaseColor(Phase::kAllGather);
    case MemoryCategory::kGradients: return PhaseColor(Phase::kReduceScatter);
    case MemoryCategory::kOptimizerStates: return Rgb(light ? 0x8E2C8A : 0xCC79A7);  // reddish purple
    case MemoryCategory::kActivations: return Rgb(light ? 0x00784A : 0x2BA37A);      // bluish green
    case MemoryCategory::kGatheredParameters: return Rgb(light ? 0x5A9BD8 : 0xA6DBF7);  // a paler sky
    case MemoryCategory::kOther: break;
  }
  return Rgb(light ? 0x6B6B6B : 0x8A9099);
}

Color Theme::LinkLoadColor(double utilization) const {
  // idle -> amber at half load -> busy at full: three stops read better on
  // a projector than one long gradient, where 30% and 60% look alike.
  const double u = std::isfinite(utilization) ? std::clamp(utilization, 0.0, 1.0) : 0.0;
  const Color mid = PaletteOf(kind).load_mid;
  return u < 0.5 ? Mix(link_idle, mid, u / 0.5) : Mix(mid, link_busy, (u - 0.5) / 0.5);
}

const Theme& GetTheme(ThemeKind kind) {
  static const Theme dark = MakeDark();
  static const Theme light = MakeLight();
  return kind == ThemeKind::kLight ? light : dark;
}

}  // namespace shardlab::gui
