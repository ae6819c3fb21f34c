// A lab step's scenario, as the app's scenario panel and session run it.
//
//   LabStep {scenario "collective", params {kind, algo, ranks, size, ...}}
//      └─ LabScenarioParams (the spec's checks and defaults)
//         └─ ApplyParams (scenario_fields.h) ─► ScenarioSettings {scenario "allreduce", ...}
//
// Lab parameters take the scenario spec's defaults where the step leaves
// them out, as the grader does, so the views show the very run it
// measures; every parameter reaches the settings (dtype f16 included).
//
// Locks: a parameter the step locks keeps the step's value in the scenario
// panel; RestoreLockedFields puts it back after an edit. When a step locks
// anything, its scenario kind is locked too (a lock on `ranks` means
// nothing once the student switches to another scenario).
#pragma once

#include <string>
#include <vector>

#include "app/gui/model/session.h"
#include "engine/lab/lab.h"

namespace shardlab::gui {

struct LabSettings {
  ScenarioSettings settings;
  /// The step runs in the app ("memory" only computes formulas: false).
  bool runs_in_app = false;
  /// What the app's run differs in from the lab's ("dtype = f16: the views
  /// run f32"); empty when it is the same run.
  std::vector<std::string> notes;
};

/// The step's scenario with `params` (the step's, or a variant's merged
/// ones: MergeLabParams) on top of `base`, whose backend and fields of
/// other scenarios stay as they are. Throws Error(kInvalidInput) "<param>:
/// <message>" for a value the lab scenario table rejects.
LabSettings LabStepSettings(const std::string& scenario, const std::vector<LabParam>& params,
                            const ScenarioSettings& base);

/// Copies every field the step locks (and the scenario kind, when it locks
/// any) from `step_settings` into `edit`. Returns the lab parameter names
/// that had changed, in the step's `locked` order ("scenario" first when
/// the kind had changed); empty when nothing was touched.
std::vector<std::string> RestoreLockedFields(const std::string& scenario,
                                             const std::vector<std::string>& locked,
                                             const ScenarioSettings& step_settings,
                                             ScenarioSettings* edit);

}  // namespace shardlab::gui
