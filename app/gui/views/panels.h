// The app's control panels (views.h holds the views that draw a run):
//
//   scenario panel   what to run: collective, algorithm, ranks, size,
//                    topology, backend, ring order; Check's message in
//                    place; Run
//   transport bar    Play/Pause, Step, Step back, Reset, speed, where the
//                    replay cursor is, progress of a run still recording
//
// Both draw into the current ImGui window, which the App places.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "app/gui/model/planner_table.h"
#include "app/gui/views/views.h"

namespace shardlab::gui {

/// The planner panel: its fields and the last table it planned.
struct PlannerPanelState {
  PlannerSettings edit;
  PlannerTable table;
  bool planned = false;             // plans once when first shown
  int selected = -1;                // a row of table.rows
};

/// Draws the planner's fields, table and rejected counts. Returns true
/// when "Set up 3d run" was pressed: then *three_d holds the grid (the
/// rest of its fields untouched) for the caller to show and run.
bool DrawPlannerPanel(const Theme& theme, PlannerPanelState& state, ScenarioSettings* three_d);

struct ScenarioPanelState {
  ScenarioSettings edit;            // what the fields show (not yet run)
  ScenarioSettings last_run;        // what the session was last started with
  bool topology_is_file = false;    // the topology combo's "file..." entry
  std::string topology_file;        // its path field
  std::string custom_ring_order = "0,1,2,3,4,5,6,7";  // the custom entry's text
  bool restart_worker = false;      // "Restart worker" was pressed: run last_run again
};

/// Draws the scenario fields and Run. Returns true when Run was pressed
/// (then state.edit passed Session::Check and the caller starts it).
bool DrawScenarioPanel(ViewContext& ctx, ScenarioPanelState& state);

struct TransportBarState {
  std::uint64_t run_id = 0;         // the run step_phase was built for
  std::vector<Phase> step_phase;    // phase of each logical step's ops
};

/// Draws the transport controls on one line (plus a progress bar while
/// the session is still recording). Acts on ctx.clock directly.
void DrawTransportBar(ViewContext& ctx, TransportBarState& state);

/// Human names: "ring all-reduce", "direct all-to-all".
std::string CollectiveTitle(const std::string& kind, const std::string& algo);

/// "1.50 µs", "401 µs", "6.27 ms": FormatTime with a real micro sign.
std::string FormatRunTime(TimeNs ns);

/// The replay speed in words: "10 µs of run = 0.5 s" (the smallest
/// power-of-ten span of run time that takes at least half a second);
/// brief: without "of run" ("10 µs = 0.5 s"), for a narrow slider.
std::string SpeedInWords(double run_ns_per_wall_s, bool brief = false);

/// The automatic replay speed for a run: one logical step per ~1.5 s,
/// kept between 10 and 30 s for the whole run.
double AutoReplaySpeed(TimeNs run_end_ns, int num_steps);

}  // namespace shardlab::gui
