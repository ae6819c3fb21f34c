#include "app/gui/model/replay_clock.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace shardlab::gui {
namespace {

/// Used when a speed cannot be derived (empty run, no wall time).
constexpr double kDefaultSpeed = 1000.0;

}  // namespace

void ReplayClock::SetSteps(std::vector<TimeNs> step_end_ns, TimeNs run_end_ns) {
  step_end_ns_ = std::move(step_end_ns);
  // Step ends must ascend for the binary searches; a later step never ends first.
  for (std::size_t k = 1; k < step_end_ns_.size(); ++k) {
    step_end_ns_[k] = std::max(step_end_ns_[k], step_end_ns_[k - 1]);
  }
  run_end_ns_ = std::max<TimeNs>(run_end_ns, 0);
  cursor_ns_ = std::clamp<TimeNs>(cursor_ns_, 0, run_end_ns_);
  if (at_end()) playing_ = false;
}

void ReplayClock::Play() {
  if (run_end_ns_ <= 0) return;
  if (at_end()) cursor_ns_ = 0;  // play again from the start
  playing_ = true;
}

void ReplayClock::Pause() { playing_ = false; }

bool ReplayClock::Step() {
  playing_ = false;
  if (at_end()) return false;
  const auto next = std::upper_bound(step_end_ns_.begin(), step_end_ns_.end(), cursor_ns_);
  cursor_ns_ = next != step_end_ns_.end() ? std::min(*next, run_end_ns_) : run_end_ns_;
  return true;
}

bool ReplayClock::StepBack() {
  playing_ = false;
  if (cursor_ns_ <= 0) return false;
  // The last step end strictly before the cursor, or the start.
  const auto after = std::lower_bound(step_end_ns_.begin(), step_end_ns_.end(), cursor_ns_);
  cursor_ns_ = after == step_end_ns_.begin() ? 0 : std::max<TimeNs>(*(after - 1), 0);
  return true;
}

void ReplayClock::Reset() {
  playing_ = false;
  cursor_ns_ = 0;
}

void ReplayClock::SeekNs(TimeNs t) {
  if (std::isnan(t)) return;
  cursor_ns_ = std::clamp<TimeNs>(t, 0, run_end_ns_);
  if (at_end()) playing_ = false;
}

void ReplayClock::Advance(double wall_seconds) {
  if (!playing_ || !(wall_seconds > 0)) return;
  cursor_ns_ = std::min(cursor_ns_ + wall_seconds * speed_, run_end_ns_);
  if (at_end()) playing_ = false;
}

void ReplayClock::set_speed(double run_ns_per_wall_s) {
  if (run_ns_per_wall_s > 0 && std::isfinite(run_ns_per_wall_s)) speed_ = run_ns_per_wall_s;
}

double ReplayClock::SpeedForDuration(TimeNs run_end_ns, double wall_seconds) {
  if (!(run_end_ns > 0) || !(wall_seconds > 0) || !std::isfinite(run_end_ns)) return kDefaultSpeed;
  return run_end_ns / wall_seconds;
}

int ReplayClock::steps_shown() const {
  const auto shown = std::upper_bound(step_end_ns_.begin(), step_end_ns_.end(), cursor_ns_);
  return static_cast<int>(shown - step_end_ns_.begin());
}

}  // namespace shardlab::gui
