// The planner panel's model: the panel's fields (model preset, GPUs,
// topology, GPU memory) as a PlannerRequest, and the engine's result as
// table rows (feasible layouts fastest first) and rejected counts by
// reason. No ImGui: the panel draws these, the tests compare them with
// PlanParallelLayouts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/planner/planner.h"

namespace shardlab::gui {

struct PlannerSettings {
  std::string model = "gpt3-13b";     // a model preset (model_presets.h)
  int gpus = 64;                      // the topology's first N GPUs
  std::string topology = "8x-dgx-a100-ib";
  std::string gpu_memory = "";        // ParseSize syntax; "": the GPU's own
  int top = 20;                       // feasible rows shown
  bool operator==(const PlannerSettings&) const = default;
};

struct PlannerRow {
  int rank = 0;                       // 1: fastest
  ParallelLayout layout;
  double step_s = 0, mfu = 0;
  double memory_bytes = 0;            // per GPU, the busiest stage
  /// Small enough for the app's 3d scenario (the real MLP, not this model):
  /// dp·pp·tp GPUs on one box and ZeRO 0 or 1.
  bool fits_app_3d = false;
};

struct PlannerTable {
  std::string error;                  // one sentence naming the field, or ""
  std::string header;                 // "gpt3-13b on 64 GPUs of 8x-dgx-a100-ib: A100 ..."
  int feasible_count = 0;
  std::vector<PlannerRow> rows;       // the top `top` feasible layouts
  std::vector<std::pair<std::string, int>> rejected;  // reason, count; in RejectReason order
};

/// Plans (PlanParallelLayouts) and tabulates; every bad field becomes
/// `error` ("gpus: ...", "model: ...", "gpu-memory: ...", "topology: ...").
PlannerTable RunPlanner(const PlannerSettings& settings);

}  // namespace shardlab::gui
