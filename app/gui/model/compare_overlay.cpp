#include "app/gui/model/compare_overlay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/core/error.h"

namespace shardlab::gui {

double ErrorShade(TimeNs a_ns, TimeNs b_ns) {
  if (a_ns <= 0 || b_ns <= 0) return a_ns == b_ns ? 0.0 : 1.0;
  return std::min(1.0, std::fabs(std::log2(b_ns / a_ns)) / std::log2(kFullShadeFactor));
}

CompareOverlay::CompareOverlay(const RunRecord& shown, const RunRecord& added,
                               std::vector<std::int32_t> event_op_ids, std::string added_source)
    : shown_is_a_(!SwapForMeasuredFirst(shown, added)), event_op_ids_(std::move(event_op_ids)),
      added_source_(std::move(added_source)) {
  comparison_ = shown_is_a_ ? CompareRuns(shown, added) : CompareRuns(added, shown);
  ops_.reserve(shown.ops.size());
  for (std::size_t i = 0; i < shown.ops.size(); ++i) {
    const RunOp& s = shown.ops[i];
    const RunOp& d = added.ops[i];  // same ids in the same order: CompareRuns checked
    OverlayOp op;
    op.id = s.id;
    op.shown_start_ns = s.start_ns;
    op.shown_end_ns = s.end_ns;
    op.added_start_ns = d.start_ns;
    op.added_end_ns = d.end_ns;
    op.error = comparison_.ops[i].error;
    op.shade = ErrorShade(s.duration_ns(), d.duration_ns());  // symmetric: the same either way
    ops_.push_back(op);
    added_end_ns_ = std::max(added_end_ns_, d.end_ns);
  }
}

const OverlayOp* CompareOverlay::Find(std::int32_t event_op) const {
  std::int32_t id = event_op;
  if (!event_op_ids_.empty()) {
    if (event_op < 0 || static_cast<std::size_t>(event_op) >= event_op_ids_.size()) return nullptr;
    id = event_op_ids_[static_cast<std::size_t>(event_op)];
  }
  const auto it = std::lower_bound(ops_.begin(), ops_.end(), id,
                                   [](const OverlayOp& op, std::int32_t v) { return op.id < v; });
  return it != ops_.end() && it->id == id ? &*it : nullptr;
}

std::string CompareOverlay::HoverText(std::int32_t event_op) const {
  const OverlayOp* op = Find(event_op);
  if (op == nullptr) return "";
  char error[32];
  std::snprintf(error, sizeof error, "%+.0f%%", 100.0 * op->error);
  // A first, as the comparison (and the CLI) orders them.
  const TimeNs shown_ns = op->shown_end_ns - op->shown_start_ns;
  const TimeNs added_ns = op->added_end_ns - op->added_start_ns;
  return "op " + std::to_string(op->id) + " \xC2\xB7 " + comparison_.a_label + " " +
         FormatTime(shown_is_a_ ? shown_ns : added_ns) + " \xC2\xB7 " + comparison_.b_label + " " +
         FormatTime(shown_is_a_ ? added_ns : shown_ns) + " \xC2\xB7 error " + error;
}

std::vector<OverlayBox> PrepareOverlayRow(const TimelineRow& row, const CompareOverlay& overlay,
                                          const GanttFrame& frame) {
  std::vector<OverlayBox> boxes;
  // The bars' rule (PrepareGanttRow): an op shows once it started by the
  // cursor, up to the cursor.
  const TimeNs last_start = std::min(frame.view_end_ns(), frame.cursor_ns);
  for (std::size_t i = 0; i < row.events.size(); ++i) {
    const OverlayOp* op = overlay.Find(row.events[i].op);
    if (op == nullptr || op->added_end_ns < frame.view_start_ns || op->added_start_ns > last_start) continue;
    OverlayBox box;
    box.in_flight = op->added_end_ns > frame.cursor_ns;
    const TimeNs shown_end = box.in_flight ? frame.cursor_ns : op->added_end_ns;
    box.x0_px = std::clamp(frame.TimeToPx(op->added_start_ns), 0.0, frame.width_px);
    box.x1_px = std::clamp(frame.TimeToPx(shown_end), 0.0, frame.width_px);
    if (box.x1_px - box.x0_px < 1.0) box.x1_px = std::min(box.x0_px + 1.0, frame.width_px);
    box.event_index = static_cast<int>(i);
    box.shade = op->shade;
    boxes.push_back(box);
  }
  return boxes;
}

std::vector<SummaryLine> OverlaySummary(const Comparison& c) {
  std::vector<SummaryLine> lines;
  auto add = [&](const CompareRow& row) { lines.push_back({row.name, row.a_ns, row.b_ns, row.ratio()}); };
  add(c.run);
  for (const CompareRow& row : c.phases) add(row);
  add(c.communication);
  add(c.compute);
  add(c.idle);
  return lines;
}

}  // namespace shardlab::gui
