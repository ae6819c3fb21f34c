// GanttLayout: the prepare half of the timeline (see gantt_layout.h).
//
// Folding, per row, left to right:
//
//   ops:    |#####|.|.|..|.|######|.|      # at least kMinOpPx wide, . narrower
//   boxes:  [op   ][4 ops ][op    ][1]
//
// A run of narrow ops becomes one block until the block would span more
// than kFoldSpanPx or a wide op comes; a wide op always gets its own box.
// Consecutive blocks therefore start more than kFoldSpanPx - kMinOpPx apart,
// which bounds the boxes of a row by about width / 2 plus its wide ops.
#include "app/gui/model/gantt_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace shardlab::gui {
namespace {

constexpr double kFoldSpanPx = 3.0;      // a folded block closes before it spans more
constexpr double kMinNsPerPx = 1e-3;     // zoom limits: 1 ps per pixel ...
constexpr double kMaxNsPerPx = 1e12;     // ... to 1,000 s per pixel
constexpr double kFitMargin = 0.02;      // share of the run left free on each side
constexpr double kMinMinorTickPx = 6.0;  // minor ticks closer than this are left out

// A box in the making, before x is clamped to the view.
struct Pending {
  double x0_px = 0;
  double x1_px = 0;
  int first_event = 0;
  int event_count = 0;
  bool in_flight = false;
};

}  // namespace

std::vector<GanttBox> PrepareGanttRow(const TimelineRow& row, const GanttFrame& frame) {
  std::vector<GanttBox> boxes;
  const std::vector<Event>& events = row.events;
  if (events.empty() || !(frame.ns_per_px > 0) || !(frame.width_px > 0)) return boxes;
  const TimeNs view_start = frame.view_start_ns;
  const TimeNs last_start = std::min(frame.view_end_ns(), frame.cursor_ns);

  // Events of a lane never overlap, so ends are sorted too: the first
  // visible one is the first that ends at or after the view's start.
  const auto first = std::partition_point(events.begin(), events.end(),
                                          [&](const Event& e) { return e.end_ns < view_start; });

  auto emit = [&](const Pending& p, bool widen) {
    GanttBox box;
    box.x0_px = std::clamp(p.x0_px, 0.0, frame.width_px);
    box.x1_px = std::clamp(p.x1_px, 0.0, frame.width_px);
    if (widen && box.x1_px - box.x0_px < kMinOpPx) {
      // A block of tiny ops stays visible: 1 px wide, drawn under the next
      // box if they touch; pulled left at the view's right edge.
      if (box.x0_px + kMinOpPx <= frame.width_px) {
        box.x1_px = box.x0_px + kMinOpPx;
      } else {
        box.x1_px = frame.width_px;
        box.x0_px = std::max(frame.width_px - kMinOpPx, 0.0);
      }
      if (!boxes.empty()) box.x0_px = std::max(box.x0_px, boxes.back().x0_px);  // keep x0 sorted
    }
    box.first_event = p.first_event;
    box.event_count = p.event_count;
    box.in_flight = p.in_flight;
    boxes.push_back(box);
  };

  Pending block;  // the narrow ops folded so far (event_count == 0: none)
  for (auto it = first; it != events.end() && it->start_ns <= last_start; ++it) {
    const Event& e = *it;
    const bool cut = e.end_ns > frame.cursor_ns;
    const TimeNs shown_end = cut ? frame.cursor_ns : e.end_ns;
    Pending op;
    op.x0_px = frame.TimeToPx(e.start_ns);
    op.x1_px = frame.TimeToPx(shown_end);
    op.first_event = static_cast<int>(it - events.begin());
    op.event_count = 1;
    op.in_flight = cut;

    if (op.x1_px - op.x0_px >= kMinOpPx) {
      if (block.event_count > 0) emit(block, true);
      block.event_count = 0;
      emit(op, false);
      continue;
    }
    if (block.event_count > 0 && op.x1_px - block.x0_px <= kFoldSpanPx) {
      block.x1_px = op.x1_px;
      block.event_count += 1;
      block.in_flight = cut;
      continue;
    }
    if (block.event_count > 0) emit(block, true);
    block = op;
  }
  if (block.event_count > 0) emit(block, true);
  return boxes;
}

GanttFrame ZoomGantt(const GanttFrame& frame, double factor, double anchor_px) {
  if (!(factor > 0) || !std::isfinite(factor) || !std::isfinite(anchor_px)) return frame;
  GanttFrame zoomed = frame;
  const TimeNs anchor_ns = frame.PxToTime(anchor_px);
  zoomed.ns_per_px = std::clamp(frame.ns_per_px / factor, kMinNsPerPx, kMaxNsPerPx);
  zoomed.view_start_ns = anchor_ns - anchor_px * zoomed.ns_per_px;
  return zoomed;
}

GanttFrame FitGantt(TimeNs end_ns, double width_px) {
  GanttFrame frame;
  frame.width_px = width_px > 0 ? width_px : 1.0;
  const TimeNs span_ns = end_ns > 0 && std::isfinite(end_ns) ? end_ns : 1000.0;  // empty run: 1 µs
  frame.view_start_ns = -kFitMargin * span_ns;
  frame.ns_per_px =
      std::clamp(span_ns * (1 + 2 * kFitMargin) / frame.width_px, kMinNsPerPx, kMaxNsPerPx);
  return frame;
}

namespace {

// "1.5 µs": `t_ns` in `unit_ns` (1, 1e3, 1e6 or 1e9) with `decimals`.
std::string TickLabel(TimeNs t_ns, double unit_ns, int decimals) {
  static const char* const kUnitNames[] = {"ns", "µs", "ms", "s"};
  const int unit_index = unit_ns >= 1e9 ? 3 : unit_ns >= 1e6 ? 2 : unit_ns >= 1e3 ? 1 : 0;
  const double value = t_ns / unit_ns;
  char text[64];
  if (std::abs(value) < 0.5 * std::pow(10.0, -decimals)) {
    std::snprintf(text, sizeof text, "0 %s", kUnitNames[unit_index]);  // never "-0.0"
  } else {
    std::snprintf(text, sizeof text, "%.*f %s", decimals, value, kUnitNames[unit_index]);
  }
  return text;
}

}  // namespace

std::vector<RulerTick> RulerTicks(const GanttFrame& frame, double min_label_px) {
  std::vector<RulerTick> ticks;
  if (!(frame.ns_per_px > 0) || !(frame.width_px > 0)) return ticks;
  min_label_px = std::max(min_label_px, 1.0);

  // The smallest 1-2-5 step whose labels are at least min_label_px apart.
  const double wanted_ns = min_label_px * frame.ns_per_px;
  const double decade = std::pow(10.0, std::floor(std::log10(wanted_ns)));
  double step_ns = 10 * decade;
  int minor_per_major = 5;  // minor ticks: 1 -> 0.2 steps, 2 -> 0.5, 5 -> 1
  if (decade >= wanted_ns) {
    step_ns = decade;
  } else if (2 * decade >= wanted_ns) {
    step_ns = 2 * decade;
    minor_per_major = 4;
  } else if (5 * decade >= wanted_ns) {
    step_ns = 5 * decade;
  }

  // One unit for the whole ruler, from the largest time shown; enough
  // decimals that neighbouring labels differ.
  const TimeNs view_end = frame.view_end_ns();
  const double largest_ns = std::max(std::abs(frame.view_start_ns), std::abs(view_end));
  double unit_ns = 1;
  for (const double u : {1e3, 1e6, 1e9})
    if (largest_ns >= u) unit_ns = u;
  int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step_ns / unit_ns) - 1e-9)));
  while (decimals > 3 && unit_ns > 1) {  // "5000.002 µs" rather than "5.000002 ms"
    unit_ns /= 1000;
    decimals -= 3;
  }

  const bool with_minor = step_ns / minor_per_major / frame.ns_per_px >= kMinMinorTickPx;
  const double minor_ns = with_minor ? step_ns / minor_per_major : step_ns;
  // Ticks at integer multiples (no accumulated rounding).
  const double first = std::ceil(frame.view_start_ns / minor_ns);
  const double last = std::floor(view_end / minor_ns);
  for (double k = first; k <= last; k += 1) {
    RulerTick tick;
    tick.t_ns = k * minor_ns;
    tick.x_px = std::clamp(frame.TimeToPx(tick.t_ns), 0.0, frame.width_px);
    const double majors = k / (with_minor ? minor_per_major : 1);
    tick.major = majors == std::floor(majors);
    if (tick.major) tick.label = TickLabel(tick.t_ns, unit_ns, decimals);
    ticks.push_back(std::move(tick));
  }
  return ticks;
}

int EventAtPx(const TimelineRow& row, const std::vector<GanttBox>& boxes, double x_px) {
  // Boxes are sorted by x0; a widened block may reach under its successor,
  // so the later of two candidates wins (it is drawn on top).
  const auto after = std::upper_bound(boxes.begin(), boxes.end(), x_px,
                                      [](double x, const GanttBox& b) { return x < b.x0_px; });
  for (auto it = after; it != boxes.begin() && after - it < 2;) {
    --it;
    if (x_px < it->x0_px || x_px > it->x1_px) continue;
    if (it->event_count != 1) return -1;
    return it->first_event < static_cast<int>(row.events.size()) ? it->first_event : -1;
  }
  return -1;
}

}  // namespace shardlab::gui
