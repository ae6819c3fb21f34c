#include "app/gui/model/planner_table.h"

#include <exception>

#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/model/model_presets.h"
#include "engine/scenarios/collective_scenario.h"

namespace shardlab::gui {

PlannerTable RunPlanner(const PlannerSettings& settings) {
  PlannerTable table;
  try {
    Topology topology;
    try {
      topology = LoadScenarioTopology(settings.topology);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      throw Error(what.rfind("topology: ", 0) == 0 ? what : "topology: " + what, ErrorKind::kInvalidInput);
    }
    PlannerRequest request;
    try {
      request.model = FindModelPreset(settings.model);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      throw Error(what.rfind("model: ", 0) == 0 ? what : "model: " + what, ErrorKind::kInvalidInput);
    }
    request.gpus = settings.gpus;
    if (!settings.gpu_memory.empty()) request.gpu_memory_bytes = ParseSize(settings.gpu_memory, "gpu-memory");
    const PlannerResult result = PlanParallelLayouts(request, topology);
    table.header = request.model.name + " on " + std::to_string(request.gpus) + " GPUs of " + topology.name +
                   ": " + result.gpu_model + ", " + FormatBytes(static_cast<Bytes>(result.usable_memory_bytes)) +
                   " usable per GPU; step times from the " + result.time_model + " model";
    table.feasible_count = static_cast<int>(result.feasible.size());
    const int gpus_per_box = result.gpus_per_host > 0 ? result.gpus_per_host : topology.num_gpus();
    for (std::size_t i = 0; i < result.feasible.size() && static_cast<int>(i) < settings.top; ++i) {
      const PlanCandidate& c = result.feasible[i];
      PlannerRow row;
      row.rank = static_cast<int>(i) + 1;
      row.layout = c.layout;
      row.step_s = c.time.step_ns / 1e9;
      row.mfu = c.time.mfu;
      row.memory_bytes = c.memory.total();
      row.fits_app_3d = c.layout.dp * c.layout.pp * c.layout.tp <= gpus_per_box && c.layout.zero_stage <= 1;
      table.rows.push_back(row);
    }
    for (RejectReason reason : {RejectReason::kTpSplitsHeads, RejectReason::kPpSplitsLayers,
                                RejectReason::kTpCrossesNode, RejectReason::kBatchNotDivisible,
                                RejectReason::kInterleaveInvalid, RejectReason::kOutOfMemory}) {
      int count = 0;
      for (const PlanCandidate& c : result.rejected) count += c.reason == reason ? 1 : 0;
      if (count > 0) table.rejected.emplace_back(RejectReasonName(reason), count);
    }
  } catch (const std::exception& e) {
    table = PlannerTable{};
    table.error = e.what();
  }
  return table;
}

}  // namespace shardlab::gui
