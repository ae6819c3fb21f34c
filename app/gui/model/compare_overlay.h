// CompareOverlay: a second run of the plan the Gantt shows, laid over it
// (File > Open trace to compare...; --compare-trace FILE).
//
//   row "GPU 1 recv"   ████████ recv+ c7        ████ recv c2      solid: the run shown
//                     ┌──────────────────────┐┌─────────┐        outline: the added run,
//                     └──────────────────────┘└─────────┘        same row, linked by op id,
//                                                                coloured by |log2(B/A)|
//
// Which run is A (the reference) is engine/compare's rule, the CLI's: the
// measured one, whichever of the two is on screen (SwapForMeasuredFirst);
// solid and outline stay the run shown and the run added. Both are revealed
// by the replay cursor alike: an outline appears once its op has started by
// the cursor and is cut there, as the Gantt's bars are (PrepareGanttRow).
//
// Prepare only (tested in tests/gui_model): which outline goes where on a
// row, the colour shade of each op's error, the hover line, and the
// per-phase summary, which is engine/compare's Comparison: the numbers
// `shardlab-cli compare A B` prints, in either order of the files.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/gui/model/gantt_layout.h"
#include "app/gui/model/timeline_store.h"
#include "engine/compare/compare.h"

namespace shardlab::gui {

/// An op is "furthest off" (shade 1) at this factor between the runs.
inline constexpr double kFullShadeFactor = 4.0;

/// Both runs' times of one op, and the error.
struct OverlayOp {
  std::int32_t id = -1;
  TimeNs shown_start_ns = 0, shown_end_ns = 0;  // the run shown (solid)
  TimeNs added_start_ns = 0, added_end_ns = 0;  // the added run (outline)
  double error = 0;                     // (B - A) / A of the durations, A the comparison's
  double shade = 0;                     // 0: agree .. 1: kFullShadeFactor or more apart
};

/// One outline on a row: the added run's time of the row's event, up to the cursor.
struct OverlayBox {
  double x0_px = 0, x1_px = 0;  // clamped to [0, width]; at least 1 px wide
  bool in_flight = false;       // the cursor cuts it
  int event_index = 0;          // the row's event it belongs to
  double shade = 0;
};

class CompareOverlay {
 public:
  /// `shown` is the run on screen, `added` the other run of its plan; the
  /// comparison's A is the measured one of the two (SwapForMeasuredFirst).
  /// `event_op_ids`: the plan op id of each shown Event.op (a trace's
  /// original_op); empty when Event.op is the plan op id already. Throws
  /// Error ("not runs of one plan: op 0: ...") when the plans differ.
  CompareOverlay(const RunRecord& shown, const RunRecord& added, std::vector<std::int32_t> event_op_ids,
                 std::string added_source);

  const Comparison& comparison() const { return comparison_; }
  /// True when the run shown is the comparison's A (else the added one is).
  bool shown_is_a() const { return shown_is_a_; }
  /// How the comparison names the run shown and the added one.
  const std::string& shown_label() const { return shown_is_a_ ? comparison_.a_label : comparison_.b_label; }
  const std::string& added_label() const { return shown_is_a_ ? comparison_.b_label : comparison_.a_label; }
  const std::string& added_source() const { return added_source_; }
  /// The latest end of the added run's ops: the Gantt fits both runs.
  TimeNs added_end_ns() const { return added_end_ns_; }
  /// The op that the shown event `event_op` (an Event.op) ran, or null.
  const OverlayOp* Find(std::int32_t event_op) const;
  /// "op 17 · cuda (cuda-event) 14.4 µs · sim (simulated) 36.6 µs · error +154%"
  std::string HoverText(std::int32_t event_op) const;

 private:
  Comparison comparison_;
  bool shown_is_a_ = true;
  std::vector<OverlayOp> ops_;                 // sorted by id
  std::vector<std::int32_t> event_op_ids_;
  std::string added_source_;
  TimeNs added_end_ns_ = 0;
};

/// The added run's outlines of `row`'s events that fall in the frame's view
/// and started by its cursor, cut at the cursor (as PrepareGanttRow cuts the
/// bars). One per event with a counterpart, on the same row; O(events of the row).
std::vector<OverlayBox> PrepareOverlayRow(const TimelineRow& row, const CompareOverlay& overlay,
                                          const GanttFrame& frame);

/// The shade of an error: |log2(B/A)| / log2(kFullShadeFactor), in [0, 1].
double ErrorShade(TimeNs a_ns, TimeNs b_ns);

/// The metrics panel's lines: one per phase (and the totals), each
/// "reduce-scatter   822 µs   201 µs   0.24x"; the same rows as the CLI.
struct SummaryLine {
  std::string name;
  TimeNs a_ns = 0, b_ns = 0;
  double ratio = 0;
};
std::vector<SummaryLine> OverlaySummary(const Comparison& comparison);

}  // namespace shardlab::gui
