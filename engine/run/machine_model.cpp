#include "engine/run/machine_model.h"

#include "engine/core/backend_traits.h"
#include "engine/core/error.h"

namespace shardlab {

void CheckPlacement(const std::vector<int>& rank_to_gpu, int ranks, int gpus) {
  if (static_cast<int>(rank_to_gpu.size()) != ranks) {
    throw Error("placement: " + std::to_string(rank_to_gpu.size()) + " entries (one GPU per rank) for a plan of " +
                    std::to_string(ranks) + " ranks",
                ErrorKind::kInvalidInput);
  }
  for (int r = 0; r < ranks; ++r) {
    const int g = rank_to_gpu[static_cast<std::size_t>(r)];
    if (g < 0 || g >= gpus) {
      throw Error("placement: rank " + std::to_string(r) + " on GPU " + std::to_string(g) +
                      ", not one of the machine's GPUs 0.." + std::to_string(gpus - 1),
                  ErrorKind::kInvalidInput);
    }
  }
}

MachineModel BuildMachineModel(MachineRecord record, int ranks, std::optional<DetectedMachine> detected) {
  if (ranks <= 0) ranks = record.rank_to_gpu.empty() ? record.gpus : static_cast<int>(record.rank_to_gpu.size());
  MachineModel out;
  out.record = std::move(record);
  out.detected = std::move(detected);
  if (out.record.rank_to_gpu.empty()) {
    out.record.rank_to_gpu = VirtualPlacement(ranks, out.record.gpus);
  } else {
    CheckPlacement(out.record.rank_to_gpu, ranks, out.record.gpus);
  }
  out.machine = BuildMachineTopology(out.record, out.detected ? &*out.detected : nullptr);
  out.plan_topology = SharesAGpu(out.record.rank_to_gpu) ? VirtualDeviceTopology(out.record, ranks) : out.machine;
  return out;
}

void ApplyMachineModel(const MachineRecord& record, RunOptions* options) {
  options->rank_to_gpu = record.rank_to_gpu;
  options->shared_device_memory = true;
  options->op_issue_ns = ModelOpIssueNs(record);
  options->graph_op_ns = ModelGraphOpNs(record);
}

void ApplyMachineModel(const MachineModel& model, RunOptions* options, Topology* run_topology) {
  ApplyMachineModel(model.record, options);
  *run_topology = model.machine;
}

void ApplyMachineModelOn(const std::string& backend, const MachineModel& model, RunOptions* options,
                         Topology* run_topology) {
  if (!BackendTraitsOrDefault(backend).models_machine) return;
  ApplyMachineModel(model, options, run_topology);
}

std::string MachineModelFaultRefusal(const Faults& faults) {
  const char* why = ": the model of this machine runs on its own GPUs (virtual ranks copy through one GPU's "
                    "memory), not on the links the plan names; a slow rank is modelled";
  if (!faults.throttles.empty()) return std::string("throttle_link") + why;
  if (!faults.failed_links.empty()) return std::string("fail_link") + why;
  return "";
}

}  // namespace shardlab
