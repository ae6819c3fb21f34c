// MemoryTimeline: the device memory a plan's buffers hold at replay time t,
// per rank and category, rebuilt from the recorded events by the rule the
// backend's MemoryTracker (engine/run/memory_tracker.h) counted with:
//
//   persistent buffer   live for the whole run
//   transient buffer    live from the start of the first op that touches it
//                       to the end of the last one: [first start, last end)
//
//   bytes ▲            gathered L3 (fwd)          gathered L3 (bwd)
//         │              ┌────┐                     ┌────┐
//         │ ═════════════╧════╧═══ persistent ══════╧════╧═══════
//         └──────────────────────────────────────────────────────► t
//
// Why not ask the backend? Its tracker belongs to the worker thread and
// changes while the run goes, with no lock; and the replay shows the
// recorded run in slow motion long after the backend finished. The events
// say when every op ran, which is all the rule needs; the peaks this finds
// equal the tracker's (tested against the simulator).
#pragma once

#include <array>
#include <vector>

#include "app/gui/model/timeline_store.h"
#include "engine/plan/plan.h"

namespace shardlab::gui {

/// Bytes by MemoryCategory (indexed by its value).
using CategoryBytes = std::array<Bytes, kMemoryCategoryCount>;

class MemoryTimeline {
 public:
  /// Reads every buffer of `plan` and the lifetimes of its transient ones
  /// from the events in `store` so far: a transient buffer some of whose
  /// ops have not been recorded yet stays live to the end of time.
  void Build(const Plan& plan, const TimelineStore& store);

  int ranks() const { return static_cast<int>(persistent_.size()); }
  /// Bytes allocated for the whole run on `rank`, by category.
  const CategoryBytes& persistent(int rank) const;
  /// Bytes live on `rank` at `t_ns` by category, persistent included. A
  /// buffer whose first op starts exactly at t is live; one whose last op
  /// ended exactly at t is freed.
  CategoryBytes LiveAt(int rank, TimeNs t_ns) const;
  /// The most each category held at once on `rank` (the tracker's peak[]).
  CategoryBytes Peak(int rank) const;
  /// The most all categories held together at once on `rank`.
  Bytes PeakTotal(int rank) const;
  /// The transient buffers of `rank` live at `t_ns`, in plan order.
  std::vector<BufferId> TransientLiveAt(int rank, TimeNs t_ns) const;

 private:
  struct Lifetime {
    BufferId buffer = kNoBuffer;
    int rank = 0;
    int category = 0;
    Bytes bytes = 0;
    TimeNs start_ns = 0;
    TimeNs end_ns = 0;
  };
  /// Largest sum over time of `lifetimes` of `rank` picked by `take`, on
  /// top of `base`.
  template <typename Take>
  Bytes PeakOf(int rank, Bytes base, Take take) const;

  std::vector<CategoryBytes> persistent_;  // [rank]
  std::vector<Lifetime> transient_;        // recorded ones, in plan order
};

}  // namespace shardlab::gui
