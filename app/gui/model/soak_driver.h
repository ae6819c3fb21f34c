// SoakDriver: random UI commands against the app's models, the way the
// transport bar, scenario panel and Gantt view drive them, for a soak run
// on a sanitizer build (bench/soak_main.cpp, `shardlab_soak`).
//
//   seed ──mt19937──► command ──► Session / ReplayClock / GanttFrame
//                                   └─► trace hash (FNV-1a of the visible state)
//
// A scenario change waits for its run to finish before the next command,
// so the state after each command depends on the seed only, never on how
// the worker thread was scheduled: the same seed gives the same trace.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "app/gui/model/gantt_layout.h"
#include "app/gui/model/replay_clock.h"
#include "app/gui/model/session.h"

namespace shardlab::gui {

enum class SoakCommand {
  kStep,
  kStepBack,
  kPlay,
  kPause,
  kReset,
  kFrame,
  kChangeScenario,
  kBadScenario,
  kZoom,
  kFit,
};
inline constexpr int kSoakCommandCount = 10;
/// "step", "change-scenario", ... (for the soak's summary and test messages).
const char* SoakCommandName(SoakCommand command);

struct SoakCounts {
  std::uint64_t commands = 0;
  std::uint64_t by_command[kSoakCommandCount] = {};
  std::uint64_t runs = 0;      // scenario changes that ran to the end
  std::uint64_t rejected = 0;  // bad scenarios the session refused, as expected
  std::uint64_t boxes = 0;     // Gantt boxes laid out over the whole soak
};

class SoakDriver {
 public:
  explicit SoakDriver(std::uint64_t seed);

  /// Applies one random command; returns the trace hash after it. Throws
  /// shardlab::Error (kRuntime) when the models break an invariant (a run
  /// that fails, a bad scenario accepted, a cursor outside the run).
  std::uint64_t Next();

  std::uint64_t hash() const { return hash_; }
  const SoakCounts& counts() const { return counts_; }

 private:
  void Apply(SoakCommand command);
  void StartRun(const ScenarioSettings& settings);
  void Mix(std::uint64_t value);
  void MixState();

  std::mt19937_64 rng_;
  Session session_;
  ReplayClock clock_;
  GanttFrame frame_;
  std::uint64_t hash_ = 14695981039346656037ull;  // FNV-1a offset basis
  SoakCounts counts_;
};

}  // namespace shardlab::gui
