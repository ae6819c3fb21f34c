// The host lane on the Gantt: who coordinates. Above each rank's GPU rows,
// a "host" row with the CPU's enqueue calls for that rank's ops (a real
// run's host timestamps, or the simulator's modelled issues), so the
// timeline shows the CPU launching and the GPUs moving data, and how the
// launch cost bounds small operations.
//
//   HostEnqueueSpan (Backend::host_lane, LoadedTrace::host_lane)
//        │ PrepareHostLane: one TimelineRow per rank, sorted by start
//        ▼
//   HostLaneView {rows, busy_ns, clock}
//        │ InterleaveHostRows(store rows, view)
//        ▼
//   [host GPU0] [GPU0 send] [GPU0 recv] [host GPU1] [GPU1 send] ...
//
// A host row's boxes are host time, never GPU time: each is one call that
// put work on a GPU's queue. The events of a host row are spans, not ops
// that ran: op = the op the call issued (-1: a whole-plan graph launch),
// clock = the lane's clock (kHost, or kSimulated for the model).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "app/gui/model/timeline_store.h"
#include "engine/core/event.h"

namespace shardlab::gui {

struct HostLaneView {
  std::vector<TimelineRow> rows;  // one per rank with spans, in rank order; events sorted by start
  TimeNs busy_ns = 0;             // the spans' total length, all ranks
  TimeNs end_ns = 0;              // the latest span end
  std::size_t spans = 0;
  ClockKind clock = ClockKind::kHost;
  bool empty() const { return rows.empty(); }
  /// The host row of `rank`, or nullptr.
  const TimelineRow* RowOf(int rank) const;
};

/// Groups `spans` into one row per rank (spans with rank < 0 are left out).
HostLaneView PrepareHostLane(std::span<const HostEnqueueSpan> spans, ClockKind clock);

/// One row of the Gantt: a GPU row of the store, or a host row of the view.
struct GanttDisplayRow {
  bool host = false;
  int index = 0;  // into TimelineStore::rows() or HostLaneView::rows
  int rank = 0;
};

/// The store's rows with each rank's host row placed just above that
/// rank's first GPU row; a host row of a rank without GPU rows comes in
/// rank order among the others.
std::vector<GanttDisplayRow> InterleaveHostRows(const std::vector<TimelineRow>& gpu_rows, const HostLaneView& host);

/// The spans' total length (HostLaneView::busy_ns without the rows).
TimeNs HostLaneTotalNs(std::span<const HostEnqueueSpan> spans);

/// "host GPU3": the row's label (the CPU's calls for GPU 3's ops).
std::string HostRowLabel(int rank);

/// One line under the timeline's toolbar: what the host rows are, their
/// total and its share of the run ("host rows: the CPU's enqueue calls (host
/// time, not GPU time): 112 calls, 589 us in all, 99% of the 594 us run").
std::string HostLaneKey(const HostLaneView& host, TimeNs run_end_ns);

}  // namespace shardlab::gui
