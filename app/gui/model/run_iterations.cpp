#include "app/gui/model/run_iterations.h"

#include <cstdio>

#include "app/gui/i18n/language.h"
#include "app/gui/model/session.h"
#include "engine/core/units.h"
#include "engine/run/vector_sink.h"

namespace shardlab::gui {

IterationSettings RunIterationsOf(const ScenarioSettings& settings) {
  IterationSettings s;
  s.warmup = settings.warmup == -1 ? DefaultWarmup(settings.backend) : settings.warmup;
  s.iters = settings.iters;
  CheckIterationSettings(s);
  return s;
}

std::vector<TimeNs> RunBeforeTheShownRun(Executor& executor, const IterationSettings& settings,
                                         const std::atomic<bool>& cancel) {
  std::vector<TimeNs> spans;
  for (int run = 0; run + 1 < settings.warmup + settings.iters && !cancel; ++run) {
    CountingSink discard;
    executor.RunToEnd(discard);  // throws when the run fails or is cancelled
    if (run >= settings.warmup) spans.push_back(discard.end_ns);
    executor.Reset();
  }
  return spans;
}

std::string DescribeRunIterations(const IterationTimes& times) {
  const IterationSettings& s = times.settings;
  if (s.warmup == 0 && s.iters <= 1) return "";
  char line[256];
  if (s.iters > 1) {
    std::snprintf(line, sizeof line, Tr("average of %d runs: %s, best %s; last iteration shown"), s.iters,
                  FormatTime(times.average_ns).c_str(), FormatTime(times.best_ns).c_str());
  } else {
    std::snprintf(line, sizeof line, Tr("one timed run: %s"), FormatTime(times.average_ns).c_str());
  }
  std::string text = line;
  if (s.warmup > 0) {
    std::snprintf(line, sizeof line, s.warmup == 1 ? Tr("; %d warm-up run excluded") : Tr("; %d warm-up runs excluded"),
                  s.warmup);
    text += line;
  }
  return text;
}

}  // namespace shardlab::gui
