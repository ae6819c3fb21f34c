// Lab scenarios: a scenario name and a table of parameters, as a lab file
// writes them, mapped onto the scenario's spec in the registry
// (engine/scenarios/), run on the simulator through the registry's one path
// (RunScenario, scenario.h), and reduced to the spec's named quantities that
// formulas and questions use:
//
//   lab step {scenario = "pipeline", stages = 4, ...}
//        │ LabScenarioParams: each value checked against the spec
//        ▼
//   ScenarioParams ──spec.check──► CheckLabScenario (the validator)
//        │        ──ScenarioParamValues──► LabParamValues (formula variables)
//        │ RunScenario (sim backend)
//        ▼
//   Summary {time_ms, bubble_fraction, ...} ──► LabValues
//
// Each scenario's parameters (name, type, default, range) and measured
// quantities (name, units, meaning) come from its spec (scenario_spec.h):
// LabScenarios() is the registry seen by labs, so the validator, the app's
// lab panel, the `lab` CLI, `shardlab-cli run` and labs/README.md all read
// the same names and defaults. A lab file may use a parameter's old
// spelling ("stage" for zero_stage); the loader stores the new name, and
// formulas may read either. Runs always use the simulator backend, so a lab
// grades the same on every machine.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "engine/lab/formula.h"
#include "engine/lab/lab.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

/// Named numbers: a step's parameters (numbers, sizes in bytes, booleans as
/// 0/1) and its measurements. The same map feeds formulas.
using LabValues = FormulaVariables;

/// Every scenario a lab can run: each registered scenario with a plan
/// (prepare and summarize) or a measure of its own, in the registry's order
/// (a scenario a test registers appears on the next call). Labs use the
/// specs' own types: a lab file sets a ParamSpec whose `lab` is true (a
/// kTopology one by preset name only: a lab runs the same everywhere), and
/// formulas read its QuantitySpecs.
std::vector<const ScenarioSpec*> LabScenarios();

/// The scenario named `name` if a lab can run it, or nullptr.
const ScenarioSpec* FindLabScenario(const std::string& name);

/// The parameter a lab file may set under `name` (or an old spelling of
/// it), or nullptr.
const ParamSpec* LabSettableParam(const ScenarioSpec& spec, const std::string& name);

/// "collective, dp-train, ..." for messages.
std::string LabScenarioNames();

/// A parameter's default as a lab file would write it (a number for
/// integers and plain-number sizes, a string for "64M" or "dgx-a100").
LabParam LabParamDefault(const ParamSpec& spec);

/// Checks one parameter against its spec; throws Error(kInvalidInput)
/// "<message>" (no field: the caller knows it) on a wrong type, an unknown
/// choice, a size that does not parse, a value out of the spec's range.
void CheckLabParam(const ParamSpec& spec, const LabParam& param);

/// A lab value as the text ScenarioParams reads ("4", "16M", "true").
std::string LabParamSpecText(const LabParam& param);

/// The step's parameters (checked as CheckLabParam, names old or new) as
/// the scenario's ScenarioParams, defaults for the rest: what the
/// scenarios' XxxFromParams read. Throws "<param>: message".
ScenarioParams LabScenarioParams(const std::string& scenario, const std::vector<LabParam>& params);

/// Checks the whole parameter set as the engine would (ranks fit the
/// topology, the pipeline's shape, ...) without running anything. Throws
/// Error(kInvalidInput) "<param>: <message>" with the engine's message.
void CheckLabScenario(const std::string& scenario, const std::vector<LabParam>& params);

/// The parameters as formula variables: every parameter of the scenario
/// that formulas see, defaults included (sizes in bytes, counts as counts,
/// booleans 0/1). Throws as CheckLabParam.
LabValues LabParamValues(const std::string& scenario, const std::vector<LabParam>& params);

/// What one run measured: every quantity of the scenario's table, and a
/// line or two of text for the panel and the CLI ("ring all-reduce of 64 MiB
/// on 8 ranks (dgx-a100): 0.71 ms, busbw 165 GB/s").
struct LabRunResult {
  LabValues measured;
  std::string summary;
};

/// Runs `scenario` with `params` on the simulator (blocking; a lab keeps
/// its runs small or timing-only, so this takes well under a second).
/// Throws Error(kInvalidInput) for bad parameters, Error(kRuntime) for a
/// run whose result fails its check against the reference.
LabRunResult RunLabScenario(const std::string& scenario, const std::vector<LabParam>& params);

/// Everything a step's formulas and questions can read once it has run:
/// its parameters, its measurements, and each variant's parameters and
/// measurements as "<variant>.<name>".
struct LabStepValues {
  LabValues values;
  std::vector<std::string> summaries;  // the main run's, then each variant's
  bool ran = false;
};

/// Runs the step's scenario and its variants (a text-only step runs
/// nothing and gives no values).
LabStepValues RunLabStep(const LabStep& step);

/// The names a step's formulas may read (parameters, measured quantities,
/// and both prefixed by each variant's id), without running: what the
/// validator checks formulas against. Empty for a text-only step.
std::vector<std::string> LabStepValueNames(const LabStep& step);

}  // namespace shardlab
