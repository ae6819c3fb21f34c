// The Gantt view: one row per (rank, lane), ops as boxes coloured by phase,
// the replay cursor as a vertical line, a time ruler on top.
//
//   [Fit] [x] follow cursor                         wheel zoom · drag pan
//             0 ns      200 µs     400 µs     600 µs        <- ruler (click: seek)
//   GPU0 send │██C██│ │██D██│  ▒▒▒ 37 ops ▒▒▒   │            <- boxes, folded block
//   GPU0 recv │   │██B██│ │██C██│               │
//   GPU1 send │██B██│  ...                      │ <- cursor
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
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/gui/views/draw_util.h"
#include "app/gui/views/run_key.h"
#include "app/gui/views/views.h"

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

std::string RowLabel(const TimelineRow& row) {
  return "GPU" + std::to_string(row.rank) + " " + LaneName(row.lane);
}

std::string FormatGbps(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, gbps >= 100 ? "%.0f GB/s" : gbps >= 1 ? "%.2f GB/s" : "%.3f GB/s", gbps);
  return text;
}

/// Labels for one op box, longest first: "C send -> GPU4", "C ->4", "C".
void OpLabels(const Event& e, const Op* op, std::string out[3]) {
  const std::string chunk = op != nullptr && op->tags.chunk >= 0 ? ChunkLetter(op->tags.chunk) : "";
  const std::string kind = OpKindName(e.kind);
  std::string lead = chunk.empty() ? kind : chunk;
  if (e.peer >= 0 && (e.kind == OpKind::kSend || e.kind == OpKind::kRecv)) {
    const bool send = e.kind == OpKind::kSend;
    const std::string peer = std::to_string(e.peer);
    out[0] = (chunk.empty() ? "" : chunk + " ") + kind + (send ? " -> GPU" : " <- GPU") + peer;
    out[1] = lead + (send ? " ->" : " <-") + peer;
  } else {
    out[0] = chunk.empty() ? kind : chunk + " " + kind;
    out[1] = lead;
  }
  out[2] = lead;
}

void EventTooltip(const Event& e, const Op* op, const TimelineRow& row) {
  ImGui::BeginTooltip();
  ImGui::Text("op %d  %s%s%s", e.op, OpKindName(e.kind),
              op != nullptr && op->reduce != ReduceOp::kNone ? " + " : "",
              op != nullptr && op->reduce != ReduceOp::kNone ? ReduceOpName(op->reduce) : "");
  if (e.peer >= 0 && e.kind == OpKind::kSend) {
    ImGui::Text("GPU%d -> GPU%d", e.rank, e.peer);
  } else if (e.peer >= 0 && e.kind == OpKind::kRecv) {
    ImGui::Text("GPU%d <- GPU%d", e.rank, e.peer);
  } else {
    ImGui::Text("GPU%d, %s lane", e.rank, LaneName(row.lane));
  }
  ImGui::Separator();
  ImGui::Text("bytes     %s", FormatBytes(e.bytes).c_str());
  ImGui::Text("start     %s", FormatTime(e.start_ns).c_str());
  ImGui::Text("duration  %s", FormatTime(e.duration_ns()).c_str());
  if (e.bytes > 0 && e.duration_ns() > 0) {
    // 1 byte per ns is 1 GB/s, so no conversion factor.
    ImGui::Text("achieved  %s", FormatGbps(static_cast<double>(e.bytes) / e.duration_ns()).c_str());
  }
  ImGui::Separator();
  ImGui::Text("step %d", e.step);
  if (op != nullptr) {
    if (op->tags.phase != Phase::kNone) ImGui::Text("phase %s", PhaseName(op->tags.phase));
    if (op->tags.chunk >= 0) ImGui::Text("chunk %s", ChunkLetter(op->tags.chunk).c_str());
  }
  if (e.clock != ClockKind::kSimulated) ImGui::TextDisabled("clock: %s", ClockKindName(e.clock));
  if (e.status != EventStatus::kOk) ImGui::TextDisabled("status: failed or cancelled");
  ImGui::EndTooltip();
}

/// Everything one frame's row drawing needs.
struct RowPass {
  const Theme* theme = nullptr;
  const Plan* plan = nullptr;
  const GanttFrame* frame = nullptr;
  float timeline_x_px = 0;   // screen x of the view's left edge (t = view start)
  float row_h_px = 0;
  float left_x_px = 0;       // screen x of the label column
  ImVec2 mouse;
  bool mouse_in_rows = false;
  // Outputs: what the mouse is over.
  int hovered_row = -1;
  int hovered_event = -1;
  int hovered_folded = 0;    // > 0: the ops count of a folded block under the mouse
};

const Op* OpOf(const Plan& plan, const Event& e) {
  return e.op >= 0 && e.op < static_cast<int>(plan.ops.size()) ? &plan.ops[static_cast<std::size_t>(e.op)]
                                                                : nullptr;
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
  const bool first_of_rank = r == 0 || store.rows()[static_cast<std::size_t>(r - 1)].rank != row.rank;
  if (first_of_rank) list->AddLine(ImVec2(pass.left_x_px, y0), ImVec2(right_px, y0), theme.grid);

  const std::string label = RowLabel(row);
  const float text_y = y0 + (pass.row_h_px - ImGui::GetTextLineHeight()) * 0.5f;
  list->AddText(ImVec2(pass.left_x_px + 6, text_y), first_of_rank ? theme.text : theme.text_dim, label.c_str());

  const std::vector<GanttBox> boxes = PrepareGanttRow(row, *pass.frame);
  const float by0 = y0 + kRowGapPx;
  const float by1 = y1 - kRowGapPx;
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
        const std::string text = std::to_string(box.event_count) + " ops";
        if (ImGui::CalcTextSize(text.c_str()).x + 6 <= width) {
          list->AddText(ImVec2(x0 + 3, text_y), ContrastText(theme.folded), text.c_str());
        }
      }
      continue;
    }
    const Event& e = row.events[static_cast<std::size_t>(box.first_event)];
    const Op* op = OpOf(*pass.plan, e);
    const Color fill = theme.PhaseColor(op != nullptr ? op->tags.phase : Phase::kNone);
    list->AddRectFilled(ImVec2(x0, by0), ImVec2(x1, by1), fill);
    if (box.in_flight && width >= 3.0f) {
      // The op the cursor cuts: a bright leading edge says "still running".
      list->AddRectFilled(ImVec2(x1 - 2, by0), ImVec2(x1, by1), theme.cursor);
    }
    if (width >= kMinLabelBoxPx) {
      OpLabels(e, op, labels);
      if (const std::string* text = FitText(labels, 3, width - 4)) {
        list->AddText(ImVec2(x0 + 2, text_y), ContrastText(fill), text->c_str());
      }
    }
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
    list->AddRect(ImVec2(pass.left_x_px, y0), ImVec2(right_px, y1), WithAlpha(theme.text, 0.25f));
  }
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
  const TimeNs run_end_ns = std::max(store.end_ns(), ctx.clock.run_end_ns());
  const TimeNs cursor_ns = ctx.clock.cursor_ns();

  // Toolbar.
  const bool fit_clicked = ImGui::Button("Fit");
  ImGui::SameLine();
  ImGui::Checkbox("Follow cursor", &state.follow_cursor);
  ImGui::SameLine();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme.text_dim),
                     "%zu ops  |  view %s wide  |  wheel: zoom, drag: pan, double-click: fit, click ruler: seek",
                     store.event_count(), FormatTime(state.frame.width_px * state.frame.ns_per_px).c_str());

  // Geometry: label column, ruler, then the scrolling rows.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float line_h = ImGui::GetTextLineHeight();
  const float row_h = line_h + 6.0f;
  const float ruler_h = line_h + 8.0f;
  const int max_rank = store.rows().empty() ? 0 : store.rows().back().rank;
  const float label_w = ImGui::CalcTextSize(("GPU" + std::to_string(max_rank) + " compute").c_str()).x + 14.0f;
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
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("click or drag to move the replay cursor");

  // Rows: a child window so the rows scroll while the ruler stays.
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + ruler_h));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, 0));
  ImGui::BeginChild("##gantt_rows", ImVec2(avail.x, avail.y - ruler_h), false,
                    ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_AlwaysVerticalScrollbar);
  const int row_count = static_cast<int>(store.rows().size());
  const float content_h = std::max(1.0f, row_count * row_h);
  const ImVec2 rows_pos = ImGui::GetWindowPos();
  const float rows_view_h = ImGui::GetWindowHeight();
  const float scroll_y = ImGui::GetScrollY();

  // One invisible button spans the whole timeline: it sets the scroll
  // height and receives drags, wheel and double-clicks.
  ImGui::SetCursorPos(ImVec2(label_w, 0));
  ImGui::InvisibleButton("##gantt_canvas", ImVec2(timeline_w, content_h));
  const bool canvas_hovered = ImGui::IsItemHovered();
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 1.0f)) {
    state.frame.view_start_ns -= io.MouseDelta.x * state.frame.ns_per_px;
    ImGui::SetScrollY(scroll_y - io.MouseDelta.y);
    state.follow_cursor = state.follow_cursor && io.MouseDelta.x == 0;
  }
  if (canvas_hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    state.frame = FitGantt(run_end_ns, timeline_w);
  }
  const bool rows_hovered = ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows);
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

  DrawRuler(outer, state.frame, ruler_origin, ruler_h, cursor_ns, theme);

  // Visible rows only: [first, last).
  const int first_row = std::clamp(static_cast<int>(scroll_y / row_h), 0, row_count);
  const int last_row = std::clamp(static_cast<int>((scroll_y + rows_view_h) / row_h) + 1, first_row, row_count);

  RowPass pass;
  pass.theme = &theme;
  pass.plan = &plan;
  pass.frame = &state.frame;
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
  const int worst_row_vertices =
      static_cast<int>((4.0f + 4.0f / narrowest_glyph_px) * timeline_w) + kRowFixedVertices;
  int page = 0;
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
    DrawRow(list, store, r, y, pass);
  }
  DrawOverlay(list, pass, view_top, view_bottom, cursor_ns, theme);
  if (page > 0) ImGui::EndChild();
  ImGui::EndChild();
  ImGui::PopStyleVar(2);

  if (pass.hovered_row >= 0 && pass.hovered_event >= 0) {
    const TimelineRow& row = store.rows()[static_cast<std::size_t>(pass.hovered_row)];
    const Event& e = row.events[static_cast<std::size_t>(pass.hovered_event)];
    EventTooltip(e, OpOf(plan, e), row);
  } else if (pass.hovered_folded > 0) {
    ImGui::SetTooltip("%d ops, each narrower than a pixel here: zoom in (wheel) to see them",
                      pass.hovered_folded);
  }
}

}  // namespace shardlab::gui
