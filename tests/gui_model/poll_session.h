// Polls a Session as the app's frame loop does, until its run ends: what
// every test of a running session waits with.
#pragma once

#include <chrono>
#include <thread>

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

}  // namespace shardlab::gui::test
