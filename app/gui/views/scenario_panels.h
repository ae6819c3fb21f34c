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
//   kHowToRead  "How to read this"         what each panel shows for this scenario
//
// A parameter that needs a widget of its own (a combo with a tooltip per
// choice, a check box that depends on another field) is found the same way:
// its spec lists the widget's name, and ScenarioFieldWidgetTable says which
// parameter it draws ("zero_stage_field" draws zero_stage); every other
// parameter is drawn from its type, range, unit and help.
//
// A new scenario's views are one entry each in scenario_panels.cpp and one
// name each in its spec; a scenario that lists none gets the common views
// (a collective, or a test's scenario). tests/gui/scenario_panels_test.cpp
// checks that every name a spec lists has a view here and every view here
// a spec.
#pragma once

#include <string_view>
#include <vector>

#include "app/gui/model/scenario_fields.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/views.h"

namespace shardlab::gui {

enum class PanelSlot { kMetrics, kBeside, kLegend, kSummary, kHowToRead };

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
  /// (kSummary, kHowToRead); null for the others, which read the session.
  void (*draw)(ViewContext& ctx, const ScenarioSettings* settings);
};

/// Every scenario view, in no particular order.
const std::vector<ScenarioPanel>& ScenarioPanelTable();

/// The view named `name`, or null.
const ScenarioPanel* FindScenarioPanel(std::string_view name);

/// The view in `slot` that the spec named `scenario` lists, or null (no
/// such spec, or none in that slot).
const ScenarioPanel* PanelOf(std::string_view scenario, PanelSlot slot);

/// A parameter's own widget in the scenario panel, in place of the one
/// its type gives (scenario_panel.cpp).
struct ScenarioFieldWidget {
  const char* name;   // as the spec lists it: "zero_stage_field"
  const char* param;  // the parameter it edits: "zero_stage"
  /// Draws the field (its label too) and writes what is chosen into state.edit.
  void (*draw)(ViewContext& ctx, ScenarioPanelState& state, const PanelField& field);
};

/// Every parameter widget of its own, in no particular order.
const std::vector<ScenarioFieldWidget>& ScenarioFieldWidgetTable();

/// The widget named `name`, or null.
const ScenarioFieldWidget* FindScenarioFieldWidget(std::string_view name);

/// The widget the spec named `scenario` lists for its parameter `param`,
/// or null (drawn from its type).
const ScenarioFieldWidget* FieldWidgetOf(std::string_view scenario, std::string_view param);

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
void DrawPipelineHowToRead(ViewContext& ctx, const ScenarioSettings* settings);
void DrawTpHowToRead(ViewContext& ctx, const ScenarioSettings* settings);
void DrawZeroHowToRead(ViewContext& ctx, const ScenarioSettings* settings);
void DrawThreeDHowToRead(ViewContext& ctx, const ScenarioSettings* settings);
void DrawMoeHowToRead(ViewContext& ctx, const ScenarioSettings* settings);
void DrawAlgoField(ViewContext& ctx, ScenarioPanelState& state, const PanelField& field);
void DrawSizeField(ViewContext& ctx, ScenarioPanelState& state, const PanelField& field);
void DrawRingOrderField(ViewContext& ctx, ScenarioPanelState& state, const PanelField& field);
void DrawScheduleField(ViewContext& ctx, ScenarioPanelState& state, const PanelField& field);
void DrawTpLayerField(ViewContext& ctx, ScenarioPanelState& state, const PanelField& field);
void DrawSequenceParallelField(ViewContext& ctx, ScenarioPanelState& state, const PanelField& field);
void DrawZeroStageField(ViewContext& ctx, ScenarioPanelState& state, const PanelField& field);
void DrawZeroKField(ViewContext& ctx, ScenarioPanelState& state, const PanelField& field);
void DrawServingView(ViewContext& ctx, const ScenarioSettings* settings);  // serving_view.cpp
void DrawInferenceMetrics(ViewContext& ctx);

}  // namespace shardlab::gui
