// The views a scenario has beyond the machine, the timeline and the
// buffers every run shows, found by the names its spec lists
// (ScenarioSpec::panels, engine/scenarios/):
//
//   spec "zero" ── panels: zero_metrics, zero_memory, zero_legend, zero_summary
//                      │
//                      ▼  PanelOf("zero", slot)
//   kMetrics  the metrics column           DrawZeroMetrics; the column's share of the width
//   kBeside   a panel beside the timeline  DrawZeroMemoryView; its share of the width
//   kLegend   the timeline's key line      F3, B3, opt, RS b1, AG b1 upd
//   kSummary  lines under the settings     what the stage keeps on each GPU
//
// A new scenario's views are one entry each in scenario_panels.cpp and one
// name each in its spec; a scenario that lists none gets the common views
// (a collective, or a test's scenario). tests/gui/scenario_panels_test.cpp
// checks that every name a spec lists has a view here and every view here
// a spec.
#pragma once

#include <string_view>
#include <vector>

#include "app/gui/views/views.h"

namespace shardlab::gui {

enum class PanelSlot { kMetrics, kBeside, kLegend, kSummary };

/// The per-view UI state of the panels that keep one; owned by the App,
/// reached through ViewContext::panel_states.
struct ScenarioPanelStates {
  TpWeightsViewState tp_weights;
  ZeroMemoryViewState zero_memory;
};

struct ScenarioPanel {
  const char* name;   // as the spec lists it: "zero_memory"
  PanelSlot slot;
  /// kBeside: the window's title in the app's language (its ImGui id is
  /// `name`); else null.
  const char* (*title)();
  float share;        // kMetrics: the metrics column's share of the width beside the
                      // buffers; kBeside: this panel's share of the timeline's row; else 0
  /// Draws into the current window. `settings`: the fields being edited
  /// (kSummary); null for the others, which read the session.
  void (*draw)(ViewContext& ctx, const ScenarioSettings* settings);
};

/// Every scenario view, in no particular order.
const std::vector<ScenarioPanel>& ScenarioPanelTable();

/// The view named `name`, or null.
const ScenarioPanel* FindScenarioPanel(std::string_view name);

/// The view in `slot` that the spec named `scenario` lists, or null (no
/// such spec, or none in that slot).
const ScenarioPanel* PanelOf(std::string_view scenario, PanelSlot slot);

// The scenario-specific parts the table points at, defined beside the view
// they belong to (gantt_view.cpp, scenario_panel.cpp).
void DrawPipelineGanttLegend(ViewContext& ctx, const ScenarioSettings* settings);
void DrawTpGanttLegend(ViewContext& ctx, const ScenarioSettings* settings);
void DrawZeroGanttLegend(ViewContext& ctx, const ScenarioSettings* settings);
void DrawThreeDGanttLegend(ViewContext& ctx, const ScenarioSettings* settings);
void DrawMoeGanttLegend(ViewContext& ctx, const ScenarioSettings* settings);
void DrawPipelineSettingsSummary(ViewContext& ctx, const ScenarioSettings* settings);
void DrawTpSettingsSummary(ViewContext& ctx, const ScenarioSettings* settings);
void DrawZeroSettingsSummary(ViewContext& ctx, const ScenarioSettings* settings);
void DrawThreeDSettingsSummary(ViewContext& ctx, const ScenarioSettings* settings);
void DrawMoeSettingsSummary(ViewContext& ctx, const ScenarioSettings* settings);
void DrawServingView(ViewContext& ctx, const ScenarioSettings* settings);  // serving_view.cpp
void DrawInferenceMetrics(ViewContext& ctx);

}  // namespace shardlab::gui
