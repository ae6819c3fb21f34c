// Scenario parameters as shardlab-cli flags. `run NAME` takes each
// parameter of the scenario's spec (engine/scenarios/scenario_spec.h) as a
// flag: its name with '-' for '_' (timing_only -> --timing-only), its short
// flag, and a help line that ends with the spec's default, unit and range,
// "(default: 4; GPUs; 1 .. 4096)". A bool that defaults to false is a
// switch (--timing-only); one that defaults to true is --no-NAME
// (--no-overlap). Old spellings (old_names) keep working with a notice.
//
//   ScenarioSpec ──AddScenarioFlags──► CommandSpec.flags ──ParseArgs──► ParsedArgs
//                                                                        │ ParamsFromArgs
//   PipelineFromParams(params) ◄── ScenarioParams (checked: "--stages: must be at least 1")
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "app/common/args.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab::cli {

/// The flag one parameter becomes.
FlagSpec FlagFromParam(const ParamSpec& param);

/// The flag's long name for a parameter ("timing-only", "no-overlap").
std::string FlagNameOf(const ParamSpec& param);

/// Adds a flag for every parameter of `spec` the CLI takes (ParamSpec::cli),
/// in the spec's order, leaving out those named in `skip`.
void AddScenarioFlags(std::vector<FlagSpec>& flags, const ScenarioSpec& spec,
                      std::initializer_list<std::string_view> skip = {});

/// The parameters the flags gave (the rest at their defaults), each checked
/// against the spec. Throws UsageError "--stages: must be at least 1 (got
/// 0)", naming the flag as the user typed it.
ScenarioParams ParamsFromArgs(const ScenarioSpec& spec, const ParsedArgs& args);

/// What a trace records of the run's settings (otherData.plan_settings,
/// engine/compare/model_trace.h): "NAME key=value ..." with every parameter
/// the flags set (`params`), for `compare TRACE --model`.
std::string PlanSettingsText(const ScenarioParams& params);

/// The registered scenario `name`; throws Error for a name no file
/// registers (a programming error).
const ScenarioSpec& ScenarioSpecOf(std::string_view name);

/// The lines of `run --help` that list every registered scenario, one per
/// line: "  pipeline    pipeline-parallel training ... (run pipeline)".
std::string ScenarioListText();

/// `run NAME` for a registered scenario that measures itself (a scenario
/// added by one file, with ScenarioSpec::measure): flags from its spec,
/// its measured quantities printed one per line. Returns the exit code.

}  // namespace shardlab::cli
