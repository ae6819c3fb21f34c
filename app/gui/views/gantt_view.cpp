// The Gantt view: one row per (rank, lane), ops as boxes coloured by phase,
// the replay cursor as a vertical line, a time ruler on top.
//
//   [Fit] [x] follow cursor                         wheel zoom · drag pan
//             0 ns      200 µs     400 µs     600 µs        <- ruler (click: seek)
//   GPU0 send │██C██│ │██D██│  ▒▒▒ 37 ops ▒▒▒   │            <- boxes, folded block
//   GPU0 recv │   │██B██│ │██C██│               │
//   GPU1 send │██B██│  ...                      │ <- cursor
//
// Every box says what its op is in the plan's own words (engine/plan/
// op_label.h, the names traces and `--plan` dumps use), the longest that
// fits: "AG L3 fwd·B ->2", "AG L3·B", "B"; "F mb3 L4", "F3", "F"; its
// tooltip the long form: "all-gather of layer 3's parameters before its
// forward, chunk B, to GPU 2". No scenario names its own boxes.
//
// A pipeline run adds, from pipeline_gantt.h: compute and transfer boxes
// coloured by micro-batch; each stage's bubble as a hatched red band
// behind its compute row; a legend line.
//
//   GPU0 compute │F0│F1│F2│F3│//////bubble//////│B0│F4│B1│ ...
//   GPU3 compute │////bubble////│F0│B0│F1│B1│F2│ ...
//
// A tensor-parallel layer, a ZeRO run and a 3D run add legend lines (what
// their colours and collective names mean); a 3D run groups its rows by
// stage and replica and its tooltips give the rank's grid coordinate.
//
// Each frame follows Tracy's split: a GanttFrame {view start, ns/px, width,
// cursor} is filled once, then every visible row is prepared
// (PrepareGanttRow: binary search + folding, plain C++, tested) and drawn.
// Only rows inside the scroll region are prepared.
//
// ImGui 1.86 indexes vertices with 16 bits. With the GL3 backend's vertex
// offset (ImGuiBackendFlags_RendererHasVtxOffset) one draw list may grow
// past 65,536 vertices; without it the rows continue in a fresh child
// window ("page") whenever the next row might overflow the current list.
#include <algorithm>
#include "app/gui/model/run_detail.h"
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/gui/app/test_log.h"
#include "app/gui/model/compare_overlay.h"
#include "app/gui/model/fault_marks.h"
#include "app/gui/model/host_lane_rows.h"
#include "app/gui/model/pipeline_gantt.h"
#include "app/gui/model/tp_layer_view.h"
#include "app/gui/views/draw_util.h"
#include "app/gui/views/run_key.h"
#include "app/gui/views/scenario_panels.h"
#include "app/gui/views/views.h"
#include "engine/plan/op_label.h"
#include "app/gui/i18n/language.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/zero_scenario.h"
#include "engine/scenarios/three_d_scenario.h"

namespace shardlab::gui {
namespace {

constexpr double kWheelZoomStep = 1.25;    // per wheel notch
constexpr double kShiftWheelPanFraction = 0.1;  // of the view width per notch
constexpr double kMinNsPerPx = 1e-3;       // 1 ps per pixel is plenty of zoom
constexpr float kFollowRightEdge = 0.9f;   // keep the cursor left of 90% of the width
constexpr float kMinLabelBoxPx = 12.0f;    // narrower boxes get no text
constexpr float kRowGapPx = 2.0f;          // vertical air between a row's boxes and the next row
// Worst case per row without vertex offsets: each box is at least a pixel
// wide (4 vertices), each glyph of a box label 4 vertices per glyph width,
// plus a fixed allowance for the row's background and label.
constexpr int kRowFixedVertices = 256;
constexpr int kVertexLimit = 65536;
// An overlay outline (a 2 px rectangle, anti-aliased) at most every 2 px.
constexpr float kOutlineVerticesPerPx = 16.0f;
constexpr float kMinBubblePx = 1.0f;       // narrower bubbles are not drawn
constexpr float kHatchSpacingPx = 7.0f;    // between a bubble's diagonal lines
constexpr float kMinHatchPx = 8.0f;        // narrower bubbles get the tint only
// A bubble is hatched only when at least as wide as it is high, so its
// 45-degree lines number at most 2 w / spacing + 1, each up to 8 vertices
// (an anti-aliased line); plus the tint and the word's backing (4 each).
constexpr float kBubbleVerticesPerPx = 8.0f * (2.0f / kHatchSpacingPx + 1.0f / kMinHatchPx) + 1.0f;

std::string RowLabel(const TimelineRow& row) {
  return "GPU" + std::to_string(row.rank) + " " + LaneName(row.lane);
}

std::string FormatGbps(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, gbps >= 100 ? "%.0f GB/s" : gbps >= 1 ? "%.2f GB/s" : "%.3f GB/s", gbps);
  return text;
}

/// The op's tooltip: what it is (the plan's long label, op_label.h), then
/// `extra` (a 3D rank's coordinate, the compared run's time).
void EventTooltip(const Event& e, const Op* op, const TimelineRow& row, const Plan& plan, const std::string& extra) {
  ImGui::BeginTooltip();
  ImGui::Text(Tr("op %d  %s%s%s"), e.op, OpKindName(e.kind),
              op != nullptr && op->reduce != ReduceOp::kNone ? " + " : "",
              op != nullptr && op->reduce != ReduceOp::kNone ? ReduceOpName(op->reduce) : "");
  if (op != nullptr) {
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
    ImGui::TextUnformatted(LabelOp(plan, *op).text.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!extra.empty()) ImGui::TextUnformatted(extra.c_str());
  if (e.peer >= 0 && e.kind == OpKind::kSend) {
    ImGui::Text("GPU%d -> GPU%d", e.rank, e.peer);
  } else if (e.peer >= 0 && e.kind == OpKind::kRecv) {
    ImGui::Text("GPU%d <- GPU%d", e.rank, e.peer);
  } else {
    ImGui::Text(Tr("GPU%d, %s lane"), e.rank, LaneName(row.lane));
  }
  ImGui::Separator();
  ImGui::Text(Tr("bytes     %s"), FormatBytes(e.bytes).c_str());
  ImGui::Text(Tr("start     %s"), FormatTime(e.start_ns).c_str());
  ImGui::Text(Tr("duration  %s"), FormatTime(e.duration_ns()).c_str());
  if (e.bytes > 0 && e.duration_ns() > 0) {
    // 1 byte per ns is 1 GB/s, so no conversion factor.
    ImGui::Text(Tr("achieved  %s"), FormatGbps(static_cast<double>(e.bytes) / e.duration_ns()).c_str());
  }
  ImGui::Separator();
  ImGui::Text(Tr("step %d"), e.step);
  if (op != nullptr && op->tags.phase != Phase::kNone) ImGui::Text(Tr("phase %s"), PhaseName(op->tags.phase));
  if (e.clock != ClockKind::kSimulated) ImGui::TextDisabled(Tr("clock: %s"), ClockKindName(e.clock));
  if (e.status != EventStatus::kOk) ImGui::TextDisabled(Tr("status: failed or cancelled"));
  ImGui::EndTooltip();
}

/// Everything one frame's row drawing needs.
struct RowPass {
  const Theme* theme = nullptr;
  const Plan* plan = nullptr;
  const GanttFrame* frame = nullptr;
  const PipelinePlan* pipeline = nullptr;     // null: a collective run
  const PipelineBubbles* bubbles = nullptr;   // with pipeline
  const ThreeDPlan* three_d = nullptr;        // a 3D run: group headers
  const CompareOverlay* overlay = nullptr;    // a second run of the plan: outlines
  const CriticalPathView* path = nullptr;     // non-null: outline the path, dim the rest
  const FaultMarks* faults = nullptr;         // stragglers and failed ranks: their rows tinted
  OpId selected = kNoOp;                      // the selected op (and its Send) get a frame
  OpId selected_match = kNoOp;
  float timeline_x_px = 0;   // screen x of the view's left edge (t = view start)
  float row_h_px = 0;
  float left_x_px = 0;       // screen x of the label column
  ImVec2 mouse;
  bool mouse_in_rows = false;
  // Outputs: what the mouse is over.
  int hovered_row = -1;
  int hovered_event = -1;
  int hovered_folded = 0;    // > 0: the ops count of a folded block under the mouse
  int hovered_bubble = -1;   // index into the hovered row's stage bubbles
};

const Op* OpOf(const Plan& plan, const Event& e) {
  return e.op >= 0 && e.op < static_cast<int>(plan.ops.size()) ? &plan.ops[static_cast<std::size_t>(e.op)]
                                                                : nullptr;
}

/// A box's fill: by micro-batch in a pipeline, else by phase.
Color OpFill(const Theme& theme, const Op* op, bool pipeline) {
  if (op == nullptr) return theme.PhaseColor(Phase::kNone);
  return pipeline ? theme.MicrobatchColor(op->tags.phase, op->tags.microbatch) : theme.PhaseColor(op->tags.phase);
}

/// True when a box of `boxes` (sorted by x0, relative px) overlaps [x0, x1).
bool BoxesOverlap(const std::vector<GanttBox>& boxes, double x0_px, double x1_px) {
  const auto after = std::partition_point(boxes.begin(), boxes.end(),
                                          [&](const GanttBox& b) { return b.x0_px < x1_px; });
  // A widened block may reach under its successor: look at two boxes back.
  for (auto it = after; it != boxes.begin() && after - it < 2;) {
    --it;
    if (it->x1_px > x0_px) return true;
  }
  return false;
}

/// The word "bubble" in the bubble [x0, x1], where no box covers it (the
/// optimizer step sits inside a drain bubble): centred, else at either end.
void BubbleWord(ImDrawList* list, const std::vector<GanttBox>& boxes, float x0, float x1, float text_y,
                const RowPass& pass) {
  const ImVec2 size = ImGui::CalcTextSize(Tr("bubble"));
  const float pad = 6.0f;
  if (x1 - x0 < size.x + 2 * pad) return;
  for (const float tx : {(x0 + x1 - size.x) * 0.5f, x0 + pad, x1 - pad - size.x}) {
    const double rel = tx - pass.timeline_x_px;
    if (BoxesOverlap(boxes, rel - 3, rel + size.x + 3)) continue;
    // On a patch of background, so the hatching does not cut the letters.
    list->AddRectFilled(ImVec2(tx - 3, text_y), ImVec2(tx + size.x + 3, text_y + size.y),
                        WithAlpha(pass.theme->background, 0.85f));
    list->AddText(ImVec2(tx, text_y), pass.theme->bubble, Tr("bubble"));
    return;
  }
}

/// Draws the bubbles of a compute row that the view and the cursor show:
/// a red tint, hatching where there is room, and the word where it fits.
void DrawBubbles(ImDrawList* list, const std::vector<PipelineBubble>& bubbles,
                 const std::vector<GanttBox>& boxes, float y0, float y1, float text_y, const RowPass& pass) {
  const Theme& theme = *pass.theme;
  const GanttFrame& frame = *pass.frame;
  const TimeNs shown_end = std::min(frame.view_end_ns(), frame.cursor_ns);
  auto it = std::partition_point(bubbles.begin(), bubbles.end(),
                                 [&](const PipelineBubble& b) { return b.end_ns < frame.view_start_ns; });
  for (; it != bubbles.end() && it->start_ns < shown_end; ++it) {
    const float anchor = pass.timeline_x_px + static_cast<float>(frame.TimeToPx(it->start_ns));
    const float x0 = std::max(pass.timeline_x_px, anchor);
    const float x1 = pass.timeline_x_px +
                     static_cast<float>(std::min(frame.width_px, frame.TimeToPx(std::min(it->end_ns, frame.cursor_ns))));
    const float width = x1 - x0;
    if (width < kMinBubblePx) continue;
    list->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), WithAlpha(theme.bubble, 0.16f));
    if (width >= std::max(kMinHatchPx, y1 - y0)) {
      Hatch(list, ImVec2(x0, y0), ImVec2(x1, y1), anchor, WithAlpha(theme.bubble, 0.6f), kHatchSpacingPx);
    }
    BubbleWord(list, boxes, x0, x1, text_y, pass);
  }
}

/// The stage bubble under screen x `x_px` of row `row` if it is drawn, else -1.
int HoveredBubble(const TimelineRow& row, float x_px, const RowPass& pass) {
  if (pass.bubbles == nullptr || row.lane != Lane::kCompute || row.rank < 0 ||
      row.rank >= static_cast<int>(pass.bubbles->stages.size())) {
    return -1;
  }
  const std::vector<PipelineBubble>& bubbles = pass.bubbles->stages[static_cast<std::size_t>(row.rank)];
  const GanttFrame& frame = *pass.frame;
  const TimeNs t_ns = frame.PxToTime(x_px - pass.timeline_x_px);
  const int index = BubbleAt(bubbles, t_ns);
  if (index < 0 || t_ns > frame.cursor_ns) return -1;
  const PipelineBubble& b = bubbles[static_cast<std::size_t>(index)];
  const double shown_px = frame.TimeToPx(std::min(b.end_ns, frame.cursor_ns)) - frame.TimeToPx(b.start_ns);
  return shown_px >= kMinBubblePx ? index : -1;
}

void BubbleTooltip(const TimelineRow& row, const Plan& plan, const PipelineBubbles& bubbles, int index) {
  const PipelineBubble& b = bubbles.stages[static_cast<std::size_t>(row.rank)][static_cast<std::size_t>(index)];
  const TimeNs idle_ns = bubbles.IdleNs(row.rank);
  const TimeNs span_ns = bubbles.span.end_ns - bubbles.span.start_ns;
  ImGui::BeginTooltip();
  ImGui::Text(Tr("idle: bubble, %s"), FormatTime(b.duration_ns()).c_str());
  ImGui::TextUnformatted(BubbleReason(row, plan, b, bubbles.span).c_str());
  ImGui::Separator();
  ImGui::Text(Tr("GPU%d idles %s of the %s span (%.0f%%)"), row.rank, FormatTime(idle_ns).c_str(),
              FormatTime(span_ns).c_str(), span_ns > 0 ? 100.0 * idle_ns / span_ns : 0.0);
  ImGui::EndTooltip();
}

/// Draws row `r` of `store` at screen y `y_px` into `list`.
void DrawRow(ImDrawList* list, const TimelineStore& store, int r, float y_px, RowPass& pass) {
  const Theme& theme = *pass.theme;
  const TimelineRow& row = store.rows()[static_cast<std::size_t>(r)];
  const float right_px = pass.timeline_x_px + static_cast<float>(pass.frame->width_px);
  const float y0 = y_px;
  const float y1 = y_px + pass.row_h_px;

  // Alternating stripes per rank; idle time shows as this background.
  if (row.rank % 2 == 1) {
    list->AddRectFilled(ImVec2(pass.timeline_x_px, y0), ImVec2(right_px, y1), WithAlpha(theme.grid, 0.18f));
  }
  const bool rank_starts = r == 0 || store.rows()[static_cast<std::size_t>(r - 1)].rank != row.rank;
  if (pass.faults != nullptr && pass.faults->RankMarked(row.rank)) {
    // A straggler's or failed rank's rows: a tint, and its badge at the right of its first row.
    list->AddRectFilled(ImVec2(pass.timeline_x_px, y0), ImVec2(right_px, y1), WithAlpha(theme.fault, 0.10f));
  }
  const bool first_of_rank = r == 0 || store.rows()[static_cast<std::size_t>(r - 1)].rank != row.rank;
  if (first_of_rank) list->AddLine(ImVec2(pass.left_x_px, y0), ImVec2(right_px, y0), theme.grid);

  if (pass.three_d != nullptr && first_of_rank && row.rank >= 0 && row.rank < pass.three_d->params.grid.ranks()) {
    // Rows come in rank order, which in Megatron order is pp, then dp, then
    // tp: a group (one stage of one replica) starts at its tp 0 rank.
    const GridCoord c = pass.three_d->params.grid.CoordOf(row.rank);
    if (c.tp == 0) {
      list->AddLine(ImVec2(pass.left_x_px, y0), ImVec2(right_px, y0), theme.text_dim, 2.0f);
      char header[64];
      std::snprintf(header, sizeof header, "stage %d \xC2\xB7 replica %d", c.pp, c.dp);
      const ImVec2 size = ImGui::CalcTextSize(header);
      const ImVec2 at(right_px - size.x - 6, y0 + 1);
      list->AddRectFilled(ImVec2(at.x - 3, at.y), ImVec2(right_px - 2, at.y + size.y), WithAlpha(theme.background, 0.85f),
                          3.0f);
      list->AddText(at, theme.text, header);
    }
  }

  const std::string label = RowLabel(row);
  const float text_y = y0 + (pass.row_h_px - ImGui::GetTextLineHeight()) * 0.5f;
  // The rank's colour down the label's edge: GPU 2 wears it in every view.
  list->AddRectFilled(ImVec2(pass.left_x_px + 1, y0 + 1), ImVec2(pass.left_x_px + 5, y1 - 1),
                      theme.RankColor(row.rank));
  list->AddText(ImVec2(pass.left_x_px + 9, text_y), first_of_rank ? theme.text : theme.text_dim, label.c_str());

  const std::vector<GanttBox> boxes = PrepareGanttRow(row, *pass.frame);
  const float by0 = y0 + kRowGapPx;
  const float by1 = y1 - kRowGapPx;
  if (pass.bubbles != nullptr && row.lane == Lane::kCompute && row.rank >= 0 &&
      row.rank < static_cast<int>(pass.bubbles->stages.size())) {
    // Under the boxes: the optimizer step runs inside a drain bubble.
    DrawBubbles(list, pass.bubbles->stages[static_cast<std::size_t>(row.rank)], boxes, by0, by1, text_y, pass);
  }
  std::string labels[3];
  for (const GanttBox& box : boxes) {
    const float x0 = pass.timeline_x_px + static_cast<float>(box.x0_px);
    float x1 = pass.timeline_x_px + static_cast<float>(box.x1_px);
    const float width = x1 - x0;
    // A one-pixel seam between wide neighbours keeps back-to-back ops apart.
    if (width >= 3.0f) x1 -= 1.0f;
    if (box.event_count > 1) {
      list->AddRectFilled(ImVec2(x0, by0), ImVec2(x1, by1), theme.folded);
      if (width >= 40.0f) {
        const std::string text = Format(Tr("%d ops"), static_cast<int>(box.event_count));
        if (ImGui::CalcTextSize(text.c_str()).x + 6 <= width) {
          list->AddText(ImVec2(x0 + 3, text_y), ContrastText(theme.folded), text.c_str());
        }
      }
      continue;
    }
    const Event& e = row.events[static_cast<std::size_t>(box.first_event)];
    const Op* op = OpOf(*pass.plan, e);
    const Color fill = OpFill(theme, op, pass.pipeline != nullptr);
    list->AddRectFilled(ImVec2(x0, by0), ImVec2(x1, by1), fill);
    if (pass.path != nullptr) {
      // The critical path: its ops outlined, the others dimmed behind a veil.
      if (pass.path->OnPath(e.op)) {
        list->AddRect(ImVec2(x0 - 1, by0 - 1), ImVec2(std::max(x1, x0 + 2.0f) + 1, by1 + 1), theme.path, 0.0f, 0,
                      2.0f);
      } else {
        list->AddRectFilled(ImVec2(x0, by0), ImVec2(x1, by1), WithAlpha(theme.background, 0.6f));
      }
    }
    if (e.op == pass.selected || e.op == pass.selected_match) {
      list->AddRect(ImVec2(x0 - 2, by0 - 2), ImVec2(std::max(x1, x0 + 2.0f) + 2, by1 + 2), theme.selected, 0.0f, 0,
                    3.0f);
    }
    if (box.in_flight && width >= 3.0f) {
      // The op the cursor cuts: a bright leading edge says "still running".
      list->AddRectFilled(ImVec2(x1 - 2, by0), ImVec2(x1, by1), theme.cursor);
    }
    if (width >= kMinLabelBoxPx) {
      // What the op is, as every view and trace names it (op_label.h),
      // longest first: "AG L3 fwd·B ->2", "AG L3·B", "B".
      if (op != nullptr) {
        OpLabel names = LabelOp(*pass.plan, *op);
        labels[0] = std::move(names.bar);
        labels[1] = std::move(names.compact);
        labels[2] = std::move(names.tiny);
      } else {
        labels[0] = labels[1] = labels[2] = OpKindName(e.kind);
      }
      if (const std::string* text = FitText(labels, 3, width - 4)) {
        list->AddText(ImVec2(x0 + 2, text_y), ContrastText(fill), text->c_str());
      }
    }
  }

  if (pass.overlay != nullptr) {
    // The added run's time of each op: an outline on the same row, its
    // colour how far the two runs are apart.
    for (const OverlayBox& box : PrepareOverlayRow(row, *pass.overlay, *pass.frame)) {
      const float x0 = pass.timeline_x_px + static_cast<float>(box.x0_px);
      const float x1 = pass.timeline_x_px + static_cast<float>(box.x1_px);
      list->AddRect(ImVec2(x0, by0 + 1), ImVec2(std::max(x1, x0 + 2.0f), by1 - 1),
                    ErrorShadeColor(theme, box.shade), 0.0f, 0, 2.0f);
    }
  }

  // The fault badge on top of the boxes.
  if (pass.faults != nullptr && pass.faults->RankMarked(row.rank) && rank_starts) {
    const std::string badge = RankFaultText(*pass.faults, row.rank);
    const ImVec2 size = ImGui::CalcTextSize(badge.c_str());
    const ImVec2 at(right_px - size.x - 8, y0 + (pass.row_h_px - size.y) * 0.5f);
    list->AddRectFilled(ImVec2(at.x - 3, at.y), ImVec2(at.x + size.x + 3, at.y + size.y), WithAlpha(theme.fault, 0.85f),
                        3.0f);
    list->AddText(at, ContrastText(theme.fault), badge.c_str());
  }
  if (pass.mouse_in_rows && pass.mouse.y >= y0 && pass.mouse.y < y1) {
    pass.hovered_row = r;
    const double x = pass.mouse.x - pass.timeline_x_px;
    pass.hovered_event = EventAtPx(row, boxes, x);
    if (pass.hovered_event < 0) {
      for (const GanttBox& box : boxes) {
        if (box.event_count > 1 && x >= box.x0_px && x < box.x1_px) pass.hovered_folded = box.event_count;
      }
    }
    if (pass.hovered_event < 0 && pass.hovered_folded == 0) pass.hovered_bubble = HoveredBubble(row, pass.mouse.x, pass);
    list->AddRect(ImVec2(pass.left_x_px, y0), ImVec2(right_px, y1), WithAlpha(theme.text, 0.25f));
  }
}

/// Draws a host row (host_lane_rows.h) at screen y `y_px`: the CPU's
/// enqueue calls for the rank's ops, hatched grey boxes on a tinted band so
/// they never read as GPU work. Sets `hovered` to the span under the mouse.
void DrawHostRow(ImDrawList* list, const TimelineRow& row, float y_px, const RowPass& pass, int* hovered) {
  const Theme& theme = *pass.theme;
  const float right_px = pass.timeline_x_px + static_cast<float>(pass.frame->width_px);
  const float y0 = y_px, y1 = y_px + pass.row_h_px;
  list->AddLine(ImVec2(pass.left_x_px, y0), ImVec2(right_px, y0), theme.grid);
  list->AddRectFilled(ImVec2(pass.timeline_x_px, y0), ImVec2(right_px, y1), WithAlpha(theme.text_dim, 0.08f));
  const float text_y = y0 + (pass.row_h_px - ImGui::GetTextLineHeight()) * 0.5f;
  list->AddText(ImVec2(pass.left_x_px + 9, text_y), theme.text_dim, HostRowLabel(row.rank).c_str());
  const std::vector<GanttBox> boxes = PrepareGanttRow(row, *pass.frame);
  const Color fill = WithAlpha(theme.text_dim, 0.55f);
  for (const GanttBox& box : boxes) {
    const float x0 = pass.timeline_x_px + static_cast<float>(box.x0_px);
    float x1 = pass.timeline_x_px + static_cast<float>(box.x1_px);
    if (x1 - x0 >= 3.0f) x1 -= 1.0f;
    list->AddRectFilled(ImVec2(x0, y0 + kRowGapPx + 2), ImVec2(x1, y1 - kRowGapPx - 2), fill);
  }
  if (pass.mouse_in_rows && pass.mouse.y >= y0 && pass.mouse.y < y1) {
    *hovered = EventAtPx(row, boxes, pass.mouse.x - pass.timeline_x_px);
    list->AddRect(ImVec2(pass.left_x_px, y0), ImVec2(right_px, y1), WithAlpha(theme.text, 0.25f));
  }
}

void HostSpanTooltip(const Event& span, const Plan& plan, ClockKind clock) {
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(Tr("host: the CPU enqueues work for a GPU (host time, not GPU time)"));
  if (span.op >= 0 && static_cast<std::size_t>(span.op) < plan.ops.size()) {
    ImGui::Text(Tr("issues op %d: %s"), span.op, LabelOp(plan, plan.ops[static_cast<std::size_t>(span.op)]).text.c_str());
  } else {
    ImGui::TextUnformatted(Tr("not tied to one op of this run (a CUDA graph launch enqueues the whole plan)"));
  }
  ImGui::Separator();
  ImGui::Text(Tr("start     %s"), FormatTime(span.start_ns).c_str());
  ImGui::Text(Tr("duration  %s"), FormatTime(span.duration_ns()).c_str());
  ImGui::TextDisabled(Tr("clock: %s"), clock == ClockKind::kSimulated ? Tr("simulated (the model's issue cost)")
                                                                      : ClockKindName(clock));
  ImGui::EndTooltip();
}

/// The cursor line and, for the hovered op, its outline: drawn last into
/// every draw list that holds rows, so they stay on top.
void DrawOverlay(ImDrawList* list, const RowPass& pass, float top_px, float bottom_px, TimeNs cursor_ns,
                 const Theme& theme) {
  const float x = pass.timeline_x_px + static_cast<float>(pass.frame->TimeToPx(cursor_ns));
  if (x >= pass.timeline_x_px && x <= pass.timeline_x_px + pass.frame->width_px) {
    list->AddLine(ImVec2(x, top_px), ImVec2(x, bottom_px), theme.cursor, 2.0f);
  }
}

void DrawRuler(ImDrawList* list, const GanttFrame& frame, ImVec2 origin, float height_px, TimeNs cursor_ns,
               const Theme& theme) {
  const float right = origin.x + static_cast<float>(frame.width_px);
  list->AddRectFilled(origin, ImVec2(right, origin.y + height_px), WithAlpha(theme.grid, 0.25f));
  for (const RulerTick& tick : RulerTicks(frame)) {
    const float x = origin.x + static_cast<float>(tick.x_px);
    if (x < origin.x || x > right) continue;
    const float tick_h = tick.major ? height_px * 0.45f : height_px * 0.2f;
    list->AddLine(ImVec2(x, origin.y + height_px - tick_h), ImVec2(x, origin.y + height_px), theme.text_dim);
    if (tick.major && !tick.label.empty()) {
      list->AddText(ImVec2(x + 3, origin.y + 1), theme.text_dim, tick.label.c_str());
    }
  }
  const float cx = origin.x + static_cast<float>(frame.TimeToPx(cursor_ns));
  if (cx >= origin.x && cx <= right) {
    // A small flag: the cursor's handle on the ruler.
    const float y = origin.y + height_px;
    list->AddTriangleFilled(ImVec2(cx - 6, origin.y + height_px * 0.35f), ImVec2(cx + 6, origin.y + height_px * 0.35f),
                            ImVec2(cx, y), theme.cursor);
  }
}

/// One legend entry on the current line: a swatch (with `tag` in it, or
/// hatched) and its words.
void LegendEntry(const Theme& theme, Color fill, const char* tag, const char* words, bool hatched = false) {
  const float h = ImGui::GetTextLineHeight();
  const float w = tag != nullptr ? ImGui::CalcTextSize(tag).x + 8 : 2 * h;
  const ImVec2 min = ImGui::GetCursorScreenPos();
  const ImVec2 max(min.x + w, min.y + h);
  ImGui::Dummy(ImVec2(w, h));
  ImDrawList* list = ImGui::GetWindowDrawList();
  list->AddRectFilled(min, max, fill);
  if (hatched) Hatch(list, min, max, min.x, WithAlpha(theme.bubble, 0.6f), kHatchSpacingPx);
  if (tag != nullptr) list->AddText(ImVec2(min.x + 4, min.y), ContrastText(fill), tag);
  ImGui::SameLine(0, 4);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim), "%s", words);
  ImGui::SameLine(0, 14);
}

/// The pipeline legend line: the passes' shades, the micro-batch hues, the bubble.
void DrawPipelineLegend(const Theme& theme, const PipelinePlan& pipeline) {
  LegendEntry(theme, theme.MicrobatchColor(Phase::kForward, 0), "F0", Tr("forward"));
  LegendEntry(theme, theme.MicrobatchColor(Phase::kBackward, 0), "B0", Tr("backward"));
  if (SplitsBackward(pipeline.params.schedule)) {
    LegendEntry(theme, theme.MicrobatchColor(Phase::kWeightGrad, 0), "W0", Tr("weight gradient"));
  }
  // One swatch per hue in use: the micro-batch numbers a student will see.
  const int hues = std::clamp(pipeline.params.shape.microbatches, 1, kMicrobatchHueCount);
  for (int j = 0; j < hues; ++j) {
    const std::string tag = std::to_string(j);
    const ImVec2 min = ImGui::GetCursorScreenPos();
    const float w = ImGui::CalcTextSize("0").x + 6;
    ImGui::Dummy(ImVec2(w, ImGui::GetTextLineHeight()));
    const Color fill = theme.MicrobatchColor(Phase::kForward, j);
    ImGui::GetWindowDrawList()->AddRectFilled(min, ImVec2(min.x + w, min.y + ImGui::GetTextLineHeight()), fill);
    ImGui::GetWindowDrawList()->AddText(ImVec2(min.x + 3, min.y), ContrastText(fill), tag.c_str());
    ImGui::SameLine(0, 0);
  }
  ImGui::SameLine(0, 4);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim), "%s", Tr("colour = micro-batch"));
  ImGui::SameLine(0, 14);
  LegendEntry(theme, WithAlpha(theme.bubble, 0.16f), nullptr, Tr("bubble: the stage idles"), true);
  ImGui::NewLine();
}

/// The tensor-parallel legend line: compute passes, the all-reduces' two
/// passes, and the rank colour beside each row.
void DrawTpLegend(const Theme& theme) {
  LegendEntry(theme, theme.PhaseColor(Phase::kForward), "fwd", Tr("forward compute"));
  LegendEntry(theme, theme.PhaseColor(Phase::kBackward), "bwd", Tr("backward compute"));
  LegendEntry(theme, theme.PhaseColor(Phase::kReduceScatter), "RS", Tr("reduce-scatter pass"));
  LegendEntry(theme, theme.PhaseColor(Phase::kAllGather), "AG", Tr("all-gather pass"));
  const ImVec2 min = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  ImGui::Dummy(ImVec2(4 * 6.0f, h));
  for (int r = 0; r < 4; ++r) {
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(min.x + 6.0f * r, min.y + 1), ImVec2(min.x + 6.0f * r + 4, min.y + h - 1),
                                              theme.RankColor(r));
  }
  ImGui::SameLine(0, 4);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim), "%s", Tr("GPU colour (as in Weights)"));
}

/// The MoE legend line: the layer's four phases.
void DrawMoeLegend(const Theme& theme) {
  LegendEntry(theme, theme.PhaseColor(Phase::kRouter), "router", Tr("x\xC2\xB7Wr, softmax and top-k"));
  LegendEntry(theme, theme.PhaseColor(Phase::kDispatch), "dispatch", Tr("pack and all-to-all to the experts' GPUs"));
  LegendEntry(theme, theme.PhaseColor(Phase::kExpert), "expert", Tr("each expert's MLP on its rows: the longest is the straggler"));
  LegendEntry(theme, theme.PhaseColor(Phase::kCombine), "combine", Tr("all-to-all back and the gated sum"));
  ImGui::NewLine();
}

/// The 3D legend line: compute by pass, and what the collectives' labels say.
void DrawThreeDLegend(const Theme& theme) {
  LegendEntry(theme, theme.PhaseColor(Phase::kForward), "fwd", Tr("forward compute"));
  LegendEntry(theme, theme.PhaseColor(Phase::kBackward), "bwd", Tr("backward compute"));
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim),
                     "TP g3 / PP g1 / DP g0: a transfer of that group kind and group (hover: its ranks); "
                     "rows grouped by stage, then replica");
}

/// A 3D run's op: its rank's coordinate ("GPU3 = dp 0, pp 1, tp 1").
std::string ThreeDRankLine(const Session& session, const Event& e) {
  const PreparedThreeD* three_d = PreparedDetail<PreparedThreeD>(session, "three_d_legend");
  if (three_d == nullptr) return "";
  const ParallelGrid& grid = three_d->three_d.params.grid;
  if (e.rank < 0 || e.rank >= grid.ranks()) return "";
  const GridCoord c = grid.CoordOf(e.rank);
  return "GPU" + std::to_string(e.rank) + " = dp " + std::to_string(c.dp) + ", pp " + std::to_string(c.pp) +
         ", tp " + std::to_string(c.tp);
}

/// The ZeRO legend line: compute by layer, the optimizer, the two
/// collectives and what each moves, the GPU colours.
void DrawZeroLegend(const Theme& theme, int stage) {
  LegendEntry(theme, theme.PhaseColor(Phase::kForward), "F3", Tr("forward of layer 3"));
  LegendEntry(theme, theme.PhaseColor(Phase::kBackward), "B3", Tr("backward"));
  LegendEntry(theme, theme.PhaseColor(Phase::kOptimizer), "opt", Tr("Adam update"));
  if (stage == 0) {
    LegendEntry(theme, theme.PhaseColor(Phase::kReduceScatter), "AR b0", Tr("all-reduce: bucket 0's gradients"));
  } else {
    LegendEntry(theme, theme.PhaseColor(Phase::kReduceScatter), stage == 3 ? "RS L3" : "RS b1", Tr("gradients"));
    LegendEntry(theme, theme.PhaseColor(Phase::kAllGather), stage == 3 ? "AG L3 fwd" : "AG b1 upd", Tr("parameters"));
  }
  ImGui::NewLine();
}

/// Every stage's bubbles, recomputed only when the run or its events change.
const PipelineBubbles& CachedBubbles(const Session& session) {
  struct Cache {
    const Plan* plan = nullptr;
    std::uint64_t run_id = 0;
    std::size_t events = 0;
    PipelineBubbles bubbles;
  };
  static Cache cache;
  const Plan* plan = session.plan();
  if (cache.plan != plan || cache.run_id != session.run_id() || cache.events != session.store().event_count()) {
    cache.plan = plan;
    cache.run_id = session.run_id();
    cache.events = session.store().event_count();
    cache.bubbles = plan != nullptr ? FindPipelineBubbles(session.store(), *plan) : PipelineBubbles{};
  }
  return cache.bubbles;
}

// The overlay's key: solid = the run shown, outline = the added run,
// coloured from "agrees" to kFullShadeFactor apart.
void DrawCompareLegend(const Theme& theme, const CompareOverlay& overlay) {
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim), Tr("solid: %s   outline: %s (%s)   outline colour:"),
                     overlay.shown_label().c_str(), overlay.added_label().c_str(),
                     overlay.added_source().c_str());
  ImGui::SameLine();
  const ImVec2 min = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  constexpr int kSteps = 16;
  constexpr float kStepPx = 6.0f;
  ImDrawList* list = ImGui::GetWindowDrawList();
  for (int i = 0; i < kSteps; ++i) {
    list->AddRectFilled(ImVec2(min.x + i * kStepPx, min.y + 2), ImVec2(min.x + (i + 1) * kStepPx, min.y + h - 2),
                        ErrorShadeColor(theme, static_cast<double>(i) / (kSteps - 1)));
  }
  ImGui::Dummy(ImVec2(kSteps * kStepPx, h));
  ImGui::SameLine();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim), Tr("agree .. %.0fx apart"), kFullShadeFactor);
}

GanttFrame ClampFrame(GanttFrame frame, TimeNs run_end_ns) {
  const double max_ns_per_px = std::max(1.0, run_end_ns) * 20.0 / std::max(1.0, frame.width_px);
  frame.ns_per_px = std::clamp(frame.ns_per_px, kMinNsPerPx, std::max(kMinNsPerPx, max_ns_per_px));
  // Never scroll the whole run out of sight.
  const double width_ns = frame.width_px * frame.ns_per_px;
  const double lowest_ns = -0.9 * width_ns;
  const double highest_ns = std::max(lowest_ns, std::max(0.0, run_end_ns) - 0.1 * width_ns);
  frame.view_start_ns = std::clamp(frame.view_start_ns, lowest_ns, highest_ns);
  return frame;
}

}  // namespace

// The legends each scenario's spec names (scenario_panels.cpp's table).
void DrawPipelineGanttLegend(ViewContext& ctx, const ScenarioSettings*) {
  if (const PreparedPipeline* p = PreparedDetail<PreparedPipeline>(ctx.session, "pipeline_legend"))
    DrawPipelineLegend(ctx.theme, p->pipeline);
}
void DrawTpGanttLegend(ViewContext& ctx, const ScenarioSettings*) { DrawTpLegend(ctx.theme); }
void DrawZeroGanttLegend(ViewContext& ctx, const ScenarioSettings*) {
  if (const PreparedZero* z = PreparedDetail<PreparedZero>(ctx.session, "zero_legend"))
    DrawZeroLegend(ctx.theme, z->scenario.params.stage);
}
void DrawThreeDGanttLegend(ViewContext& ctx, const ScenarioSettings*) { DrawThreeDLegend(ctx.theme); }
void DrawMoeGanttLegend(ViewContext& ctx, const ScenarioSettings*) { DrawMoeLegend(ctx.theme); }

void DrawGanttView(ViewContext& ctx, GanttViewState& state) {
  const Theme& theme = ctx.theme;
  const Plan* run_plan = ctx.session.plan();
  if (run_plan == nullptr) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim),
                       "No run yet: the timeline fills in as the run's ops finish.");
    return;
  }
  const Plan& plan = *run_plan;
  const TimelineStore& store = ctx.session.store();
  const ImGuiIO& io = ImGui::GetIO();
  // With a second run laid over it, the view spans both.
  const TimeNs run_end_ns = std::max({store.end_ns(), ctx.clock.run_end_ns(),
                                      ctx.session.compare() != nullptr ? ctx.session.compare()->added_end_ns() : 0.0});
  const TimeNs cursor_ns = ctx.clock.cursor_ns();

  // Toolbar.
  const bool fit_clicked = ImGui::Button(Tr("Fit"));
  ImGui::SameLine();
  ImGui::Checkbox(Tr("Follow cursor"), &state.follow_cursor);
  ImGui::SameLine();
  if (ctx.insight != nullptr && ctx.insight->critical() != nullptr) {
    ImGui::Checkbox(Tr("Critical path"), &ctx.insight->show_critical_path);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", Tr("outline the chain of ops that sets the run's end (Metrics: its split)"));
    ImGui::SameLine();
  }
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim),
                     Tr("%zu ops  |  view %s wide  |  wheel: zoom, drag: pan, double-click: fit, click ruler: seek, click an op: select"),
                     store.event_count(), FormatTime(state.frame.width_px * state.frame.ns_per_px).c_str());
  const PreparedPipeline* prepared_pipeline = PreparedDetail<PreparedPipeline>(ctx.session, "pipeline_legend");
  const PipelinePlan* pipeline = prepared_pipeline != nullptr ? &prepared_pipeline->pipeline : nullptr;
  // The scenario's key line (its spec names it: scenario_panels.h).
  if (const ScenarioPanel* legend = PanelOf(ctx.session.run_scenario(), PanelSlot::kLegend))
    legend->draw(ctx, nullptr);
  if (ctx.session.compare() != nullptr) DrawCompareLegend(theme, *ctx.session.compare());
  // The host lane: a row per rank above its GPU rows, when the run has one.
  const HostLaneView host = PrepareHostLane(ctx.session.host_lane(), ctx.session.host_clock());
  const std::vector<GanttDisplayRow> display = InterleaveHostRows(store.rows(), host);
  if (!host.empty()) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim), "%s",
                       HostLaneKey(host, store.end_ns()).c_str());
  }

  // Geometry: label column, ruler, then the scrolling rows.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float line_h = ImGui::GetTextLineHeight();
  const float row_h = line_h + 6.0f;
  const float ruler_h = line_h + 8.0f;
  const int max_rank = store.rows().empty() ? 0 : store.rows().back().rank;
  const float label_w = ImGui::CalcTextSize(("GPU" + std::to_string(max_rank) + " compute").c_str()).x + 17.0f;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float timeline_w = avail.x - label_w - style.ScrollbarSize;
  if (timeline_w < 50 || avail.y < ruler_h + row_h) return;

  // Fit while the run is still arriving, once more when it ends, and on request.
  if (RunKeyChanged("##gantt_run", ctx.session.run_id())) state.fitted = false;
  state.frame.width_px = timeline_w;
  const bool running = ctx.session.state() == SessionState::kRunning;
  if (fit_clicked || (!state.fitted && store.event_count() > 0)) {
    state.frame = FitGantt(run_end_ns, timeline_w);
    state.fitted = !running;
  }
  state.frame.cursor_ns = cursor_ns;

  // The ruler (click or drag on it moves the replay cursor there).
  const ImVec2 ruler_origin(origin.x + label_w, origin.y);
  ImDrawList* outer = ImGui::GetWindowDrawList();
  ImGui::SetCursorScreenPos(ruler_origin);
  ImGui::InvisibleButton("##gantt_ruler", ImVec2(timeline_w, ruler_h));
  if (ImGui::IsItemActive()) {
    ctx.clock.SeekNs(std::clamp(state.frame.PxToTime(io.MousePos.x - ruler_origin.x), 0.0, run_end_ns));
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(Tr("click or drag to move the replay cursor"));

  // Rows: a child window so the rows scroll while the ruler stays.
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + ruler_h));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, 0));
  ImGui::BeginChild("##gantt_rows", ImVec2(avail.x, avail.y - ruler_h), false,
                    ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_AlwaysVerticalScrollbar);
  const int row_count = static_cast<int>(display.size());
  const float content_h = std::max(1.0f, row_count * row_h);
  const ImVec2 rows_pos = ImGui::GetWindowPos();
  const float rows_view_h = ImGui::GetWindowHeight();
  const float scroll_y = ImGui::GetScrollY();

  // One invisible button spans the whole timeline: it sets the scroll
  // height and receives drags, wheel and double-clicks.
  ImGui::SetCursorPos(ImVec2(label_w, 0));
  ImGui::InvisibleButton("##gantt_canvas", ImVec2(timeline_w, content_h));
  const bool canvas_hovered = ImGui::IsItemHovered();
  // A click (a press and release without a drag) selects the op under it.
  const bool clicked = ImGui::IsItemDeactivated() && io.MouseDragMaxDistanceSqr[0] < 9.0f;
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 1.0f)) {
    state.frame.view_start_ns -= io.MouseDelta.x * state.frame.ns_per_px;
    ImGui::SetScrollY(scroll_y - io.MouseDelta.y);
    state.follow_cursor = state.follow_cursor && io.MouseDelta.x == 0;
  }
  if (canvas_hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    state.frame = FitGantt(run_end_ns, timeline_w);
  }
  const bool rows_hovered = ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows);
  test_log::MarkRect("gantt-timeline", rows_pos.x + label_w, rows_pos.y, rows_pos.x + label_w + timeline_w,
                     rows_pos.y + rows_view_h);
  if (rows_hovered) {
    const double anchor_px = std::clamp<double>(io.MousePos.x - (rows_pos.x + label_w), 0.0, timeline_w);
    if (io.MouseWheel != 0 && !io.KeyShift) {
      state.frame = ZoomGantt(state.frame, std::pow(kWheelZoomStep, io.MouseWheel), anchor_px);
    }
    const float pan_notches = (io.KeyShift ? io.MouseWheel : 0.0f) + io.MouseWheelH;
    if (pan_notches != 0) {
      state.frame.view_start_ns -= pan_notches * kShiftWheelPanFraction * timeline_w * state.frame.ns_per_px;
      state.follow_cursor = false;
    }
  }
  // Follow: keep the cursor in view while playing; a pan turns it off.
  if (state.follow_cursor && ctx.clock.playing()) {
    const double x = state.frame.TimeToPx(cursor_ns);
    if (x > kFollowRightEdge * timeline_w) {
      state.frame.view_start_ns = cursor_ns - kFollowRightEdge * timeline_w * state.frame.ns_per_px;
    } else if (x < 0) {
      state.frame.view_start_ns = cursor_ns - (1.0 - kFollowRightEdge) * timeline_w * state.frame.ns_per_px;
    }
  }
  state.frame = ClampFrame(state.frame, run_end_ns);
  {
    // Where the cursor line is, for the real-input test's wheel zoom.
    const double cursor_px = state.frame.TimeToPx(cursor_ns);
    if (cursor_px >= 0 && cursor_px <= timeline_w) {
      const float x = rows_pos.x + label_w + static_cast<float>(cursor_px);
      test_log::MarkRect("gantt-cursor", x - 1, rows_pos.y, x + 1, rows_pos.y + rows_view_h);
    }
  }

  DrawRuler(outer, state.frame, ruler_origin, ruler_h, cursor_ns, theme);

  // Visible rows only: [first, last).
  const int first_row = std::clamp(static_cast<int>(scroll_y / row_h), 0, row_count);
  const int last_row = std::clamp(static_cast<int>((scroll_y + rows_view_h) / row_h) + 1, first_row, row_count);

  RowPass pass;
  pass.theme = &theme;
  pass.plan = &plan;
  pass.frame = &state.frame;
  pass.pipeline = pipeline;
  pass.bubbles = pipeline != nullptr ? &CachedBubbles(ctx.session) : nullptr;
  if (const PreparedThreeD* three_d = PreparedDetail<PreparedThreeD>(ctx.session, "three_d_legend")) {
    pass.three_d = &three_d->three_d;
  }
  pass.overlay = ctx.session.compare();
  FaultMarks faults;
  if (!ctx.session.faults().empty() && ctx.session.topology() != nullptr) {
    faults = MarkFaults(ctx.session.faults(), *ctx.session.topology(), plan.num_ranks);
    pass.faults = &faults;
  }
  if (ctx.insight != nullptr) {
    if (ctx.insight->show_critical_path) pass.path = ctx.insight->critical();
    pass.selected = ctx.insight->selection().op;
    if (pass.selected >= 0 && static_cast<std::size_t>(pass.selected) < plan.ops.size()) {
      pass.selected_match = plan.ops[static_cast<std::size_t>(pass.selected)].match;
    }
  }
  pass.left_x_px = rows_pos.x;
  pass.timeline_x_px = rows_pos.x + label_w;
  pass.row_h_px = row_h;
  pass.mouse = io.MousePos;
  pass.mouse_in_rows = canvas_hovered || (rows_hovered && io.MousePos.x >= rows_pos.x);

  ImDrawList* list = ImGui::GetWindowDrawList();
  const float view_top = rows_pos.y;
  const float view_bottom = rows_pos.y + rows_view_h;
  // Major ruler ticks continue down through the rows as faint grid lines.
  for (const RulerTick& tick : RulerTicks(state.frame)) {
    if (!tick.major) continue;
    const float x = pass.timeline_x_px + static_cast<float>(tick.x_px);
    list->AddLine(ImVec2(x, view_top), ImVec2(x, view_bottom), WithAlpha(theme.grid, 0.5f));
  }
  list->AddLine(ImVec2(pass.timeline_x_px - 1, view_top), ImVec2(pass.timeline_x_px - 1, view_bottom), theme.grid);

  const bool has_vtx_offset = (io.BackendFlags & ImGuiBackendFlags_RendererHasVtxOffset) != 0;
  const float narrowest_glyph_px = std::max(1.0f, ImGui::CalcTextSize("i").x);
  const float bubble_vertices_per_px = pipeline != nullptr ? kBubbleVerticesPerPx : 0.0f;
  const int worst_row_vertices =
      static_cast<int>((4.0f + 4.0f / narrowest_glyph_px + bubble_vertices_per_px +
                        (pass.overlay != nullptr ? kOutlineVerticesPerPx : 0.0f)) *
                       timeline_w) +
      kRowFixedVertices;
  int page = 0;
  int hovered_host = -1, hovered_host_row = -1;  // a host span under the mouse
  for (int r = first_row; r < last_row; ++r) {
    const float y = rows_pos.y - scroll_y + r * row_h;
    if (!has_vtx_offset && list->VtxBuffer.Size + worst_row_vertices >= kVertexLimit) {
      // This list might overflow 16-bit indices: continue in a new child
      // window (its own draw list), covering the remaining visible rows.
      DrawOverlay(list, pass, view_top, view_bottom, cursor_ns, theme);
      if (page > 0) ImGui::EndChild();
      ++page;
      ImGui::SetCursorScreenPos(ImVec2(rows_pos.x, y));
      const float page_h = std::min(view_bottom, rows_pos.y - scroll_y + content_h) - y;
      char page_name[24];
      std::snprintf(page_name, sizeof page_name, "##gantt_page%d", page);
      ImGui::BeginChild(page_name, ImVec2(label_w + timeline_w, std::max(1.0f, page_h)), false,
                        ImGuiWindowFlags_NoInputs | ImGuiWindowFlags_NoScrollbar |
                            ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoBackground);
      list = ImGui::GetWindowDrawList();
    }
    const GanttDisplayRow& shown = display[static_cast<std::size_t>(r)];
    if (shown.host) {
      DrawHostRow(list, host.rows[static_cast<std::size_t>(shown.index)], y, pass, &hovered_host);
      if (hovered_host >= 0 && hovered_host_row < 0) hovered_host_row = shown.index;
    } else {
      DrawRow(list, store, shown.index, y, pass);
    }
  }
  DrawOverlay(list, pass, view_top, view_bottom, cursor_ns, theme);
  if (page > 0) ImGui::EndChild();
  ImGui::EndChild();
  ImGui::PopStyleVar(2);

  if (clicked && ctx.insight != nullptr && pass.hovered_row >= 0 && pass.hovered_event >= 0) {
    const TimelineRow& row = store.rows()[static_cast<std::size_t>(pass.hovered_row)];
    ctx.insight->SelectOp(row.events[static_cast<std::size_t>(pass.hovered_event)].op);
  }
  if (pass.hovered_row >= 0 && pass.hovered_event >= 0) {
    const TimelineRow& row = store.rows()[static_cast<std::size_t>(pass.hovered_row)];
    const Event& e = row.events[static_cast<std::size_t>(pass.hovered_event)];
    const Op* op = OpOf(plan, e);
    std::string line = ThreeDRankLine(ctx.session, e);
    if (pass.overlay != nullptr) {
      const std::string compared = pass.overlay->HoverText(e.op);
      if (!compared.empty()) line += (line.empty() ? "" : "\n") + compared;
    }
    EventTooltip(e, op, row, plan, line);
  } else if (hovered_host_row >= 0 && hovered_host >= 0) {
    const TimelineRow& row = host.rows[static_cast<std::size_t>(hovered_host_row)];
    HostSpanTooltip(row.events[static_cast<std::size_t>(hovered_host)], plan, host.clock);
  } else if (pass.hovered_folded > 0) {
    ImGui::SetTooltip(Tr("%d ops, each narrower than a pixel here: zoom in (wheel) to see them"),
                      pass.hovered_folded);
  } else if (pass.hovered_row >= 0 && pass.hovered_bubble >= 0) {
    BubbleTooltip(store.rows()[static_cast<std::size_t>(pass.hovered_row)], plan, *pass.bubbles,
                  pass.hovered_bubble);
  }
}

}  // namespace shardlab::gui
