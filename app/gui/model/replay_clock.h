// ReplayClock: the cursor the views show. Real runs take microseconds; the
// views replay recorded events in slow motion at the chosen speed, with
// their own cursor, so animation never slows the run that made them.
//
//   wall seconds ──× speed──► run nanoseconds shown (cursor_ns)
//
// Step moves the cursor to the end of the next logical step (not to a
// fixed time), Play moves it continuously, Reset returns it to 0.
#pragma once

#include <vector>

#include "engine/core/units.h"

namespace shardlab::gui {

class ReplayClock {
 public:
  /// End time of each logical step (ascending), and of the whole run.
  void SetSteps(std::vector<TimeNs> step_end_ns, TimeNs run_end_ns);

  void Play();
  void Pause();
  /// Pauses and moves to the end of the first step that ends after the
  /// cursor (or to the run's end). Returns false at the end already.
  bool Step();
  /// Pauses and moves back to the end of the previous step (or 0).
  bool StepBack();
  void Reset();
  void SeekNs(TimeNs t);
  /// Advances a playing clock by `wall_seconds` of real time; stops at the end.
  void Advance(double wall_seconds);

  /// Run nanoseconds shown per wall second (e.g. 1000: 1 µs takes 1 s).
  void set_speed(double run_ns_per_wall_s);
  double speed() const { return speed_; }
  /// A speed that plays the whole run in about `wall_seconds`.
  static double SpeedForDuration(TimeNs run_end_ns, double wall_seconds);

  bool playing() const { return playing_; }
  bool at_end() const { return cursor_ns_ >= run_end_ns_; }
  TimeNs cursor_ns() const { return cursor_ns_; }
  TimeNs run_end_ns() const { return run_end_ns_; }
  /// Logical steps fully shown at the cursor (0 .. number of steps).
  int steps_shown() const;
  int num_steps() const { return static_cast<int>(step_end_ns_.size()); }

 private:
  std::vector<TimeNs> step_end_ns_;
  TimeNs run_end_ns_ = 0;
  TimeNs cursor_ns_ = 0;
  double speed_ = 1000.0;
  bool playing_ = false;
};

}  // namespace shardlab::gui
