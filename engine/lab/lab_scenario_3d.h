// The lab scenarios "3d" (one DP × PP × TP training step, three_d_scenario.h)
// and "plan" (the 3D planner, planner.h). lab_scenario.cpp resolves and
// checks the parameters against the table (lab_scenario_table.cpp) and
// hands them here, every parameter present, in the table's order.
#pragma once

#include <vector>

#include "engine/lab/lab_scenario.h"
#include "engine/scenarios/three_d_scenario.h"

namespace shardlab {

/// The engine scenario of a "3d" step. Throws Error "<param>: message".
ThreeDScenario ThreeDFromLabParams(const ScenarioParams& params);

/// Checks a "3d" or "plan" step without running it (the validator).
void CheckThreeDLab(const ScenarioParams& params);
void CheckPlanLab(const ScenarioParams& params);

/// Runs the step and fills every measured quantity of the scenario's table.
LabRunResult RunThreeDLab(const ScenarioParams& params);
LabRunResult RunPlanLab(const ScenarioParams& params);

}  // namespace shardlab
