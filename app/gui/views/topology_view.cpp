// The topology view: the machine as the preset wires it, with every link
// drawn as two lanes (one per direction, traffic keeps right), lane width by
// bandwidth, lane colour by the load at the replay cursor, and each chunk in
// flight as a labelled pill riding its lane.
//
//        GPU0 ═══════════ GPU1        ═══ upper lane: GPU0 -> GPU1
//         ▲ ║ (C)──►       ║          ═══ lower lane: GPU1 -> GPU0
//           ║              ║          (C) chunk C in flight, 40% of its route
//
// A tensor-parallel layer names its collectives on the pills ("AR1 RS·B":
// all-reduce 1, reduce-scatter pass, chunk B; crowded pills keep only the
// chunk) and adds a line under the caption: which collective runs and what
// it carries, or which GPUs compute. A ZeRO run does the same with its
// gathers and reduce-scatters ("AG L3 fwd·B": chunk B of the all-gather of
// layer 3's parameters before its forward). Every GPU tile of a rank wears
// the rank's colour along its bottom edge, as the Gantt rows and weights do.
//
// Per frame: lay out (only when the topology or the panel's aspect
// changes), update LinkActivity at the cursor, then draw back to front:
// host frames, links (shader callback or plain lines), tiles, pills,
// caption, legend, tooltip.
#include <algorithm>
#include "app/gui/model/run_detail.h"
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/gui/gl/link_renderer.h"
#include "app/gui/model/recorded_machine.h"
#include "app/gui/model/fault_marks.h"
#include "app/gui/model/tp_layer_view.h"
#include "app/gui/views/draw_util.h"
#include "app/gui/views/run_key.h"
#include "app/gui/views/views.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"
#include "engine/scenarios/three_d_scenario.h"

namespace shardlab::gui {
namespace {

constexpr float kCanvasMarginPx = 26.0f;
// Lane width spans this range on a log scale of GB/s per direction.
constexpr float kThinLanePx = 1.5f;
constexpr float kThickLanePx = 8.0f;
constexpr double kThinGbps = 13.0;    // PCIe3 x16
constexpr double kThickGbps = 900.0;  // NVLink5 to the switch (B200)
// Presets give "never limits" links (a shared PCIe bus) 10^6 GB/s and put the
// real limit on the bus node; such links are drawn with the node's figure.
constexpr double kUnlimitedLinkGbps = 1e5;
constexpr float kLaneGapPx = 1.0f;    // between a link's two lanes
constexpr int kMaxLabelledGpus = 64;  // beyond this, tiles are bare squares
constexpr float kHoverSlackPx = 3.0f;
constexpr float kAspectTolerance = 0.02f;  // relative change that re-lays out

/// A screen rectangle in pixels (PxRect lives in imgui_internal.h; we stay
/// on ImGui's public API).
struct PxRect {
  ImVec2 Min;
  ImVec2 Max;
  float GetWidth() const { return Max.x - Min.x; }
  float GetHeight() const { return Max.y - Min.y; }
  ImVec2 GetSize() const { return {GetWidth(), GetHeight()}; }
  ImVec2 GetCenter() const { return {(Min.x + Max.x) * 0.5f, (Min.y + Max.y) * 0.5f}; }
  bool Contains(ImVec2 p) const { return p.x >= Min.x && p.x < Max.x && p.y >= Min.y && p.y < Max.y; }
};

/// View units ([0,1]², y down) to screen pixels inside the canvas margins.
struct CanvasTransform {
  ImVec2 origin_px;
  ImVec2 size_px;
  ImVec2 ToPx(Vec2 v) const { return {origin_px.x + v.x * size_px.x, origin_px.y + v.y * size_px.y}; }
  PxRect ToPx(const Rect& r) const { return {ToPx(r.min), ToPx(r.max)}; }
};

/// The bandwidth a link is drawn with, GB/s per direction.
Gbps DisplayGbps(const Topology& topology, const Link& link) {
  if (link.gbps < kUnlimitedLinkGbps) return link.gbps;
  Gbps limit = 0;
  for (int node : {link.a, link.b}) {
    const Gbps g = topology.nodes[static_cast<std::size_t>(node)].forward_gbps;
    if (g > 0) limit = limit > 0 ? std::min(limit, g) : g;
  }
  return limit > 0 ? limit : kThickGbps;
}

float LaneWidthPx(Gbps gbps) {
  const double t = (std::log(std::max(gbps, 1e-3)) - std::log(kThinGbps)) /
                   (std::log(kThickGbps) - std::log(kThinGbps));
  return kThinLanePx + (kThickLanePx - kThinLanePx) * static_cast<float>(std::clamp(t, 0.0, 1.0));
}

/// Offset that moves a lane travelling from `from` to `to` onto its right
/// side (screen y points down, so the right-hand normal is (-dy, dx)).
ImVec2 RightOffset(ImVec2 from, ImVec2 to, float distance_px) {
  const float dx = to.x - from.x;
  const float dy = to.y - from.y;
  const float length = std::sqrt(dx * dx + dy * dy);
  if (length < 1e-3f) return {0, 0};
  return {-dy / length * distance_px, dx / length * distance_px};
}

float DistanceToSegmentPx(ImVec2 p, ImVec2 a, ImVec2 b) {
  const float dx = b.x - a.x;
  const float dy = b.y - a.y;
  const float length2 = dx * dx + dy * dy;
  float t = length2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / length2 : 0.0f;
  t = std::clamp(t, 0.0f, 1.0f);
  const float ex = a.x + t * dx - p.x;
  const float ey = a.y + t * dy - p.y;
  return std::sqrt(ex * ex + ey * ey);
}

Color TileColor(const Theme& theme, NodeKind kind) {
  switch (kind) {
    case NodeKind::kGpu: return theme.tile_gpu;
    case NodeKind::kCpu: return theme.tile_cpu;
    case NodeKind::kNic: return theme.tile_nic;
    case NodeKind::kNvSwitch:
    case NodeKind::kPcieSwitch:
    case NodeKind::kNetSwitch: return theme.tile_switch;
  }
  return theme.tile_gpu;
}

/// "A100-SXM4-80GB" -> "A100": the part a student recognises.
std::string ShortModel(const std::string& model) { return model.substr(0, model.find('-')); }

std::string FormatGbps(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, gbps >= 100 ? "%.0f GB/s" : "%.1f GB/s", gbps);
  return text;
}

std::string FormatPercent(double fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.0f%%", fraction * 100.0);
  return text;
}

/// Everything the passes of one frame share.
struct FrameGeometry {
  std::vector<PxRect> tile_px;        // by node id
  std::vector<ImVec2> center_px;      // by node id
  std::vector<float> lane_width_px;   // by link id
  std::vector<Gbps> link_gbps;        // by link id, as drawn
  bool labelled = true;               // few enough GPUs for text on tiles
};

/// Where a lane from node `from` to node `to` runs, both ends in pixels.
void LaneEnds(const FrameGeometry& g, int from, int to, float lane_width_px, ImVec2* a, ImVec2* b) {
  const ImVec2 p = g.center_px[static_cast<std::size_t>(from)];
  const ImVec2 q = g.center_px[static_cast<std::size_t>(to)];
  const ImVec2 off = RightOffset(p, q, lane_width_px * 0.5f + kLaneGapPx * 0.5f);
  *a = {p.x + off.x, p.y + off.y};
  *b = {q.x + off.x, q.y + off.y};
}

/// Draws the legend (or only measures it when `list` is null); returns its height.
float LayoutLegend(ImDrawList* list, ImVec2 origin, float width_px, const Theme& theme,
                   bool pipeline, const PreparedTp* tp, const PreparedZero* zero) {
  const float line_h = ImGui::GetTextLineHeight();
  const float row_h = line_h + 6.0f;
  const float spacing = 18.0f;
  float x = origin.x;
  float y = origin.y + 3.0f;
  // Each item: a swatch of `swatch_w` pixels, then its text.
  auto item = [&](float swatch_w, const char* text, auto draw_swatch) {
    const float w = swatch_w + 6.0f + ImGui::CalcTextSize(text).x;
    if (x > origin.x && x + w > origin.x + width_px) {
      x = origin.x;
      y += row_h;
    }
    if (list != nullptr) {
      draw_swatch(ImVec2(x, y + line_h * 0.5f));
      list->AddText(ImVec2(x + swatch_w + 6.0f, y), theme.text_dim, text);
    }
    x += w + spacing;
  };
  item(40.0f, Tr("lane width = GB/s per direction"), [&](ImVec2 left) {
    // A wedge from the thinnest to the thickest lane.
    list->AddTriangleFilled(ImVec2(left.x, left.y), ImVec2(left.x + 40, left.y - kThickLanePx * 0.5f),
                            ImVec2(left.x + 40, left.y + kThickLanePx * 0.5f), theme.link_idle);
  });
  item(48.0f, Tr("colour = load (idle -> full)"), [&](ImVec2 left) {
    constexpr int kSteps = 8;
    for (int i = 0; i < kSteps; ++i) {
      const float x0 = left.x + 48.0f * i / kSteps;
      list->AddRectFilled(ImVec2(x0, left.y - 4), ImVec2(x0 + 48.0f / kSteps + 0.5f, left.y + 4),
                          theme.LinkLoadColor(static_cast<double>(i) / (kSteps - 1)));
    }
  });
  if (zero != nullptr) {
    const int stage = zero->scenario.params.stage;
    if (stage == 0) {
      item(14.0f, Tr("AR b0 RS\xC2\xB7" "B: chunk B of the all-reduce of bucket 0's gradients, reduce-scatter pass"),
           [&](ImVec2 left) {
             list->AddCircleFilled(ImVec2(left.x + 7, left.y), 6.0f, theme.PhaseColor(Phase::kReduceScatter));
           });
    } else {
      item(14.0f,
           stage == 3 ? Tr("RS L3\xC2\xB7" "C: chunk C of the reduce-scatter of layer 3's gradients")
                      : Tr("RS b1\xC2\xB7" "C: chunk C of the reduce-scatter of bucket 1's gradients"),
           [&](ImVec2 left) {
             list->AddCircleFilled(ImVec2(left.x + 7, left.y), 6.0f, theme.PhaseColor(Phase::kReduceScatter));
           });
      item(14.0f,
           stage == 3 ? Tr("AG L3 fwd\xC2\xB7" "B: chunk B of layer 3's parameters, gathered before its forward")
                      : Tr("AG b1 upd\xC2\xB7" "B: chunk B of bucket 1's updated parameters"),
           [&](ImVec2 left) {
             list->AddCircleFilled(ImVec2(left.x + 7, left.y), 6.0f, theme.PhaseColor(Phase::kAllGather));
           });
    }
    item(22.0f, Tr("GPU colour, as in the memory chart"), [&](ImVec2 left) {
      for (int r = 0; r < 4; ++r) {
        list->AddRectFilled(ImVec2(left.x + 5.5f * r, left.y - 3), ImVec2(left.x + 5.5f * r + 4.5f, left.y + 3),
                            theme.RankColor(r));
      }
    });
  } else if (tp != nullptr) {
    const bool sp = tp->layer.config.sequence_parallel;
    item(14.0f,
         sp ? Tr("RS1\xC2\xB7" "B: chunk B of reduce-scatter 1 (AG2\xC2\xB7" "C: of all-gather 2)")
            : Tr("AR1 RS\xC2\xB7" "B: chunk B of all-reduce 1, reduce-scatter pass (AG: all-gather)"),
         [&](ImVec2 left) {
           list->AddCircleFilled(ImVec2(left.x + 7, left.y), 6.0f, theme.PhaseColor(Phase::kReduceScatter));
         });
    item(22.0f, Tr("GPU colour, as in the weight blocks"), [&](ImVec2 left) {
      for (int r = 0; r < 4; ++r) {
        list->AddRectFilled(ImVec2(left.x + 5.5f * r, left.y - 3), ImVec2(left.x + 5.5f * r + 4.5f, left.y + 3),
                            theme.RankColor(r));
      }
    });
  } else if (pipeline) {
    item(14.0f, Tr("F3: activation of micro-batch 3 to the next stage"), [&](ImVec2 left) {
      list->AddCircleFilled(ImVec2(left.x + 7, left.y), 6.0f, theme.MicrobatchColor(Phase::kForward, 3));
    });
    item(14.0f, Tr("B3: its gradient back"), [&](ImVec2 left) {
      list->AddCircleFilled(ImVec2(left.x + 7, left.y), 6.0f, theme.MicrobatchColor(Phase::kBackward, 3));
    });
  } else {
    item(14.0f, Tr("chunk in flight (letter = chunk)"), [&](ImVec2 left) {
      list->AddCircleFilled(ImVec2(left.x + 7, left.y), 6.0f, theme.PhaseColor(Phase::kReduceScatter));
    });
  }
  item(26.0f, Tr("two lanes per link: traffic keeps right"), [&](ImVec2 left) {
    list->AddLine(ImVec2(left.x, left.y - 2.5f), ImVec2(left.x + 26, left.y - 2.5f), theme.link_idle, 2.0f);
    list->AddLine(ImVec2(left.x, left.y + 2.5f), ImVec2(left.x + 26, left.y + 2.5f), theme.link_idle, 2.0f);
  });
  return y + row_h - origin.y;
}

/// How far along a -> b (0..1) the segment leaves `r` grown by `margin_px`;
/// `a` is expected inside it (0 when it is not).
float ExitFraction(ImVec2 a, ImVec2 b, const PxRect& r, float margin_px) {
  const float lo_x = r.Min.x - margin_px, hi_x = r.Max.x + margin_px;
  const float lo_y = r.Min.y - margin_px, hi_y = r.Max.y + margin_px;
  if (a.x < lo_x || a.x > hi_x || a.y < lo_y || a.y > hi_y) return 0.0f;
  const float dx = b.x - a.x;
  const float dy = b.y - a.y;
  float t = 1.0f;
  if (dx > 0) t = std::min(t, (hi_x - a.x) / dx);
  if (dx < 0) t = std::min(t, (lo_x - a.x) / dx);
  if (dy > 0) t = std::min(t, (hi_y - a.y) / dy);
  if (dy < 0) t = std::min(t, (lo_y - a.y) / dy);
  return std::clamp(t, 0.0f, 1.0f);
}

/// A route as a polyline on its travel lanes: node centres shifted onto the
/// right-hand lane of every hop (corners hide under the tiles). The ends
/// are cut `end_margin_px` outside the sender's and receiver's tiles, so a
/// chunk at 0% or 100% sits beside the tile and never hides its name.
std::vector<ImVec2> RouteLanePoints(const FrameGeometry& g, const Route& route, float end_margin_px) {
  std::vector<int> nodes;
  nodes.reserve(route.via_nodes.size() + 2);
  nodes.push_back(route.src);
  nodes.insert(nodes.end(), route.via_nodes.begin(), route.via_nodes.end());
  nodes.push_back(route.dst);
  std::vector<ImVec2> points;
  points.reserve(2 * nodes.size());
  for (std::size_t i = 0; i + 1 < nodes.size(); ++i) {
    const float width = i < route.hops.size()
                            ? g.lane_width_px[static_cast<std::size_t>(route.hops[i].link)]
                            : kThinLanePx;
    ImVec2 a, b;
    LaneEnds(g, nodes[i], nodes[i + 1], width, &a, &b);
    points.push_back(a);
    points.push_back(b);
  }
  if (points.empty()) {
    points.push_back(g.center_px[static_cast<std::size_t>(route.src)]);
    return points;
  }
  const ImVec2 first_a = points.front();
  const ImVec2 first_b = points[1];
  const float t_out = ExitFraction(first_a, first_b, g.tile_px[static_cast<std::size_t>(route.src)], end_margin_px);
  const ImVec2 last_a = points[points.size() - 2];
  const ImVec2 last_b = points.back();
  const float t_in = ExitFraction(last_b, last_a, g.tile_px[static_cast<std::size_t>(route.dst)], end_margin_px);
  // A one-hop route whose tiles nearly touch keeps at least its midpoint.
  const bool one_hop = points.size() == 2;
  const float start_t = one_hop ? std::min(t_out, 0.5f) : t_out;
  const float end_t = one_hop ? std::min(t_in, 1.0f - start_t) : t_in;
  points.front() = ImVec2(first_a.x + (first_b.x - first_a.x) * start_t, first_a.y + (first_b.y - first_a.y) * start_t);
  points.back() = ImVec2(last_b.x + (last_a.x - last_b.x) * end_t, last_b.y + (last_a.y - last_b.y) * end_t);
  return points;
}

/// The point at `progress` (0..1) of the length of a lane polyline built by
/// RouteLanePoints (pairs of segment ends; the jumps between pairs are free).
ImVec2 PointAlongLanes(const std::vector<ImVec2>& points, double progress) {
  float total_px = 0;
  for (std::size_t i = 0; i + 1 < points.size(); i += 2) {
    total_px += std::hypot(points[i + 1].x - points[i].x, points[i + 1].y - points[i].y);
  }
  float remaining = static_cast<float>(std::clamp(progress, 0.0, 1.0)) * total_px;
  for (std::size_t i = 0; i + 1 < points.size(); i += 2) {
    const ImVec2 a = points[i];
    const ImVec2 b = points[i + 1];
    const float length = std::hypot(b.x - a.x, b.y - a.y);
    if (remaining <= length && length > 0) {
      const float t = remaining / length;
      return {a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t};
    }
    remaining -= length;
  }
  return points.back();
}

/// An arrowhead at `tip`, pointing from `from`.
void Arrowhead(ImDrawList* list, ImVec2 from, ImVec2 tip, float size, Color color) {
  const float dx = tip.x - from.x;
  const float dy = tip.y - from.y;
  const float length = std::sqrt(dx * dx + dy * dy);
  if (length < 1e-3f) return;
  const float ux = dx / length, uy = dy / length;
  list->AddTriangleFilled(tip, ImVec2(tip.x - ux * size - uy * size * 0.55f, tip.y - uy * size + ux * size * 0.55f),
                          ImVec2(tip.x - ux * size + uy * size * 0.55f, tip.y - uy * size - ux * size * 0.55f), color);
}

Color GroupKindColor(const Theme& theme, GroupKind kind);  // below: the 3D view's TP, PP, DP colours

/// The colour of pattern group `group` of `pattern`: a grid's groups by
/// kind (TP, PP, DP as the 3D view colours them), a ring's or a tree's
/// fixed, many groups each its own.
Color PatternColor(const Theme& theme, const CommPattern& pattern, int group) {
  const PatternGroup& g = pattern.groups[static_cast<std::size_t>(group)];
  if (!g.family.empty()) return GroupKindColor(theme, static_cast<GroupKind>(std::clamp(g.kind, 0, kGroupKindCount - 1)));
  if (pattern.groups.size() <= 2) return group == 0 ? theme.PhaseColor(Phase::kAllGather) : theme.PhaseColor(Phase::kForward);
  return theme.RankColor(group);
}

/// The run's communication pattern: each logical hop drawn along its
/// physical route's lanes, with an arrowhead, its number in its group when
/// there are few, and the legend (groups, the slowest hop) at the top left.
/// The hop whose route is slowest, when it is slower than the fastest (null
/// when every hop runs at the same speed: none holds the others back).
const PatternHop* SlowestHop(const CommPattern& pattern) {
  const PatternHop* slowest = nullptr;
  Gbps fastest = 0;
  for (const PatternHop& hop : pattern.hops) {
    if (hop.route.hops.empty()) continue;
    fastest = std::max(fastest, hop.route.bottleneck_gbps);
    if (slowest == nullptr || hop.route.bottleneck_gbps < slowest->route.bottleneck_gbps) slowest = &hop;
  }
  return slowest != nullptr && slowest->route.bottleneck_gbps < fastest * 0.999 ? slowest : nullptr;
}

void DrawPatternHops(ImDrawList* list, const FrameGeometry& g, const CommPattern& pattern, const Theme& theme) {
  if (pattern.empty()) return;
  const bool numbered = pattern.hops.size() <= 24;
  const PatternHop* slowest = SlowestHop(pattern);
  for (const PatternHop& hop : pattern.hops) {
    if (hop.route.hops.empty()) continue;
    const std::vector<ImVec2> lanes = RouteLanePoints(g, hop.route, 3.0f);
    if (lanes.size() < 2) continue;
    const Color colour = WithAlpha(PatternColor(theme, pattern, hop.group), 0.9f);
    // The slowest hop is drawn dashed-looking: a thinner line with a halo.
    const bool slow = slowest != nullptr && hop.route.bottleneck_gbps <= slowest->route.bottleneck_gbps * 1.001;
    for (std::size_t i = 0; i + 1 < lanes.size(); i += 2) {
      if (slow) list->AddLine(lanes[i], lanes[i + 1], WithAlpha(theme.fault, 0.55f), 7.0f);
      list->AddLine(lanes[i], lanes[i + 1], colour, 3.0f);
    }
    Arrowhead(list, lanes[lanes.size() - 2], lanes.back(), 9.0f, colour);
    if (numbered && g.labelled) {
      const ImVec2 a = lanes[0];
      const ImVec2 b = lanes[1];
      const ImVec2 mid((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f);
      const std::string n = std::to_string(hop.order);
      const float r = ImGui::GetTextLineHeight() * 0.45f + 2.0f;
      list->AddCircleFilled(mid, r, colour);
      DrawCenteredText(list, mid, ContrastText(colour), n);
    }
  }
}

using LegendLines = std::vector<std::pair<Color, std::string>>;

/// The pattern's legend: what is drawn, its groups, the slowest hop.
LegendLines PatternLegendLines(const Topology& topology, const CommPattern& pattern, const Theme& theme) {
  if (pattern.empty()) return {};
  const PatternHop* slowest = SlowestHop(pattern);
  std::vector<std::pair<Color, std::string>> lines;
  lines.push_back({theme.text, Format(Tr("algorithm on the machine: %s"), pattern.title.c_str())});
  constexpr std::size_t kMaxGroupLines = 3;
  if (!pattern.groups.empty() && !pattern.groups.front().family.empty()) {
    // A grid: one line per kind, its groups' ranks side by side.
    for (std::size_t i = 0; i < pattern.groups.size();) {
      const std::string& family = pattern.groups[i].family;
      std::string text = family + ":";
      const Color colour = PatternColor(theme, pattern, static_cast<int>(i));
      for (; i < pattern.groups.size() && pattern.groups[i].family == family; ++i) text += " [" + pattern.groups[i].members + "]";
      lines.push_back({colour, text});
    }
  } else {
    for (std::size_t i = 0; i < pattern.groups.size() && i < kMaxGroupLines; ++i) {
      lines.push_back({PatternColor(theme, pattern, static_cast<int>(i)), pattern.groups[i].name});
    }
    if (pattern.groups.size() > kMaxGroupLines) {
      lines.push_back({theme.text_dim,
                       Format(Tr("+%d more groups"), static_cast<int>(pattern.groups.size() - kMaxGroupLines))});
    }
  }
  if (slowest != nullptr) {
    std::string via;
    for (const LinkHop& h : slowest->route.hops) {
      via += (via.empty() ? "" : ", ") + std::string(LinkKindName(topology.links[static_cast<std::size_t>(h.link)].kind));
    }
    lines.push_back({theme.fault, Format(Tr("slowest hop GPU%d -> GPU%d: %s over %s"), slowest->from_rank,
                                         slowest->to_rank, FormatGbps(slowest->route.bottleneck_gbps).c_str(),
                                         via.c_str())});
  }
  return lines;
}

/// Draws the legend lines from `legend_at` down, each group with its colour.
void DrawPatternLegend(ImDrawList* list, const LegendLines& lines, const Theme& theme, ImVec2 legend_at) {
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const float y = legend_at.y + line_h * static_cast<float>(i);
    if (i > 0) {
      list->AddLine(ImVec2(legend_at.x, y + line_h * 0.45f), ImVec2(legend_at.x + 14, y + line_h * 0.45f),
                    lines[i].first, 3.0f);
    }
    list->AddText(ImVec2(legend_at.x + (i > 0 ? 18.0f : 0.0f), y), i == 0 ? theme.text : theme.text_dim,
                  lines[i].second.c_str());
  }
}

void DrawTile(ImDrawList* list, const PxRect& r, const Node& node, const NodeTile& tile,
              const Theme& theme, bool labelled, bool hovered) {
  const Color fill = TileColor(theme, node.kind);
  if (!labelled) {
    // A bare square centred in the tile: hundreds of GPUs read as a texture.
    const float side = std::max(2.0f, std::min(r.GetWidth(), r.GetHeight()));
    const ImVec2 c = r.GetCenter();
    list->AddRectFilled(ImVec2(c.x - side / 2, c.y - side / 2), ImVec2(c.x + side / 2, c.y + side / 2),
                        hovered ? MixColor(fill, theme.text, 0.35f) : fill);
    return;
  }
  const float rounding = std::min(6.0f, std::min(r.GetWidth(), r.GetHeight()) * 0.25f);
  list->AddRectFilled(r.Min, r.Max, hovered ? MixColor(fill, theme.text, 0.2f) : fill, rounding);
  list->AddRect(r.Min, r.Max, hovered ? theme.text : theme.tile_border, rounding, 0,
                hovered ? 2.0f : 1.0f);
  const Color ink = ContrastText(fill);
  const float room_w = r.GetWidth() - 6.0f;
  const float room_h = r.GetHeight() - 2.0f;
  const float full_px = ImGui::GetFontSize();
  const float small_px = std::max(8.0f, std::floor(full_px * 0.8f));
  // The name at full size, else smaller, else only its number: a crowded
  // box (16 GPUs in two hosts) still says which GPU is which.
  const std::string& label = tile.label;
  const std::size_t digits = label.find_last_not_of("0123456789");
  const std::string number = digits + 1 < label.size() ? label.substr(digits + 1) : "";
  struct Choice { const std::string* text; float font_px; };
  const Choice choices[] = {{&label, full_px}, {&label, small_px}, {&number, small_px}};
  const Choice* name = nullptr;
  ImVec2 name_size;
  for (const Choice& choice : choices) {
    if (choice.text->empty()) continue;
    name_size = TextSizeAt(choice.font_px, *choice.text);
    if (name_size.x <= room_w && name_size.y <= room_h) {
      name = &choice;
      break;
    }
  }
  if (name == nullptr) return;
  const ImVec2 c = r.GetCenter();
  // GPUs add their model on a second, smaller line when there is room.
  if (node.kind == NodeKind::kGpu && !node.device.model.empty() && name->text == &label) {
    for (const std::string& model : {node.device.model, ShortModel(node.device.model)}) {
      const ImVec2 model_size = TextSizeAt(small_px, model);
      if (model_size.x > room_w || name_size.y + model_size.y > room_h) continue;
      const float top = c.y - (name_size.y + model_size.y) * 0.5f;
      DrawCenteredTextAt(list, ImVec2(c.x, top + name_size.y * 0.5f), ink, label, name->font_px);
      DrawCenteredTextAt(list, ImVec2(c.x, top + name_size.y + model_size.y * 0.5f), WithAlpha(ink, 0.75f),
                         model, small_px);
      return;
    }
  }
  DrawCenteredTextAt(list, c, ink, *name->text, name->font_px);
}

void TileTooltip(const Topology& topology, int node_id) {
  const Node& node = topology.nodes[static_cast<std::size_t>(node_id)];
  ImGui::BeginTooltip();
  ImGui::Text("%s  (%s)", node.name.c_str(), NodeKindName(node.kind));
  if (node.kind == NodeKind::kGpu) {
    const auto it = std::find(topology.gpus.begin(), topology.gpus.end(), node_id);
    ImGui::Text(Tr("rank %d"), static_cast<int>(it - topology.gpus.begin()));
    if (!node.device.model.empty()) {
      ImGui::Text(Tr("%s, %s, %.0f GB/s HBM"), node.device.model.c_str(),
                  FormatBytes(node.device.memory_bytes).c_str(), node.device.memory_gbps);
    }
  }
  if (topology.num_hosts() > 1) ImGui::Text(Tr("host %d"), node.host);
  if (node.forward_gbps > 0) {
    ImGui::Text(Tr("shared: everything through it shares %s"), FormatGbps(node.forward_gbps).c_str());
  }
  ImGui::EndTooltip();
}

void LinkTooltip(const Topology& topology, const LinkActivity* activity, int link_id, Gbps shown_gbps) {
  const Link& link = topology.links[static_cast<std::size_t>(link_id)];
  const std::string& a = topology.nodes[static_cast<std::size_t>(link.a)].name;
  const std::string& b = topology.nodes[static_cast<std::size_t>(link.b)].name;
  ImGui::BeginTooltip();
  if (link.lanes > 1 && link.kind <= LinkKind::kNvLink5) {
    ImGui::Text("%s x%d  %s <-> %s", LinkKindName(link.kind), link.lanes, a.c_str(), b.c_str());
  } else {
    ImGui::Text("%s  %s <-> %s", LinkKindName(link.kind), a.c_str(), b.c_str());
  }
  if (link.gbps >= kUnlimitedLinkGbps) {
    ImGui::Text(Tr("shared bus: %s per direction for all its traffic"), FormatGbps(shown_gbps).c_str());
  } else {
    ImGui::Text(Tr("%s per direction, %s latency"), FormatGbps(link.gbps).c_str(),
                FormatTime(link.latency_ns).c_str());
  }
  for (bool forward : {true, false}) {
    const double load = activity != nullptr ? activity->LoadGbps(link_id, forward) : 0.0;
    ImGui::Text("%s -> %s: %s (%s)", (forward ? a : b).c_str(), (forward ? b : a).c_str(),
                FormatGbps(load).c_str(), FormatPercent(shown_gbps > 0 ? load / shown_gbps : 0).c_str());
  }
  ImGui::EndTooltip();
}

/// A tensor-parallel layer's second caption line: the collectives in
/// flight and what they carry, else who computes what, else "idle".
std::string TpNowLine(const ViewContext& ctx, const Plan& plan, const LinkActivity& activity,
                      const std::vector<TpCollectiveName>& names, TimeNs cursor_ns) {
  std::vector<int> seqs;
  std::vector<Phase> passes;
  for (const InFlight& f : activity.in_flight()) {
    if (f.collective_seq < 0) continue;
    if (std::find(seqs.begin(), seqs.end(), f.collective_seq) == seqs.end()) {
      seqs.push_back(f.collective_seq);
      passes.push_back(f.phase);
    }
  }
  std::string line;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const TpCollectiveName* n = FindTpCollective(names, seqs[i]);
    if (n == nullptr) continue;
    if (!line.empty()) line += Tr("; ");
    line += n->name + ": " + n->what;
    if (n->two_passes) {
      line += passes[i] == Phase::kReduceScatter ? Tr(", reduce-scatter pass (summing)")
                                                 : Tr(", all-gather pass (sharing the sums)");
    }
  }
  if (!line.empty()) return Format(Tr("now: %s"), line.c_str());
  const std::vector<RankCompute> ranks = RanksComputingAt(ctx.session.store(), plan, cursor_ns);
  std::vector<int> forward, backward;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].busy) continue;
    (ranks[r].phase == Phase::kBackward ? backward : forward).push_back(static_cast<int>(r));
  }
  if (!forward.empty()) line = Format(Tr("%s compute their forward blocks"), RankList(forward).c_str());
  if (!backward.empty()) {
    line += line.empty() ? "" : Tr("; ");
    line += Format(Tr("%s compute their backward blocks"), RankList(backward).c_str());
  }
  if (!line.empty()) return Format(Tr("now: %s (no communication)"), line.c_str());
  if (cursor_ns <= 0) return Tr("before the layer: press Step or Play");
  if (cursor_ns >= ctx.clock.run_end_ns()) return Tr("done: the layer's forward and backward pass are over");
  return Tr("now: nothing runs");
}

/// A ZeRO run's second caption line: the collectives in flight and what
/// they move, else what the GPUs compute, else where the run is.
std::string ZeroNowLine(const ViewContext& ctx, const Plan& plan, const LinkActivity& activity,
                        const std::vector<ZeroCollectiveName>& names, TimeNs cursor_ns) {
  const PreparedZero& zero = ctx.session.prepared()->Detail<PreparedZero>();
  std::vector<int> seqs;
  std::vector<Phase> passes;
  for (const InFlight& f : activity.in_flight()) {
    if (f.collective_seq < 0 || std::find(seqs.begin(), seqs.end(), f.collective_seq) != seqs.end()) continue;
    seqs.push_back(f.collective_seq);
    passes.push_back(f.phase);
  }
  std::string line;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const ZeroCollectiveName* n = FindZeroCollective(names, seqs[i]);
    if (n == nullptr) continue;
    line += (line.empty() ? "" : Tr("; ")) + n->tag + ": " + n->what;
    if (n->two_passes) {
      line += passes[i] == Phase::kReduceScatter ? Tr(", reduce-scatter pass (summing)")
                                                 : Tr(", all-gather pass (sharing the sums)");
    }
    if (i + 1 == seqs.size() && zero.scenario.params.steps > 1) {
      line += Format(Tr(" (Adam step %d)"), n->training_step + 1);
    }
  }
  if (!line.empty()) return Format(Tr("now: %s"), line.c_str());
  // Nothing moves: say what the busy GPUs compute (they all do the same).
  const std::vector<RankCompute> ranks = RanksComputingAt(ctx.session.store(), plan, cursor_ns);
  std::vector<int> busy;
  std::string what;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].busy || ranks[r].op < 0) continue;
    busy.push_back(static_cast<int>(r));
    if (what.empty()) what = ZeroComputeWords(plan.ops[static_cast<std::size_t>(ranks[r].op)], zero.zero);
  }
  if (!busy.empty()) {
    // "forward of layer 2 on this GPU's 8 rows" reads per GPU; drop "this GPU's".
    const std::size_t at = what.find("this GPU's ");
    if (at != std::string::npos) what.replace(at, 11, "their ");
    return Format(Tr("now: %s: %s (no communication)"), RankList(busy).c_str(), what.c_str());
  }
  if (cursor_ns <= 0) return Tr("before training: press Step or Play");
  if (cursor_ns >= ctx.clock.run_end_ns()) return Tr("done: every Adam step is over");
  return Tr("now: nothing runs");
}

/// A 3D run's group kind colour on the links: TP blue, PP yellow, DP red
/// (the all-gather, forward and reduce phase colours of the theme).
Color GroupKindColor(const Theme& theme, GroupKind kind) {
  switch (kind) {
    case GroupKind::kTensor: return theme.PhaseColor(Phase::kAllGather);
    case GroupKind::kPipeline: return theme.PhaseColor(Phase::kForward);
    case GroupKind::kData: return theme.PhaseColor(Phase::kReduce);
  }
  return theme.text;
}

/// A 3D run's controls (colour mode, a toggle per group kind) on the line
/// at `at`, and the legend of the chosen mode on the line below.
void GridControls(const Theme& theme, TopologyViewState& state, const GridColouring& colouring, ImVec2 at,
                  float width_px) {
  ImGui::SetCursorScreenPos(at);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(Tr("Colour by"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7.5f);
  if (ImGui::BeginCombo("##grid_mode", GridColourModeName(state.grid_mode))) {
    for (GridColourMode m : {GridColourMode::kTpGroup, GridColourMode::kPpStage, GridColourMode::kDpReplica,
                             GridColourMode::kRank}) {
      if (ImGui::Selectable(GridColourModeName(m), m == state.grid_mode)) state.grid_mode = m;
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::TextUnformatted(Tr("  links of"));
  for (int k = 0; k < kGroupKindCount; ++k) {
    ImGui::SameLine();
    const ImVec4 colour = ImGui::ColorConvertU32ToFloat4(GroupKindColor(theme, GroupKind(k)));
    ImGui::PushStyleColor(ImGuiCol_CheckMark, colour);
    ImGui::PushStyleColor(ImGuiCol_Text, colour);
    ImGui::Checkbox(GroupKindName(GroupKind(k)), &state.show_kind[static_cast<std::size_t>(k)]);
    ImGui::PopStyleColor(2);
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("%s", k == 0   ? Tr("links the TP all-reduces use")
                              : k == 1 ? Tr("links the activations and gradients between stages use")
                                       : Tr("links the DP gradient collectives use"));
    }
  }
  // The legend: a swatch and "TP group 3 = ranks 6,7" per group, wrapped.
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  float x = at.x;
  float y = at.y + ImGui::GetFrameHeightWithSpacing();
  const float swatch = ImGui::GetTextLineHeight() * 0.8f;
  for (const GridLegendEntry& e : colouring.legend) {
    const float w = swatch + 4 + ImGui::CalcTextSize(e.label.c_str()).x + 14;
    if (x > at.x && x + w > at.x + width_px) {
      x = at.x;
      y += line_h;
    }
    const float top = y + (ImGui::GetTextLineHeight() - swatch) / 2;
    list->AddRectFilled(ImVec2(x, top), ImVec2(x + swatch, top + swatch), theme.RankColor(e.colour), 2.0f);
    list->AddText(ImVec2(x + swatch + 4, y), theme.text, e.label.c_str());
    x += w;
  }
}

/// Lines of legend GridControls draws at `width_px`.
int GridLegendLines(const GridColouring& colouring, float width_px) {
  const float swatch = ImGui::GetTextLineHeight() * 0.8f;
  int lines = 1;
  float x = 0;
  for (const GridLegendEntry& e : colouring.legend) {
    const float w = swatch + 4 + ImGui::CalcTextSize(e.label.c_str()).x + 14;
    if (x > 0 && x + w > width_px) {
      x = 0;
      ++lines;
    }
    x += w;
  }
  return lines;
}

}  // namespace

void DrawTopologyView(ViewContext& ctx, TopologyViewState& state) {
  const Theme& theme = ctx.theme;
  if (ctx.session.plan() == nullptr) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim),
                       Tr("No run yet: choose a scenario and press Run to see the machine."));
    return;
  }
  const Topology& topology = *ctx.session.topology();
  const Plan& plan = *ctx.session.plan();
  ImDrawList* list = ImGui::GetWindowDrawList();

  // Canvas: a caption line on top, the legend below, the drawing between.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (avail.x < 40 || avail.y < 40) return;
  const bool pipeline = PreparedDetail<PreparedPipeline>(ctx.session, "pipeline_metrics") != nullptr;
  const PreparedTp* tp = PreparedDetail<PreparedTp>(ctx.session, "tp_metrics");
  const PreparedZero* zero = PreparedDetail<PreparedZero>(ctx.session, "zero_metrics");
  const PreparedThreeD* three_d = PreparedDetail<PreparedThreeD>(ctx.session, "three_d_metrics");
  GridColouring colouring;
  if (three_d != nullptr) colouring = ColourByCoordinate(three_d->three_d.params.grid, state.grid_mode);
  // A tensor-parallel layer or a ZeRO run adds a second caption line: what
  // is happening now; a 3D run its controls and the legend of its groups.
  float caption_h = ImGui::GetTextLineHeightWithSpacing() * (tp != nullptr || zero != nullptr ? 2.0f : 1.0f);
  // A measured trace whose ranks ran elsewhere (virtual devices) says where, on a line of its own.
  const std::string recorded = RecordedMachineLine(ctx.session.trace());
  const float recorded_y = caption_h;
  if (!recorded.empty()) {
    caption_h += ImGui::CalcTextSize(recorded.c_str(), nullptr, false, avail.x).y + ImGui::GetStyle().ItemSpacing.y;
  }
  if (three_d != nullptr) {
    caption_h += ImGui::GetFrameHeightWithSpacing() +
                 ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(GridLegendLines(colouring, avail.x));
  }
  // The communication pattern's legend takes lines under the caption.
  LegendLines pattern_lines;
  if (ctx.insight != nullptr && ctx.insight->show_pattern) {
    pattern_lines = PatternLegendLines(topology, ctx.insight->pattern(), theme);
  }
  const float pattern_h = ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(pattern_lines.size());
  caption_h += pattern_h;
  const float legend_h = LayoutLegend(nullptr, ImVec2(0, 0), avail.x, theme, pipeline, tp, zero);
  const PxRect canvas{ImVec2(origin.x, origin.y + caption_h),
                      ImVec2(origin.x + avail.x, origin.y + avail.y - legend_h)};
  if (canvas.GetHeight() < 2 * kCanvasMarginPx) return;

  // Owning the canvas with an invisible button keeps a drag from moving the
  // window and gives a clean hover test.
  ImGui::SetCursorScreenPos(canvas.Min);
  ImGui::InvisibleButton("##topology_canvas", canvas.GetSize());
  const bool canvas_hovered = ImGui::IsItemHovered();
  const bool canvas_clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  const ImVec2 mouse = ImGui::GetIO().MousePos;

  const CanvasTransform to_px{
      ImVec2(canvas.Min.x + kCanvasMarginPx, canvas.Min.y + kCanvasMarginPx),
      ImVec2(canvas.GetWidth() - 2 * kCanvasMarginPx, canvas.GetHeight() - 2 * kCanvasMarginPx)};
  const float aspect = to_px.size_px.x / to_px.size_px.y;
  // A new run may reuse the old one's addresses: the key catches that.
  if (RunKeyChanged("##topology_run", ctx.session.run_id())) {
    state.laid_out = nullptr;
    state.activity.reset();
    state.activity_plan = nullptr;
  }
  if (state.laid_out != &topology || state.layout.tiles.size() != topology.nodes.size() ||
      std::abs(aspect - state.laid_out_aspect) > kAspectTolerance * state.laid_out_aspect) {
    state.layout = LayoutTopology(topology, aspect);
    state.laid_out = &topology;
    state.laid_out_aspect = aspect;
  }
  if (!state.activity || state.activity_plan != &plan) {
    state.activity = std::make_unique<LinkActivity>(topology, plan);
    state.activity_plan = &plan;
    state.tp_collectives.clear();
    state.zero_collectives.clear();
    for (std::vector<bool>& links : state.kind_links) links.clear();
    if (three_d != nullptr) state.kind_links = LinksByGroupKind(three_d->three_d, plan, topology);
    // Each named collective call (the plan's notes, op_label.h) says what
    // it moves on its pills: "AG L3 fwd·B", "AR1 fwd RS·A", "TP g3 AG·B".
    // A plan of one call needs no name: its pills keep the chunk letters.
    if (plan.collectives.size() > 1) {
      std::vector<CollectiveLabel> labels;
      for (const CollectiveNote& note : plan.collectives) labels.push_back({note.tag, note.two_passes});
      state.activity->SetCollectiveLabels(std::move(labels));
    }
    // The "now:" lines of a ZeRO or tensor-parallel run tell the calls'
    // story in their own words.
    if (zero != nullptr) state.zero_collectives = NameZeroCollectives(zero->zero, plan);
    if (tp != nullptr) state.tp_collectives = NameTpCollectives(tp->layer.collectives);
  }
  const TimeNs cursor_ns = ctx.clock.cursor_ns();
  state.activity->Update(ctx.session.store(), cursor_ns);
  const LinkActivity& activity = *state.activity;

  FrameGeometry g;
  g.labelled = topology.num_gpus() <= kMaxLabelledGpus;
  g.tile_px.resize(topology.nodes.size());
  g.center_px.resize(topology.nodes.size());
  for (const NodeTile& tile : state.layout.tiles) {
    if (tile.node < 0 || tile.node >= static_cast<int>(topology.nodes.size())) continue;
    g.tile_px[static_cast<std::size_t>(tile.node)] = to_px.ToPx(tile.rect);
    g.center_px[static_cast<std::size_t>(tile.node)] = to_px.ToPx(tile.rect.center());
  }
  g.lane_width_px.resize(topology.links.size());
  g.link_gbps.resize(topology.links.size());
  for (std::size_t i = 0; i < topology.links.size(); ++i) {
    g.link_gbps[i] = DisplayGbps(topology, topology.links[i]);
    // Many-GPU views get hairlines, or the links would paint over everything.
    g.lane_width_px[i] = LaneWidthPx(g.link_gbps[i]) * (g.labelled ? 1.0f : 0.4f);
  }

  list->PushClipRect(canvas.Min, canvas.Max, true);

  // Host frames (multi-host only), behind everything.
  for (const HostBox& host : state.layout.hosts) {
    const PxRect r = to_px.ToPx(host.rect);
    list->AddRectFilled(r.Min, r.Max, WithAlpha(theme.host_frame, 0.12f), 10.0f);
    list->AddRect(r.Min, r.Max, theme.host_frame, 10.0f, 0, 1.5f);
    if (g.labelled) list->AddText(ImVec2(r.Min.x + 8, r.Min.y + 4), theme.text_dim, host.label.c_str());
  }

  // Hover: a tile wins over the links beneath it.
  int hovered_node = -1;
  int hovered_link = -1;
  if (canvas_hovered) {
    for (std::size_t n = 0; n < g.tile_px.size(); ++n) {
      if (g.tile_px[n].Contains(mouse)) hovered_node = static_cast<int>(n);
    }
  }

  // Links: two lanes each, a -> b on the right of a -> b, b -> a on its right.
  LinkRenderer* renderer =
      ctx.link_renderer != nullptr && ctx.link_renderer->ready() ? ctx.link_renderer : nullptr;
  float best_link_distance = 1e30f;
  for (std::size_t i = 0; i < topology.links.size(); ++i) {
    const Link& link = topology.links[i];
    const float width = g.lane_width_px[i];
    for (bool forward : {true, false}) {
      ImVec2 a, b;
      LaneEnds(g, forward ? link.a : link.b, forward ? link.b : link.a, width, &a, &b);
      const double utilization =
          g.link_gbps[i] > 0 ? activity.LoadGbps(static_cast<int>(i), forward) / g.link_gbps[i] : 0.0;
      const Color color = theme.LinkLoadColor(std::clamp(utilization, 0.0, 1.0));
      if (renderer != nullptr) {
        renderer->AddLink(a, b, width, color, static_cast<float>(std::clamp(utilization, 0.0, 1.0)));
      } else {
        list->AddLine(a, b, color, width);
      }
    }
    if (canvas_hovered && hovered_node < 0) {
      const float d = DistanceToSegmentPx(mouse, g.center_px[static_cast<std::size_t>(link.a)],
                                          g.center_px[static_cast<std::size_t>(link.b)]);
      if (d <= width + kLaneGapPx + kHoverSlackPx && d < best_link_distance) {
        best_link_distance = d;
        hovered_link = static_cast<int>(i);
      }
    }
  }
  if (renderer != nullptr) renderer->Flush(list, ctx.time_s);
  if (hovered_link >= 0) {
    // Outline the hovered link's both lanes so the tooltip has a clear subject.
    const Link& link = topology.links[static_cast<std::size_t>(hovered_link)];
    const ImVec2 p = g.center_px[static_cast<std::size_t>(link.a)];
    const ImVec2 q = g.center_px[static_cast<std::size_t>(link.b)];
    list->AddLine(p, q, WithAlpha(theme.text, 0.35f),
                  2 * g.lane_width_px[static_cast<std::size_t>(hovered_link)] + 6.0f);
  }

  // Stragglers and failures: the links they name, striped in the fault colour.
  const FaultMarks faults = ctx.session.faults().empty()
                                ? FaultMarks{}
                                : MarkFaults(ctx.session.faults(), topology, plan.num_ranks);
  if (faults.any) {
    for (std::size_t i = 0; i < topology.links.size(); ++i) {
      if (!faults.LinkMarked(static_cast<int>(i))) continue;
      const Link& link = topology.links[i];
      const ImVec2 p = g.center_px[static_cast<std::size_t>(link.a)];
      const ImVec2 q = g.center_px[static_cast<std::size_t>(link.b)];
      const float w = 2 * g.lane_width_px[i] + 6.0f;
      // Stripes across the link: a throttle's slow road, a failure's break.
      const float length = std::hypot(q.x - p.x, q.y - p.y);
      const int stripes = static_cast<int>(length / 9.0f);
      for (int k = 1; k < stripes; k += 2) {
        const float t0 = static_cast<float>(k) / stripes, t1 = static_cast<float>(k + 1) / stripes;
        list->AddLine(ImVec2(p.x + (q.x - p.x) * t0, p.y + (q.y - p.y) * t0),
                      ImVec2(p.x + (q.x - p.x) * t1, p.y + (q.y - p.y) * t1), WithAlpha(theme.fault, 0.75f), w);
      }
      if (faults.link_fail_step[i] >= 0) {
        const ImVec2 m((p.x + q.x) * 0.5f, (p.y + q.y) * 0.5f);
        const float r = 9.0f;
        list->AddLine(ImVec2(m.x - r, m.y - r), ImVec2(m.x + r, m.y + r), theme.fault, 4.0f);
        list->AddLine(ImVec2(m.x - r, m.y + r), ImVec2(m.x + r, m.y - r), theme.fault, 4.0f);
      }
    }
  }

  RunInsight* insight = ctx.insight;
  if (insight != nullptr && canvas_clicked && hovered_node < 0 && hovered_link >= 0) insight->SelectLink(hovered_link);
  if (insight != nullptr && insight->show_pattern) {
    DrawPatternHops(list, g, insight->pattern(), theme);
  }
  // The selection: a selected link both lanes; a selected op the lanes its
  // transfer crossed (labelled with their load after the tiles).
  if (insight != nullptr && insight->selection().link >= 0 &&
      insight->selection().link < static_cast<int>(topology.links.size())) {
    const int id = insight->selection().link;
    const Link& link = topology.links[static_cast<std::size_t>(id)];
    list->AddLine(g.center_px[static_cast<std::size_t>(link.a)], g.center_px[static_cast<std::size_t>(link.b)],
                  WithAlpha(theme.selected, 0.8f), 2 * g.lane_width_px[static_cast<std::size_t>(id)] + 8.0f);
  }
  if (insight != nullptr) {
    for (const LitLink& l : insight->details().route) {
      const Link& link = topology.links[static_cast<std::size_t>(l.link)];
      ImVec2 a, b;
      LaneEnds(g, l.forward ? link.a : link.b, l.forward ? link.b : link.a,
               g.lane_width_px[static_cast<std::size_t>(l.link)], &a, &b);
      list->AddLine(a, b, theme.selected, g.lane_width_px[static_cast<std::size_t>(l.link)] + 5.0f);
      Arrowhead(list, a, ImVec2(a.x + (b.x - a.x) * 0.62f, a.y + (b.y - a.y) * 0.62f), 12.0f, theme.selected);
    }
  }

  // A 3D run: the links each shown group kind's traffic uses, one
  // parallel stripe per kind so a link carrying two kinds shows both.
  if (three_d != nullptr) {
    for (int k = 0; k < kGroupKindCount; ++k) {
      const std::vector<bool>& used = state.kind_links[static_cast<std::size_t>(k)];
      if (!state.show_kind[static_cast<std::size_t>(k)] || used.size() != topology.links.size()) continue;
      const Color colour = WithAlpha(GroupKindColor(theme, GroupKind(k)), 0.85f);
      for (std::size_t i = 0; i < used.size(); ++i) {
        if (!used[i]) continue;
        const Link& link = topology.links[i];
        const ImVec2 p = g.center_px[static_cast<std::size_t>(link.a)];
        const ImVec2 q = g.center_px[static_cast<std::size_t>(link.b)];
        const float shift = (static_cast<float>(k) - 1.0f) * 5.0f;
        const ImVec2 off = RightOffset(p, q, shift);
        list->AddLine(ImVec2(p.x + off.x, p.y + off.y), ImVec2(q.x + off.x, q.y + off.y), colour, 3.0f);
      }
    }
  }

  const float pill_radius_px = ImGui::GetTextLineHeight() * 0.5f + 3.0f;
  // Each transfer in flight traces its whole route faintly, so where a
  // chunk goes is readable before it gets there (through a switch too).
  std::vector<std::vector<ImVec2>> in_flight_lanes;
  in_flight_lanes.reserve(activity.in_flight().size());
  for (const InFlight& f : activity.in_flight()) {
    in_flight_lanes.push_back(f.route >= 0 ? RouteLanePoints(g, activity.route(f.route), pill_radius_px + 2)
                                           : std::vector<ImVec2>{});
    if (!g.labelled || in_flight_lanes.back().size() < 2) continue;
    const std::vector<ImVec2>& lanes = in_flight_lanes.back();
    const Color trace = WithAlpha(theme.PhaseColor(f.phase), 0.55f);
    for (std::size_t i = 0; i + 1 < lanes.size(); i += 2) list->AddLine(lanes[i], lanes[i + 1], trace, 1.5f);
  }

  std::vector<int> gpu_rank(topology.nodes.size(), -1);  // by node id
  for (int r = 0; r < topology.num_gpus(); ++r) {
    gpu_rank[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(r)])] = r;
  }
  // GPUs sending right now get a ring in the colour of what they send.
  std::vector<Color> sending(topology.nodes.size(), 0);
  for (const InFlight& f : activity.in_flight()) {
    if (f.from_rank >= 0 && f.from_rank < topology.num_gpus()) {
      sending[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(f.from_rank)])] =
          theme.PhaseColor(f.phase);
    }
  }
  for (const NodeTile& tile : state.layout.tiles) {
    if (tile.node < 0 || tile.node >= static_cast<int>(topology.nodes.size())) continue;
    const auto n = static_cast<std::size_t>(tile.node);
    const PxRect& r = g.tile_px[n];
    if (sending[n] != 0 && g.labelled) {
      list->AddRect(ImVec2(r.Min.x - 3, r.Min.y - 3), ImVec2(r.Max.x + 3, r.Max.y + 3), sending[n], 8.0f, 0,
                    2.5f);
    }
    DrawTile(list, r, topology.nodes[n], tile, theme, g.labelled, tile.node == hovered_node);
    // The rank's colour along the tile's bottom edge (rank r runs on GPU r);
    // a 3D run's tiles take their group's colour, as a frame and a wider edge.
    const int rank = gpu_rank[n];
    if (g.labelled && rank >= 0 && rank < plan.num_ranks) {
      const float inset = std::min(6.0f, r.GetWidth() * 0.15f);
      if (three_d != nullptr && rank < static_cast<int>(colouring.colour_of_rank.size())) {
        const Color group = theme.RankColor(colouring.colour_of_rank[static_cast<std::size_t>(rank)]);
        list->AddRect(ImVec2(r.Min.x - 1, r.Min.y - 1), ImVec2(r.Max.x + 1, r.Max.y + 1), group, 6.0f, 0, 3.0f);
        list->AddRectFilled(ImVec2(r.Min.x + inset, r.Max.y - 9), ImVec2(r.Max.x - inset, r.Max.y - 2), group, 2.0f);
      } else {
        list->AddRectFilled(ImVec2(r.Min.x + inset, r.Max.y - 5), ImVec2(r.Max.x - inset, r.Max.y - 2),
                            theme.RankColor(rank), 1.5f);
      }
    }
  }

  // Fault badges: on a marked GPU (frame, "x4 slow", a cross when it
  // fails) and at a marked link's midpoint.
  if (faults.any && g.labelled) {
    for (int r = 0; r < topology.num_gpus() && r < plan.num_ranks; ++r) {
      if (!faults.RankMarked(r)) continue;
      const PxRect& t = g.tile_px[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(r)])];
      list->AddRect(ImVec2(t.Min.x - 4, t.Min.y - 4), ImVec2(t.Max.x + 4, t.Max.y + 4), theme.fault, 8.0f, 0, 3.0f);
      if (faults.fail_step[static_cast<std::size_t>(r)] >= 0) {
        list->AddLine(t.Min, t.Max, theme.fault, 3.0f);
        list->AddLine(ImVec2(t.Min.x, t.Max.y), ImVec2(t.Max.x, t.Min.y), theme.fault, 3.0f);
      }
      const std::string text = RankFaultText(faults, r);
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      const ImVec2 at(t.GetCenter().x - size.x * 0.5f, t.Min.y - size.y - 6.0f);
      list->AddRectFilled(ImVec2(at.x - 4, at.y - 1), ImVec2(at.x + size.x + 4, at.y + size.y + 1), theme.fault, 4.0f);
      list->AddText(at, ContrastText(theme.fault), text.c_str());
    }
    for (std::size_t i = 0; i < topology.links.size(); ++i) {
      if (!faults.LinkMarked(static_cast<int>(i))) continue;
      const Link& link = topology.links[i];
      const ImVec2 p = g.center_px[static_cast<std::size_t>(link.a)];
      const ImVec2 q = g.center_px[static_cast<std::size_t>(link.b)];
      const std::string text = LinkFaultText(faults, static_cast<int>(i));
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      const ImVec2 at((p.x + q.x) * 0.5f - size.x * 0.5f, (p.y + q.y) * 0.5f + 10.0f);
      list->AddRectFilled(ImVec2(at.x - 4, at.y - 1), ImVec2(at.x + size.x + 4, at.y + size.y + 1), theme.fault, 4.0f);
      list->AddText(at, ContrastText(theme.fault), text.c_str());
    }
  }

  // The selected op's links: each one's load at the op's midpoint.
  if (insight != nullptr && g.labelled) {
    for (const LitLink& l : insight->details().route) {
      const Link& link = topology.links[static_cast<std::size_t>(l.link)];
      ImVec2 a, b;
      LaneEnds(g, l.forward ? link.a : link.b, l.forward ? link.b : link.a,
               g.lane_width_px[static_cast<std::size_t>(l.link)], &a, &b);
      const std::string text = FormatGbps(l.load_gbps) + " (" + FormatPercent(l.utilization) + ")";
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      const ImVec2 at((a.x + b.x) * 0.5f - size.x * 0.5f, (a.y + b.y) * 0.5f - size.y - 6.0f);
      list->AddRectFilled(ImVec2(at.x - 4, at.y - 2), ImVec2(at.x + size.x + 4, at.y + size.y + 2), theme.selected, 4.0f);
      list->AddText(at, ContrastText(theme.selected), text.c_str());
    }
  }

  // Chunks in flight: a pill on the sender's lane, labelled with the chunk.
  // A pill whose full label would cover one drawn before it says only its
  // compact label (the chunk letter), so crowded pills stay readable.
  std::vector<PxRect> placed;
  for (std::size_t k = 0; k < activity.in_flight().size(); ++k) {
    const InFlight& f = activity.in_flight()[k];
    if (in_flight_lanes[k].empty()) continue;
    const ImVec2 p = PointAlongLanes(in_flight_lanes[k], f.progress);
    const Color fill = f.microbatch >= 0 ? theme.MicrobatchColor(f.phase, f.microbatch)
                                         : theme.PhaseColor(f.phase);
    if (!g.labelled) {
      list->AddRectFilled(ImVec2(p.x - 2, p.y - 2), ImVec2(p.x + 2, p.y + 2), fill);
      continue;
    }
    const float radius = pill_radius_px;
    auto pill_half_w = [&](const std::string& text) {
      return std::max(radius, ImGui::CalcTextSize(text.c_str()).x * 0.5f + 5.0f);
    };
    const std::string* text = &f.label;
    if (!f.compact_label.empty() && f.compact_label != f.label) {
      const float w = pill_half_w(f.label);
      const PxRect full{ImVec2(p.x - w, p.y - radius), ImVec2(p.x + w, p.y + radius)};
      for (const PxRect& other : placed) {
        const bool overlaps = full.Min.x < other.Max.x && other.Min.x < full.Max.x &&
                              full.Min.y < other.Max.y && other.Min.y < full.Max.y;
        if (overlaps) {
          text = &f.compact_label;
          break;
        }
      }
    }
    const float half_w = pill_half_w(*text);
    placed.push_back({ImVec2(p.x - half_w, p.y - radius), ImVec2(p.x + half_w, p.y + radius)});
    // A soft glow first, so the pill stands out on a busy lane.
    list->AddRectFilled(ImVec2(p.x - half_w - 4, p.y - radius - 4), ImVec2(p.x + half_w + 4, p.y + radius + 4),
                        WithAlpha(fill, 0.25f), radius + 4);
    list->AddRectFilled(ImVec2(p.x - half_w, p.y - radius), ImVec2(p.x + half_w, p.y + radius), fill, radius);
    list->AddRect(ImVec2(p.x - half_w, p.y - radius), ImVec2(p.x + half_w, p.y + radius),
                  WithAlpha(theme.background, 0.8f), radius, 0, 1.0f);
    DrawCenteredText(list, p, ContrastText(fill), *text);
  }
  list->PopClipRect();
  DrawPatternLegend(list, pattern_lines, theme, ImVec2(origin.x, canvas.Min.y - pattern_h));

  // Caption: what machine, which arrangement, where the replay is.
  char caption[256];
  std::snprintf(caption, sizeof caption, Tr("%s  |  %s  |  %d %s  |  t = %s  |  step %d of %d  |  %zu in flight"),
                topology.name.c_str(), state.layout.shape.c_str(), plan.num_ranks,
                pipeline ? Tr("stages") : tp != nullptr ? Tr("ranks (tp)") : zero != nullptr ? Tr("ranks (data parallel)")
                : three_d != nullptr ? Tr("ranks (dp x pp x tp)") : Tr("ranks"),
                FormatTime(cursor_ns).c_str(), ctx.clock.steps_shown(), ctx.clock.num_steps(),
                activity.in_flight().size());
  list->AddText(origin, theme.text_dim, caption);
  if (insight != nullptr && !insight->pattern().empty()) {
    // The switch sits at the caption line's right end, as tall as its text.
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(2, 0));
    const char* label = Tr("algorithm on the machine");
    const float w = ImGui::GetTextLineHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x + 4;
    const float caption_w = ImGui::CalcTextSize(caption).x;
    const float x = std::max(origin.x + caption_w + 12, origin.x + avail.x - w);
    ImGui::SetCursorScreenPos(ImVec2(x, origin.y));
    ImGui::Checkbox(label, &insight->show_pattern);
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("%s", Tr("draw the run's communication pattern (the ring's order, both trees, the stages, the "
                                 "groups)\nover the real links: each logical hop along the physical route it takes"));
    }
    ImGui::PopStyleVar();
  }
  if (tp != nullptr || zero != nullptr) {
    const std::string now = tp != nullptr ? TpNowLine(ctx, plan, activity, state.tp_collectives, cursor_ns)
                                          : ZeroNowLine(ctx, plan, activity, state.zero_collectives, cursor_ns);
    list->AddText(ImVec2(origin.x, origin.y + ImGui::GetTextLineHeightWithSpacing()), theme.text, now.c_str());
  }
  if (!recorded.empty()) {
    list->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(origin.x, origin.y + recorded_y), theme.text,
                  recorded.c_str(), nullptr, avail.x);
  }
  LayoutLegend(list, ImVec2(origin.x, canvas.Max.y), avail.x, theme, pipeline, tp, zero);
  if (three_d != nullptr) {
    GridControls(theme, state, colouring, ImVec2(origin.x, origin.y + ImGui::GetTextLineHeightWithSpacing()),
                 avail.x);
  }

  if (hovered_node >= 0) {
    TileTooltip(topology, hovered_node);
  } else if (hovered_link >= 0) {
    LinkTooltip(topology, &activity, hovered_link, g.link_gbps[static_cast<std::size_t>(hovered_link)]);
  }
}

}  // namespace shardlab::gui
