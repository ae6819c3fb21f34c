#include "app/gui/model/run_iterations.h"

#include "app/gui/model/session.h"
#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/run/vector_sink.h"

namespace shardlab::gui {

IterationSettings RunIterationsOf(const ScenarioSettings& settings) {
  IterationSettings s;
  s.warmup = settings.warmup == -1 ? DefaultWarmup(settings.backend) : settings.warmup;
  s.iters = settings.iters;
  CheckIterationSettings(s);
  if (settings.in_worker && s.iters > 1)
    throw Error("iters: a run in the worker process shows one timed run (got " + std::to_string(s.iters) +
                    "); 'shardlab-cli run -n N' averages several",
                ErrorKind::kInvalidInput);
  return s;
}

std::vector<TimeNs> RunBeforeTheShownRun(Executor& executor, const IterationSettings& settings,
                                         const std::atomic<bool>& cancel) {
  std::vector<TimeNs> spans;
  for (int run = 0; run + 1 < settings.warmup + settings.iters && !cancel; ++run) {
    CountingSink discard;
    executor.RunToEnd(discard);
    if (executor.state() != ExecutorState::kDone) break;
    if (run >= settings.warmup) spans.push_back(discard.end_ns);
    executor.Reset();
  }
  return spans;
}

std::string DescribeRunIterations(const IterationTimes& times) {
  const IterationSettings& s = times.settings;
  if (s.warmup == 0 && s.iters <= 1) return "";
  std::string line;
  if (s.iters > 1) {
    line = "average of " + std::to_string(s.iters) + " runs: " + FormatTime(times.average_ns) +
           ", best " + FormatTime(times.best_ns) + "; last iteration shown";
  } else {
    line = "one timed run: " + FormatTime(times.average_ns);
  }
  if (s.warmup > 0)
    line += "; " + std::to_string(s.warmup) + (s.warmup == 1 ? " warm-up run" : " warm-up runs") +
            " excluded";
  return line;
}

}  // namespace shardlab::gui
