// The session's run as a Chrome trace file (Perfetto, chrome://tracing).
#pragma once

#include <string>

#include "app/gui/model/session.h"

namespace shardlab::gui {

/// Writes every event the session has recorded to `path` with
/// WriteChromeTraceFile. Returns "" or a message naming the path and the
/// reason; never throws.
std::string WriteSessionTrace(const Session& session, const std::string& path);

}  // namespace shardlab::gui
