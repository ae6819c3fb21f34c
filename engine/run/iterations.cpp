#include "engine/run/iterations.h"

#include <algorithm>
#include <cstdio>

#include "engine/core/backend_traits.h"
#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/run/vector_sink.h"

namespace shardlab {

int DefaultWarmup(const std::string& backend) { return BackendTraitsOrDefault(backend).default_warmup; }

void CheckIterationSettings(const IterationSettings& settings) {
  if (settings.warmup < 0)
    throw Error("warmup: must be 0 or more (got " + std::to_string(settings.warmup) + ")",
                ErrorKind::kInvalidInput);
  if (settings.iters < 1)
    throw Error("iters: must be at least 1 (got " + std::to_string(settings.iters) + ")",
                ErrorKind::kInvalidInput);
}

IterationTimes SummarizeIterations(const IterationSettings& settings,
                                   std::vector<TimeNs> spans_ns) {
  IterationTimes t;
  t.settings = settings;
  t.spans_ns = std::move(spans_ns);
  if (t.spans_ns.empty()) return t;
  TimeNs sum = 0;
  for (TimeNs s : t.spans_ns) sum += s;
  t.average_ns = sum / static_cast<double>(t.spans_ns.size());
  t.best_ns = *std::min_element(t.spans_ns.begin(), t.spans_ns.end());
  return t;
}

namespace {

void RunOnce(Executor& executor, EventSink& sink) {
  executor.RunToEnd(sink);
  if (executor.state() != ExecutorState::kDone)
    throw Error("the run failed: " + executor.error(), ErrorKind::kRuntime);
}

}  // namespace

IterationTimes RunIterations(Executor& executor, EventSink& last,
                             const IterationSettings& settings) {
  CheckIterationSettings(settings);
  std::vector<TimeNs> spans;
  const int runs = settings.warmup + settings.iters;
  for (int run = 0; run < runs; ++run) {
    if (run > 0) executor.Reset();
    const bool timed = run >= settings.warmup;
    const bool is_last = run == runs - 1;
    CountingSink counter;
    if (is_last) {
      FanOutSink both;
      both.Add(&counter);
      both.Add(&last);
      RunOnce(executor, both);
    } else {
      RunOnce(executor, counter);
    }
    if (timed) spans.push_back(counter.end_ns);
  }
  return SummarizeIterations(settings, std::move(spans));
}

std::vector<TimeNs> RunBeforeTheLast(Executor& executor, const IterationSettings& settings,
                                     const std::function<void(int runs_done)>& after_each) {
  CheckIterationSettings(settings);
  std::vector<TimeNs> spans;
  for (int run = 0; run + 1 < settings.warmup + settings.iters; ++run) {
    const bool timed = run >= settings.warmup;
    CountingSink counter;
    try {
      RunOnce(executor, counter);
    } catch (const Error& e) {
      const std::string which = timed ? "timed run " + std::to_string(run - settings.warmup + 1) + " of " +
                                            std::to_string(settings.iters)
                                      : "warm-up run " + std::to_string(run + 1);
      throw Error(which + " failed: " + e.what(), e.kind());
    }
    if (timed) spans.push_back(counter.end_ns);
    executor.Reset();
    if (after_each) after_each(run + 1);
  }
  return spans;
}

std::string DescribeIterations(const IterationTimes& times) {
  const IterationSettings& s = times.settings;
  if (s.warmup == 0 && s.iters == 1) return "";
  auto time = [](TimeNs ns) {
    char buf[64];
    if (ns >= 1e6) std::snprintf(buf, sizeof buf, "%.3g ms", ns / 1e6);
    else std::snprintf(buf, sizeof buf, "%.3g us", ns / 1e3);
    return std::string(buf);
  };
  std::string line = "# iterations: ";
  if (s.warmup > 0)
    line += std::to_string(s.warmup) + " warm-up (not timed), ";
  line += std::to_string(s.iters) + " timed: average " + time(times.average_ns) + ", best " +
          time(times.best_ns) + "; the tables and the timeline show the last\n";
  return line;
}

void WriteIterationsJson(JsonWriter& json, const IterationTimes& times) {
  json.Key("iterations");
  json.BeginObject();
  json.Field("warmup", times.settings.warmup);
  json.Field("iters", times.settings.iters);
  json.Field("average_us", times.average_ns / 1000.0);
  json.Field("best_us", times.best_ns / 1000.0);
  json.EndObject();
}

}  // namespace shardlab
