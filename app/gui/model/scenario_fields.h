// Scenario fields: the app's scenario settings read from the scenario specs
// (engine/scenarios/scenario_spec.h), so a default, a range, a unit or a
// help line is written once, in the scenario's own file.
//
//   ScenarioSpec "tp" ── params: layer, tp, batch, seq, ... ──┐
//                                                             ▼
//   settings.params["tp.batch"] = "4"           ScenarioSettings()   defaults
//   (absent: the spec's default "2")            ParamsOf(settings)   ─► XxxFromParams
//   settings.topology, settings.scenario        PanelFields(...)     ─► the panel
//   (every spec's topology; the collective's    ScenarioChoices()    ─► the list
//    kind)
//
// Every scenario, a built-in or one a test registers, has settings, panel
// fields and a place in the list the same way. The app runs the scenarios
// with a plan or a finished run to show (RunsInApp); the others are listed,
// filled in and checked against their spec only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/gui/model/session.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab::gui {

/// The spec the app's scenario name runs: "collective" for a collective
/// kind ("allreduce", ...), else the scenario of that name; nullptr when
/// no spec has it.
const ScenarioSpec* SpecOf(std::string_view app_scenario);

/// The spec's parameter that names the collective ("kind"): the app's
/// scenario name is its value.
inline constexpr const char* kCollectiveSpec = "collective";
inline constexpr const char* kCollectiveKindParam = "kind";

/// True when the settings' scenario is a collective kind (or a name no
/// spec has, which the collective spec's kind refuses).
bool IsCollectiveScenario(const ScenarioSettings& settings);

/// `param` of `spec` as text in `settings` ("4", "true", "64M").
std::string ParamText(const ScenarioSettings& settings, const ScenarioSpec& spec, const ParamSpec& param);
/// Sets it; no check here (ParamsOf and Session::Check say what is wrong).
void SetParamText(ScenarioSettings* settings, const ScenarioSpec& spec, const ParamSpec& param,
                  const std::string& text);

/// Every parameter of `spec` to its spec default (the topology too, and
/// the app's scenario name when it is a collective kind: the spec's
/// default kind).
void ApplySpecDefaults(const ScenarioSpec& spec, ScenarioSettings* settings);

/// Fresh settings for the app's scenario `app_scenario`: every spec's
/// defaults, the topology that scenario's.
ScenarioSettings DefaultSettings(const std::string& app_scenario);

/// The settings as their spec's parameters, each checked against it.
/// Throws Error "NAME: message" (the spec's name of the parameter) for a
/// bad value, "scenario: ..." for a scenario no spec has.
ScenarioParams ParamsOf(const ScenarioSettings& settings);

/// Sets every parameter of `params` into `settings` (and the scenario).
void ApplyParams(const ScenarioParams& params, ScenarioSettings* settings);

/// The app's scenario name of `params` ("allreduce" for a collective).
std::string AppScenarioOf(const ScenarioParams& params);

/// True for the scenarios Session::Start runs: every one with a plan, and
/// those that measure themselves which the app shows as a finished run; a
/// scenario that only computes (memory, plan) is listed but not run.
bool RunsInApp(std::string_view spec_name);

/// One entry of the panel's scenario list: the collectives' kinds, then
/// every other registered scenario, in the registry's order.
struct ScenarioChoice {
  std::string name;     // the app's scenario name: "allreduce", "pipeline", "tp"
  std::string title;    // "ring all-reduce"-style for kinds, else the spec's title
  std::string summary;  // the spec's summary (tooltip)
  bool runs_in_app = true;
  bool separator_before = false;  // the first scenario after the kinds
};
std::vector<ScenarioChoice> ScenarioChoices();

/// How the panel shows one parameter.
enum class FieldWidget { kSlider, kInteger, kNumber, kText, kChoice, kCheckbox };

/// One parameter of the settings' scenario as the panel draws it: the
/// spec's range, unit and help, and where the machine bounds a count of
/// GPUs, that bound.
struct PanelField {
  std::string name;          // the spec's parameter name
  std::string label;         // "Microbatches", "Top k"
  FieldWidget widget = FieldWidget::kText;
  std::string value;         // the current text
  double min = 0;            // kSlider, kInteger, kNumber: what the field allows (0 for a
                             // parameter's auto word, "all")
  double max = 0;
  std::string unit;          // the spec's unit ("GPUs"; "" for none)
  std::string format;        // a slider's "%d GPUs"
  std::vector<std::string> choices;
  std::string help;          // the spec's help, then its default, range and unit
  std::string default_text;  // the spec's default
  std::string zero_text;     // what 0 means, when the help says ("0: every GPU of the topology"),
                             // or the spec's word for it ("all: ..."), which the field keeps as 0
};

/// Sliders for ranges this small, typed numbers above.
inline constexpr double kMaxSliderSpan = 64;

/// The panel's fields for `settings`' scenario, in the spec's order,
/// without topology and timing_only (the panel draws those for every
/// scenario) and without the ones `settings` makes meaningless (chunks
/// outside the interleaved schedule, heads of a layer without attention). A count of
/// GPUs (unit "GPUs") is bounded by `topology_gpus` when that is known
/// (> 1 and small enough for a slider).
std::vector<PanelField> PanelFields(const ScenarioSettings& settings, int topology_gpus);

/// The message of a bad parameter with its flag instead of its name:
/// "stages: ..." -> "--stages: ..."; unchanged when it names none of the
/// settings' spec's parameters (old names included).
std::string AsFlagMessage(const ScenarioSettings& settings, const std::string& message);

}  // namespace shardlab::gui
