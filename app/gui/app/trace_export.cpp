#include "app/gui/app/trace_export.h"

#include <exception>
#include <vector>

#include "engine/io/trace_writer.h"

namespace shardlab::gui {

std::string WriteSessionTrace(const Session& session, const std::string& path) {
  if (session.plan() == nullptr || session.store().event_count() == 0) {
    return path + ": no recorded run to export yet";
  }
  try {
    std::vector<Event> events;
    events.reserve(session.store().event_count());
    for (const TimelineRow& row : session.store().rows()) {
      events.insert(events.end(), row.events.begin(), row.events.end());
    }
    TraceInfo info;
    info.title = "shardlab: " + session.Title();
    info.backend = session.backend();
    WriteChromeTraceFile(path, *session.plan(), *session.topology(), events, info);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace shardlab::gui
