// Why a finished collective's time is not what the alpha-beta formula says.
// The formula is always for the machine drawn (its links' latency and
// bandwidth); only the simulator times a run on that machine. A run timed on
// real GPUs or on host processes measures the hardware that ran it, so a gap
// there says how far that hardware is from the one drawn, not that the
// algorithm is slow — the Metrics panel must not blame contention for it.
#pragma once

#include <string>

#include "engine/core/event.h"

namespace shardlab::gui {

/// The note under the formula for a run on `clock` that took `measured_ns`
/// against the formula's `predicted_ns`; "" when the gap needs none (within
/// 10% of the formula, or nothing to compare). `host_lane_ns`: the run's
/// host lane total (host_lane_rows.h); when it is at least half a simulated
/// run's time, the note names the host's calls, not contention.
std::string FormulaGapNote(ClockKind clock, double measured_ns, double predicted_ns, double host_lane_ns = 0);

}  // namespace shardlab::gui
