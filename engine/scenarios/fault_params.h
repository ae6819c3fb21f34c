// Stragglers and failures as scenario parameters (engine/run/faults.h has
// what each means): the same four switches in the CLI (--slow-rank ...),
// the app and lab files (slow_rank = "3:2"), each a comma-separated list
// or "none".
//
//   slow_rank = "3:2"            throttle_link = "gpu2-gpu3:10"
//   fail_rank = "5@4"            fail_link     = "1-2@3,4-5@0"
#pragma once

#include <string>
#include <vector>

#include "engine/run/faults.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

/// slow_rank, throttle_link, fail_link, fail_rank: text, default "none".
std::vector<ParamSpec> FaultParams();

/// The faults the parameters name (a scenario without them: none). Throws
/// Error(kInvalidInput) "slow_rank: ..." for a value that does not parse;
/// ranks, links and steps are checked later against the run
/// (ResolveFaults, CheckFaultSteps).
Faults FaultsFromParams(const ScenarioParams& params);

/// The faults of a prepared run of any scenario, checked and applied:
/// parsed from `params`, links resolved against `topology` (throttles
/// applied to it: the simulator and the formulas see the slower link),
/// ranks checked against the plan's, steps against its last step, and
/// what `backend` cannot apply refused (FaultRefusal). Throws
/// Error(kInvalidInput) "slow_rank: ..." naming the field.
Faults PrepareRunFaults(const ScenarioParams& params, const std::string& backend,
                        Topology& topology, const Plan& plan);

/// PrepareRunFaults without a backend's refusal: what Prepare does, so that
/// the plan and the machine are the same whatever runs them (RunScenario
/// asks the backend with FaultRefusal before it runs).
Faults ResolveRunFaults(const ScenarioParams& params, Topology& topology, const Plan& plan);

}  // namespace shardlab
