// The lab panel: a guided lab beside the views.
//
//   ┌ Lab: Ring all-reduce, step by step ─────────┐
//   │ Step 2 of 5 · score 3 / 7   [< Back][Next >] │
//   │ ▓▓▓▓▓▓░░░░░░░░ 1 of 5 steps done [Labs][×]   │
//   │ ── step title ──                             │
//   │ paragraphs, preformatted lines boxed         │
//   │ Run: ring all-reduce ... [Show the run] ...  │
//   │ Locked: topology, ranks                      │
//   │ Q1 prompt                                    │
//   │ [ 14      ] steps  [Check my answer] [Hint]  │
//   │ ✓ Correct: 14 (expected 14).                 │
//   └──────────────────────────────────────────────┘
//
// Or, when no lab is open (or "Labs" was pressed), the chooser: every lab
// under the labs folder with its title, minutes, prerequisites and the
// student's progress. The logic is LabPanelModel's (tested without a
// window); this file only draws it and passes clicks on.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/gui/model/lab_panel_model.h"
#include "app/gui/views/views.h"

namespace shardlab::gui {

struct LabPanelState {
  std::unique_ptr<LabPanelModel> model;
  bool show_chooser = false;              // the chooser instead of the open lab
  bool rows_stale = true;                 // re-read the labs folder next frame
  std::vector<LabListEntry> rows;
  std::string chooser_error;              // a lab that failed to open from the chooser
  int step_shown = -1;                    // the step the boxes below belong to
  std::map<std::string, std::string> typed;  // answer boxes, by question id
  std::set<std::string> hints;            // questions whose hint is shown
  std::set<std::string> answers_shown;    // questions whose answer the student asked for
};

enum class LabPanelAction { kNone, kClose };

/// Draws the panel into the current window. Run requests go through the
/// model (LabPanelModel::TakeRunRequest), which the App polls.
LabPanelAction DrawLabPanel(ViewContext& ctx, LabPanelState& state);

}  // namespace shardlab::gui
