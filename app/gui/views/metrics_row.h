// The metrics panels' two-column rows: a dim name, a value, and a note
// beside the value when it fits (else in its tooltip).
#pragma once

#include <cstdint>
#include <string>

#include <imgui.h>

#include "app/gui/app/theme.h"
#include "app/gui/model/session.h"
#include "engine/verify/verdict.h"

namespace shardlab::gui {

/// One row of a two-column table begun by the caller.
void MetricsRow(const char* name, const std::string& value, const std::string& note,
                ImU32 value_color = 0);

/// A red "dropped N events" row when the event queue overflowed, else nothing.
void DroppedEventsRow(const Session& session, const Theme& theme);

/// "correct", "WRONG", "not checked" in the app's language (VerdictName's words).
const char* VerdictWords(VerdictKind kind);

/// The clock the run's events were timed by ("simulated"; "模拟" in Chinese), or "-".
const char* ClockOf(const Session& session);

/// The clock of the run's first event; `fallback` before there is one.
ClockKind RunClockKind(const Session& session, ClockKind fallback);

/// "134,217,728": counts read better grouped.
std::string Grouped(std::int64_t value);

}  // namespace shardlab::gui
