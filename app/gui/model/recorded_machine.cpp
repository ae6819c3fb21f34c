#include "app/gui/model/recorded_machine.h"

#include "app/gui/i18n/language.h"

namespace shardlab::gui {

std::string RecordedMachineLine(const LoadedTrace* trace) {
  if (trace == nullptr || !trace->machine) return "";
  const MachineRecord& record = *trace->machine;
  const int drawn_gpus = trace->topology.num_gpus();
  bool one_rank_per_gpu = record.gpus == drawn_gpus;
  for (std::size_t rank = 0; rank < record.rank_to_gpu.size(); ++rank) {
    one_rank_per_gpu = one_rank_per_gpu && record.rank_to_gpu[rank] == static_cast<int>(rank);
  }
  // The GPUs drawn are the ones measured when the record's model names them
  // ("NVIDIA A100-SXM4-80GB" for a drawn "A100-SXM4-80GB"; an unnamed one matches).
  bool same_model = true;
  for (const std::int32_t gpu : trace->topology.gpus) {
    const std::string& drawn = trace->topology.nodes[static_cast<std::size_t>(gpu)].device.model;
    same_model = same_model && (drawn.empty() || record.gpu_model.find(drawn) != std::string::npos);
  }
  if (one_rank_per_gpu && same_model) return "";
  // The simulator's run of the machine was modelled, not measured: its clock says so.
  if (trace->clock == "simulated") {
    return Format(Tr("modelled, not measured: %s; drawn: %s, the machine the plan was made for"),
                  record.Describe().c_str(), trace->topology.name.c_str());
  }
  return Format(Tr("measured on %s; drawn: %s, the machine the plan was made for"), record.Describe().c_str(),
                trace->topology.name.c_str());
}

}  // namespace shardlab::gui
