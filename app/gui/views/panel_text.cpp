// Words the panels share: titles, times, the replay speed.
#include <algorithm>
#include <cmath>

#include "app/gui/i18n/language.h"
#include "app/gui/views/panels.h"
#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/core/units.h"

namespace shardlab::gui {
namespace {

/// One step per this many wall seconds reads well when stepping by eye.
constexpr double kWallSecondsPerStep = 1.5;
constexpr double kMinWholeRunWallS = 10.0;
constexpr double kMaxWholeRunWallS = 30.0;

}  // namespace

std::string CollectiveTitle(const std::string& kind, const std::string& algo) {
  std::string title = kind;  // an unknown spelling is shown as typed
  try {
    title = shardlab::CollectiveTitle(ParseCollectiveKind(kind));
  } catch (const Error&) {
  }
  if (algo == "tree") return "double binary tree " + title;
  return algo.empty() ? title : algo + " " + title;
}

std::string FormatRunTime(TimeNs ns) {
  std::string text = FormatTime(ns);
  if (text.size() >= 2 && text.compare(text.size() - 2, 2, "us") == 0) {
    text.replace(text.size() - 2, 2, "µs");
  }
  return text;
}

std::string SpeedInWords(double run_ns_per_wall_s, bool brief) {
  if (!(run_ns_per_wall_s > 0) || !std::isfinite(run_ns_per_wall_s)) return Tr("paused");
  static const struct {
    double ns;
    const char* text;
  } kSpans[] = {
      {1, "1 ns"},     {10, "10 ns"},   {100, "100 ns"}, {1e3, "1 µs"},  {1e4, "10 µs"},
      {1e5, "100 µs"}, {1e6, "1 ms"},   {1e7, "10 ms"},  {1e8, "100 ms"}, {1e9, "1 s"},
  };
  const auto* chosen = &kSpans[std::size(kSpans) - 1];
  for (const auto& span : kSpans) {
    if (span.ns / run_ns_per_wall_s >= 0.5) {
      chosen = &span;
      break;
    }
  }
  const double wall_s = chosen->ns / run_ns_per_wall_s;
  if (brief) return Format(wall_s >= 100 ? "%s = %.0f s" : "%s = %.1f s", chosen->text, wall_s);
  return Format(wall_s >= 100 ? Tr("%s of run = %.0f s") : Tr("%s of run = %.1f s"), chosen->text, wall_s);
}

double AutoReplaySpeed(TimeNs run_end_ns, int num_steps) {
  const double wall_s = std::clamp(kWallSecondsPerStep * std::max(num_steps, 1),
                                   kMinWholeRunWallS, kMaxWholeRunWallS);
  if (!(run_end_ns > 0)) return 1000.0;
  return run_end_ns / wall_s;
}

}  // namespace shardlab::gui
