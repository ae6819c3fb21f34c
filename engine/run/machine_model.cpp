#include "engine/run/machine_model.h"

namespace shardlab {

MachineModel BuildMachineModel(MachineRecord record, int ranks, std::optional<DetectedMachine> detected) {
  if (ranks <= 0) ranks = record.rank_to_gpu.empty() ? record.gpus : static_cast<int>(record.rank_to_gpu.size());
  MachineModel out;
  out.record = std::move(record);
  out.detected = std::move(detected);
  out.record.rank_to_gpu = VirtualPlacement(ranks, out.record.gpus);
  out.machine = BuildMachineTopology(out.record, out.detected ? &*out.detected : nullptr);
  out.plan_topology = ranks > out.record.gpus ? VirtualDeviceTopology(out.record, ranks) : out.machine;
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
  if (backend != "sim") return;
  ApplyMachineModel(model, options, run_topology);
}

}  // namespace shardlab
