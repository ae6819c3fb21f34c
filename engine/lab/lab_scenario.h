// Lab scenarios: a scenario name and a table of parameters, as a lab file
// writes them, mapped onto the engine's scenarios, run on the simulator,
// and reduced to named measured quantities that formulas and questions use.
//
//   "collective" ─► CollectiveScenario (collective_scenario.h)
//   "pipeline"   ─► PipelineScenario   (pipeline_scenario.h)     sim backend,
//   "tp"         ─► TpScenario         (tp_scenario.h)        ─► Executor ─► LabValues
//   "zero"       ─► ZeroScenario       (zero_scenario.h)         {time_ms, busbw_gbps, ...}
//   "memory"     ─► ZeroMemoryPerGpu   (zero_memory.h; formulas, nothing runs)
//   "3d"         ─► ThreeDScenario     (three_d_scenario.h; lab_scenario_3d.h)
//   "plan"       ─► PlanParallelLayouts (planner.h; analytic, nothing runs)
//   "moe"        ─► MoeScenario        (moe_scenario.h; lab_scenario_moe.h)
//
// Each scenario's parameters (name, type, default, range) and measured
// quantities (name, units, meaning) come from its spec in engine/scenarios/
// (scenario_spec.h): LabScenarios() is the registry seen by labs, so the
// validator, the app's lab panel, the `lab` CLI, `shardlab-cli run` and
// labs/README.md all read the same names and defaults. A lab file may use a
// parameter's old spelling ("stage" for zero_stage); the loader stores the
// new name, and formulas may read either. Runs always use the simulator
// backend, so a lab grades the same on every machine.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "engine/lab/formula.h"
#include "engine/lab/lab.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab {

/// Named numbers: a step's parameters (numbers, sizes in bytes, booleans as
/// 0/1) and its measurements. The same map feeds formulas.
using LabValues = FormulaVariables;

enum class LabParamKind {
  kInteger,   // a whole number: ranks, stages
  kNumber,    // any number
  kSize,      // bytes, written as a string "64M" or a number; formulas see bytes
  kCount,     // a parameter count, "7.5B" or a number; formulas see the count
  kChoice,    // one of `choices`; formulas do not see it
  kText,      // free text (a topology name or file); formulas do not see it
  kBool,      // true / false; formulas see 1 / 0
  kTopology,  // a topology preset name (lab files cannot name files: a lab runs the
              // same everywhere); formulas do not see it
};

/// A spec's parameter as labs see it (ParamSpec, whose `spec` it keeps).
struct LabParamSpec {
  std::string name;
  LabParamKind kind = LabParamKind::kInteger;
  std::string default_text;           // as a lab file would write it
  std::vector<std::string> choices;   // kChoice
  std::string help;
  const ParamSpec* spec = nullptr;    // the scenario spec's parameter (range, unit, old names)
};

struct LabQuantitySpec {
  std::string name;   // "busbw_gbps"
  std::string units;  // "GB/s"
  std::string help;
};

struct LabScenarioSpec {
  std::string name;
  std::string help;
  std::vector<LabParamSpec> params;     // those a lab file may set (ParamSpec::lab)
  std::vector<LabQuantitySpec> measured;
  const ScenarioSpec* spec = nullptr;   // the registry's spec

  /// The parameter named `param`, or once spelled so (old_names), or nullptr.
  const LabParamSpec* FindParam(const std::string& param) const;
  const LabQuantitySpec* FindQuantity(const std::string& quantity) const;
};

/// Every lab scenario: the built-in ones the lab runner measures, in the
/// order labs/README.md documents them (collective, pipeline, tp, zero,
/// memory, 3d, plan, moe), then every other registered scenario that can measure
/// itself (ScenarioSpec::measure: a test's). A scenario registered later
/// appears on the next call; a deque, so pointers stay valid.
const std::deque<LabScenarioSpec>& LabScenarios();

/// The scenario named `name`, or nullptr.
const LabScenarioSpec* FindLabScenario(const std::string& name);

/// "collective, pipeline, tp, zero, memory" for messages.
std::string LabScenarioNames();

/// A parameter's default as a lab file would write it (a number for
/// integers and plain-number sizes, a string for "64M" or "dgx-a100").
LabParam LabParamDefault(const LabParamSpec& spec);

/// Checks one parameter against its spec; throws Error(kInvalidInput)
/// "<message>" (no field: the caller knows it) on a wrong type, an unknown
/// choice, a size that does not parse, a value out of the spec's range.
void CheckLabParam(const LabParamSpec& spec, const LabParam& param);

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

/// Host memory a collective run with data may use; above it a lab must set
/// timing_only = true (the CLI's --verify-max plays this part for `run`).
inline constexpr double kLabMaxRealCollectiveBytes = 512.0 * 1024 * 1024;

/// The engine scenario a lab step sets, for a front end that runs it itself
/// (the app's scenario panel and timeline): exactly one member is set, or
/// none for "memory" (nothing runs). Backend "sim"; throws as CheckLabParam.
struct LabEngineScenario {
  std::optional<CollectiveScenario> collective;
  std::optional<PipelineScenario> pipeline;
  std::optional<TpScenario> tp;
  std::optional<ZeroScenario> zero;
};
LabEngineScenario ToEngineScenario(const std::string& scenario, const std::vector<LabParam>& params);

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
