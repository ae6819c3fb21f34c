// The "memory" scenario: ZeRO's model-state bytes per GPU from the formulas
// (zero_memory.h); nothing runs. `shardlab-cli memory` and lab files read
// its spec (registered in memory_scenario.cpp).
#pragma once

#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

struct MemoryScenario {
  double parameters = 7.5e9;  // Ψ
  int ranks = 64;             // N, data-parallel GPUs
  int stage = 0;              // ZeRO stage 0 .. 3
  int k_bytes = 12;           // optimizer bytes per parameter
};

/// The scenario the "memory" spec's parameters describe.
MemoryScenario MemoryFromParams(const ScenarioParams& params);

}  // namespace shardlab
