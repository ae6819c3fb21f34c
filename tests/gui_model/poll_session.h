// Polls a Session as the app's frame loop does, until its run ends: what
// every test of a running session waits with.
#pragma once

#include <chrono>
#include <thread>

#include "app/gui/model/run_detail.h"
#include "app/gui/model/session.h"

namespace shardlab::gui::test {

/// Polls until the run is no longer running (done or failed); false when
/// `timeout` passed first.
inline bool PollUntilDone(Session& session, std::chrono::seconds timeout = std::chrono::seconds(120)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (session.state() == SessionState::kRunning) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    session.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// The scenario's own summary of the finished run (PipelineOutcomeSummary,
/// TpSummary, ...; a T of nothing before the end).
template <class T>
const T& Outcome(const Session& session) {
  return SummaryDetail<T>(session);
}

/// The scenario's own prepared state when the run is one of spec `name`, else null.
template <class T>
const T* PreparedAs(const Session& session, std::string_view name) {
  const Prepared* p = session.prepared();
  return p != nullptr && p->detail != nullptr && session.run_scenario() == name ? &p->Detail<T>() : nullptr;
}

}  // namespace shardlab::gui::test
