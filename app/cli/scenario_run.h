// `shardlab-cli run NAME` for any registered scenario, from its spec alone:
// the flags are the spec's parameters, the run goes through the registry
// (RunScenario, engine/scenarios/scenario.h) on the simulator, and the
// report is the scenario's Summary. A scenario with a table of its own may
// print it instead (a renderer in its cmd_*.cpp); everything else, and a
// scenario one file adds, comes here.
#pragma once

#include <span>
#include <string>

#include "engine/scenarios/scenario_spec.h"

namespace shardlab::cli {

/// Runs `spec` with the flags in `words`: --json (one object: scenario,
/// params, title, summary, values with units, verdict), --trace FILE and
/// --plan (scenarios that run a plan), --help. Exit 0, 1 when the verdict
/// is WRONG; bad flags are UsageErrors (exit 2).
int RunRegisteredScenario(const ScenarioSpec& spec, std::span<const std::string> words);

}  // namespace shardlab::cli
