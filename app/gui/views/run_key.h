// RunKeyChanged: tells a view that the session now holds a different run.
//
// Views that cache per-run state (a layout, LinkActivity with its route
// cache, the Gantt's fit) keep the Session::run_id() they built it for in
// their ImGui window's storage. An id, not the run's address: Start frees
// the old run before it builds the new one, which often lands at the same
// address.
#pragma once

#include <cstdint>

namespace shardlab::gui {

/// True when `run_id` differs from the one last stored under `slot_name` in
/// the current ImGui window's state storage (and stores it). The first
/// call for a window returns true.
bool RunKeyChanged(const char* slot_name, std::uint64_t run_id);

}  // namespace shardlab::gui
