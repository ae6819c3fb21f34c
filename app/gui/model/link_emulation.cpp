#include "app/gui/model/link_emulation.h"

#include "app/gui/i18n/language.h"

namespace shardlab::gui {

std::string LinkEmulationRefusal(const std::string& backend) {
  if (BackendEmulatesLinks(backend)) return "";
  if (BackendTraitsOrDefault(backend).simulator) return Tr("the simulator models links already");
  return Format(Tr("link emulation is for CUDA GPUs (backend cuda), not %s"), backend.c_str());
}

RunOptions LinkEmulationOptions(const ScenarioSettings& settings) {
  RunOptions options;
  options.emulate_links = settings.emulate_links && LinkEmulationRefusal(settings.backend).empty();
  return options;
}

}  // namespace shardlab::gui
