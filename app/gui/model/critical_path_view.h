// The critical path as the views show it (the prepare half): which ops of
// the Gantt lie on the chain that sets the run's end, its four parts as
// shares of the run, and what bounds it, in words.
//
//   Gantt:   ops on the path outlined, the rest dimmed
//   Metrics: compute 40% | communication 35% | link wait 5% | idle 20%
//            bounding stage: 3 (pipeline) / slowest hop: GPU3 -> GPU2 (ring)
//
// Built from the store's events (any backend, or a trace opened from a
// file) with the engine's FindCriticalPath; recomputed only when the run
// or its event count changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/i18n/language.h"
#include "app/gui/model/timeline_store.h"
#include "engine/run/critical_path.h"

namespace shardlab::gui {

struct PathPart {
  const char* name = "";       // "compute", "communication", "link wait", "idle"
  TimeNs ns = 0;
  double share = 0;            // of the run's end
};

struct CriticalPathView {
  CriticalPath path;
  std::vector<char> on_path;   // by op id: 1 for ops on the path (a transfer's Send and Recv)
  std::vector<PathPart> parts; // the four parts, in that order
  /// "stage 3 bounds the step (1.20 ms of its ops on the path)" for a
  /// pipeline; "slowest hop GPU3 -> GPU2 (402 µs on the path)" when the
  /// path has transfers; else the busiest rank.
  std::string bound;
  bool OnPath(OpId op) const {
    return op >= 0 && static_cast<std::size_t>(op) < on_path.size() && on_path[static_cast<std::size_t>(op)] != 0;
  }
  bool empty() const { return path.steps.empty(); }
};

/// The critical path of the store's events. `topology` (may be null)
/// splits a transfer into communication and link wait; `faults` (may be
/// null) makes a straggler's slowness expected; `pipeline` names the
/// bounding rank a stage.
CriticalPathView PrepareCriticalPath(const Plan& plan, const TimelineStore& store, const Topology* topology,
                                     const Faults* faults, bool pipeline);

/// Keeps one CriticalPathView per run and event count.
class CriticalPathCache {
 public:
  /// Recomputes when `run_id` or the store's event count changed since
  /// the last call; returns null while `complete` is false (a path of a
  /// run still recording would name the wrong end).
  const CriticalPathView* Get(std::uint64_t run_id, bool complete, const Plan* plan, const TimelineStore& store,
                              const Topology* topology, const Faults* faults, bool pipeline);

 private:
  std::uint64_t run_id_ = 0;
  std::size_t events_ = 0;
  bool valid_ = false;
  Language language_ = Language::kEnglish;
  CriticalPathView view_;
};

}  // namespace shardlab::gui
