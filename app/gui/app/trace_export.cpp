#include "app/gui/app/trace_export.h"

#include <exception>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/run/trace_writer.h"

namespace shardlab::gui {

std::string WriteSessionTrace(const Session& session, const std::string& path) {
  const PreparedCollective* prepared = session.prepared();
  if (prepared == nullptr || session.store().event_count() == 0) {
    return path + ": no recorded run to export yet";
  }
  try {
    std::vector<Event> events;
    events.reserve(session.store().event_count());
    for (const TimelineRow& row : session.store().rows()) {
      events.insert(events.end(), row.events.begin(), row.events.end());
    }
    const CollectiveScenario& s = prepared->scenario;
    TraceInfo info;
    info.title = std::string("shardlab: ") + CollectiveAlgoName(s.algo) + " " +
                 CollectiveKindName(s.kind) + ", " + std::to_string(s.ranks) + " ranks on " +
                 prepared->topology.name;
    info.backend = s.backend;
    WriteChromeTraceFile(path, prepared->plan, prepared->topology, events, info);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace shardlab::gui
