#include "app/gui/model/run_detail.h"

#include <algorithm>

#include "engine/scenarios/scenario_spec.h"

namespace shardlab::gui {

bool RunHasPanel(const Session& session, std::string_view panel) {
  const ScenarioSpec* spec = FindScenario(session.run_scenario());
  return spec != nullptr && std::find(spec->panels.begin(), spec->panels.end(), panel) != spec->panels.end();
}

}  // namespace shardlab::gui
