// The fault switches (--slow-rank, --throttle-link, --fail-link,
// --fail-rank: engine/scenarios/fault_params.h) of any `run NAME`, checked
// against the prepared run and applied, with errors naming the flag.
#pragma once

#include <string>

#include "app/common/args.h"
#include "engine/plan/plan.h"
#include "engine/run/faults.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/topology/topology.h"

namespace shardlab::cli {

/// The faults the flags of `spec` set, for `plan` on `backend`: throttles
/// applied to `topology` (PrepareRunFaults). Throws UsageError
/// "--fail-rank: step 40 is past the run's last step (27)".
Faults FaultsFromFlags(const ScenarioSpec& spec, const ParsedArgs& args, const std::string& backend,
                       Topology& topology, const Plan& plan);

/// An Error whose message starts "slow_rank: " (or another fault field)
/// as a UsageError naming the flag; any other error unchanged.
Error FaultErrorAsFlagError(const Error& error, const ParsedArgs& args);

}  // namespace shardlab::cli
