// RunKey: tells a view that the session now holds a different run.
//
// Comparing PreparedCollective pointers is not enough: Session::Start frees
// the old run before it builds the new one, so the new one often lands at
// the same address. Views that cache per-run state (a layout, LinkActivity
// with its route cache, the Gantt's fit) compare this key instead.
#pragma once

#include <cstddef>

#include "engine/run/collective_scenario.h"

namespace shardlab::gui {

/// A hash of what identifies a run: its address, plan and topology names
/// and sizes.
std::size_t RunKey(const PreparedCollective& prepared);

/// True when `key` differs from the one last stored under `slot_name` in
/// the current ImGui window's state storage (and stores it). The first
/// call for a window returns true.
bool RunKeyChanged(const char* slot_name, std::size_t key);

}  // namespace shardlab::gui
