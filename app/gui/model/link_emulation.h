// "Emulate links" in the scenario panel: a real-hardware run (cuda) holds
// each transfer for the time the modelled link would take, as the CLI's
// --emulate-links (RunOptions::emulate_links; the times say emulated). The
// simulator models links already, so there the switch is refused and
// disabled, with the CLI's reason (app/cli/collective_run.cpp).
//
//   ScenarioSettings {backend, emulate_links} ──► LinkEmulationRefusal ("" or why)
//                                              └─► LinkEmulationOptions ─► RunOptions
//                                                  (a worker run: --emulate-links)
#pragma once

#include <string>

#include "app/gui/model/session.h"
#include "engine/run/backend.h"

namespace shardlab::gui {

/// "" when `backend` can emulate links (cuda); else why not, one line: the
/// simulator "models links already", another backend has no emulation.
std::string LinkEmulationRefusal(const std::string& backend);

/// The run options the panel's settings ask for about links: emulate_links
/// when "Emulate links" is checked and the backend takes it (a refused
/// backend runs without it). Other fields keep their defaults.
RunOptions LinkEmulationOptions(const ScenarioSettings& settings);

}  // namespace shardlab::gui
