// The lab scenario "moe" (one expert-parallel MoE layer, moe_scenario.h):
// lab_scenario.cpp resolves and checks the parameters against the spec
// and hands them here; the run is reduced to the named quantities of the
// spec's `measured` table (labs/README.md documents them):
//
//   route (host) ─► router ─► dispatch all-to-all ─► experts ─► combine all-to-all
//        │              └──────── MeasureMoe: per-rank rows, bytes, expert time ───┘
//        ▼
//   dropped choices, capacity C        time_us, dispatch_bytes, straggler_load, ...
#pragma once

#include "engine/lab/lab_scenario.h"

namespace shardlab {

/// Checks a "moe" step without running it (the validator). Throws Error
/// "<param>: message" with the scenario's own message.
void CheckMoeLab(const ScenarioParams& params);

/// Runs the layer on the simulator, checks it against the single-device
/// layer (unless timing-only) and that every rank's all-to-all bytes equal
/// the hand count from the routing; fills every measured quantity.
LabRunResult RunMoeLab(const ScenarioParams& params);

}  // namespace shardlab
