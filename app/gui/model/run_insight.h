// RunInsight: what the "why is it slow?" views share for the run shown:
// its critical path, which links each transfer crossed, and the selection
// (an op or a link) that links the Gantt, the topology view, the buffer
// view and the details panel. Owned by the App, refreshed each frame;
// recomputes only when the run or its events change.
#pragma once

#include <cstdint>
#include <memory>

#include "app/gui/i18n/language.h"
#include "app/gui/model/comm_pattern.h"
#include "app/gui/model/critical_path_view.h"
#include "app/gui/model/op_selection.h"
#include "app/gui/model/session.h"

namespace shardlab::gui {

class RunInsight {
 public:
  /// Once per frame: drops a selection of a previous run, rebuilds the
  /// link usage, path and pattern when the run's events changed.
  void Refresh(const Session& session);

  /// The path of the run shown once it is recorded, else null.
  const CriticalPathView* critical() const { return critical_; }
  /// Which links each transfer crossed, once the run is recorded; else null.
  const LinkUsage* usage() const { return usage_.get(); }
  /// The run's communication pattern on the machine (comm_pattern.h).
  const CommPattern& pattern() const { return pattern_; }

  const OpSelection& selection() const { return selection_; }
  /// Selects an op (a Send selects its transfer's Recv); kNoOp clears.
  void SelectOp(OpId op);
  void SelectLink(int link);
  void Clear() { selection_.Clear(); details_ = OpDetails{}; }
  /// The selected op's details (op == kNoOp when none or no usage yet).
  const OpDetails& details() const { return details_; }

  bool show_critical_path = false;  // the Gantt outlines the path
  bool show_pattern = false;        // the topology view draws the pattern

 private:
  void Describe();

  const Session* session_ = nullptr;
  std::uint64_t run_id_ = 0;
  std::size_t events_ = 0;
  bool complete_ = false;
  Language language_ = Language::kEnglish;
  CriticalPathCache path_cache_;
  const CriticalPathView* critical_ = nullptr;
  std::unique_ptr<LinkUsage> usage_;
  CommPattern pattern_;
  OpSelection selection_;
  OpDetails details_;
};

}  // namespace shardlab::gui
