// Which scenario's views the run shown has, and that scenario's own state
// for them. A view asks by the name its spec lists it under
// (ScenarioSpec::panels, app/gui/views/scenario_panels.cpp), never by the
// scenario's name:
//
//   if (const PreparedTp* tp = PreparedDetail<PreparedTp>(session, "tp_weights")) ...
//   const TpSummary& out = SummaryDetail<TpSummary>(session);  // in tp's own views
#pragma once

#include <string_view>

#include "app/gui/model/session.h"

namespace shardlab::gui {

/// True when the spec the run shown was started from lists `panel` among
/// its views.
bool RunHasPanel(const Session& session, std::string_view panel);

/// The prepared run's own state (its spec's T: PreparedPipeline, ...) when
/// the run lists `panel`, else null. Its plan is session.plan().
template <class T>
const T* PreparedDetail(const Session& session, std::string_view panel) {
  const Prepared* p = session.prepared();
  return p != nullptr && p->detail != nullptr && RunHasPanel(session, panel) ? &p->Detail<T>() : nullptr;
}

/// The run's own summary (its spec's T), or a T of nothing before the run
/// is done. Only a view of that scenario asks.
template <class T>
const T& SummaryDetail(const Session& session) {
  static const T none{};
  return session.summary().detail != nullptr ? session.summary().Detail<T>() : none;
}

}  // namespace shardlab::gui
