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
  if (one_rank_per_gpu) return "";
  return Format(Tr("measured on %s; drawn: %s, the machine the plan was made for"), record.Describe().c_str(),
                trace->topology.name.c_str());
}

}  // namespace shardlab::gui
