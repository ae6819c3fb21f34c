// GanttLayout: the prepare half of the timeline (Tracy's split: prepare is
// plain C++ and tested, draw is ImDrawList).
//
//   per frame: GanttFrame {view start, ns per px, width, cursor}
//   per row:   binary-search the visible events, fold runs of ops narrower
//              than kMinOpPx into one block ("37 ops"), clamp x to the view
//
// An op at least kMinOpPx wide is always drawn on its own: folding never
// hides an op that is longer than a pixel.
#pragma once

#include <string>
#include <vector>

#include "app/gui/model/timeline_store.h"

namespace shardlab::gui {

inline constexpr double kMinOpPx = 1.0;

/// The time window a Gantt shows, and its width in pixels.
struct GanttFrame {
  TimeNs view_start_ns = 0;
  double ns_per_px = 1.0;
  double width_px = 1000.0;
  /// Events starting after this are not shown yet (replay); partly shown
  /// up to it when they are in flight. Use a huge value to show all.
  TimeNs cursor_ns = 1e300;

  double TimeToPx(TimeNs t) const { return (t - view_start_ns) / ns_per_px; }
  TimeNs PxToTime(double px) const { return view_start_ns + px * ns_per_px; }
  TimeNs view_end_ns() const { return view_start_ns + width_px * ns_per_px; }
};

/// One drawable box of a row, in pixels relative to the view's left edge.
struct GanttBox {
  double x0_px = 0;
  double x1_px = 0;            // x1 - x0 >= 1 but where the view's edge clips an op;
                               // a block of tiny ops widened to 1 px may reach under
                               // the next box (draw in order: boxes are sorted by x0)
  int first_event = 0;         // index into the row's events
  int event_count = 1;         // > 1: a folded block of tiny ops
  bool in_flight = false;      // the cursor cuts this op
};

struct GanttRowBoxes {
  int row = 0;                 // index into TimelineStore::rows()
  std::vector<GanttBox> boxes;
};

/// Visible boxes of one row: events overlapping [view start, view end]
/// that started by the cursor, tiny neighbours folded, x clamped to
/// [0, width]. Cost: O(log n + visible boxes).
std::vector<GanttBox> PrepareGanttRow(const TimelineRow& row, const GanttFrame& frame);

/// Zooms by `factor` (> 1 zooms in) keeping the time under `anchor_px` fixed.
GanttFrame ZoomGantt(const GanttFrame& frame, double factor, double anchor_px);
/// A frame that fits [0, end_ns] into `width_px`, with a little margin.
GanttFrame FitGantt(TimeNs end_ns, double width_px);

struct RulerTick {
  double x_px = 0;
  TimeNs t_ns = 0;
  std::string label;           // "1.5 µs", "200 ns", "3 ms"
  bool major = true;
};

/// Ticks at 1-2-5 steps so that labels are at least `min_label_px` apart.
std::vector<RulerTick> RulerTicks(const GanttFrame& frame, double min_label_px = 80.0);

/// The event under pixel x of a row's boxes, or -1 (a folded block: -1).
int EventAtPx(const TimelineRow& row, const std::vector<GanttBox>& boxes, double x_px);

}  // namespace shardlab::gui
