// The "plan" scenario: the 3D planner (engine/planner/planner.h) ranking
// every DP x PP x TP layout by analytic step time; nothing runs.
// `shardlab-cli plan` and lab files read its spec (plan_scenario.cpp).
#pragma once

#include "engine/planner/planner.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/topology/topology.h"

namespace shardlab {

/// The planner request the "plan" spec's parameters describe on `topology`
/// (the one its topology parameter names, loaded by the caller): ranks 0
/// is every GPU of it; global_batch 0 the model's. The layout to look up
/// (dp, pp, tp) is the caller's; whether ranks fits the topology is the
/// planner's check.
PlannerRequest PlanFromParams(const ScenarioParams& params, const Topology& topology);

/// One of the planner's layouts as a run of the small MLP on its grid: the
/// "3d" scenario's parameters with the layout's dp, pp, tp and ZeRO stage
/// set (IsSet), the others their defaults (the app's "Set up 3d run").
ScenarioParams LayoutRunParams(const ParallelLayout& layout);

}  // namespace shardlab
