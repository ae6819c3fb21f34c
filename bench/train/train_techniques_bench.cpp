// What each training technique of `run dp-train` costs the simulator: for
// every technique at the lab's sizes, the host time of the whole
// measurement (the training with real arithmetic, the baseline run, both
// timing plans on the simulator, the summary) and of its parts. Goal
// (issue 28): under 1 s per run for the small model (4x32, 20 steps), so a
// lab stays interactive.
//
//   train_techniques_bench [--quick]
//
// Host times on the machine that runs it; the ratios between rows are what
// carries over.
#include <chrono>
#include <memory>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/dp_train_scenario.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count(); }

struct Case {
  const char* name;
  std::vector<std::pair<const char*, const char*>> params;
};

int Main(bool quick) {
  const ScenarioSpec* spec = FindScenario("dp-train");
  if (spec == nullptr) {
    std::fprintf(stderr, "no dp-train scenario\n");
    return 1;
  }
  const std::vector<Case> cases = {
      {"plain data parallel", {}},
      {"accumulate 4", {{"accumulate", "4"}, {"batch", "128"}}},
      {"recompute full", {{"recompute", "full"}}},
      {"fp16 + loss scale", {{"precision", "fp16"}, {"loss_scale", "1024"}, {"overflow", "2@3"}}},
      {"compress fp16", {{"compress", "fp16"}}},
      {"compress int8", {{"compress", "int8"}}},
      {"compress topk 5%", {{"compress", "topk"}, {"topk", "0.05"}}},
      {"local SGD H=4", {{"local_steps", "4"}}},
      {"stale-sync S=2", {{"staleness", "2"}, {"slow_rank", "1:3"}}},
  };
  const std::vector<std::pair<const char*, const char*>> sizes =
      quick ? std::vector<std::pair<const char*, const char*>>{{"32", "20"}}
            : std::vector<std::pair<const char*, const char*>>{{"32", "20"}, {"128", "20"}, {"256", "10"}};
  std::printf("%-22s %6s %6s %10s %10s %10s %10s %10s\n", "technique", "width", "steps", "train (s)", "sim (s)",
              "summary (s)", "total (s)", "goal");
  bool over = false;
  for (const auto& [width, steps] : sizes) {
    for (const Case& c : cases) {
      ScenarioParams p(*spec);
      p.Set("width", width);
      p.Set("steps", steps);
      for (const auto& [name, value] : c.params) p.Set(name, value);
      // The steps of MeasureDpTrain, each timed: the training with the
      // baseline (host arithmetic), both plans on the simulator, the summary
      // (with the double-precision reference where it checks).
      const auto start = Clock::now();
      std::unique_ptr<PreparedDpTrain> prepared = PrepareDpTrain(DpTrainFromParams(p));
      const double train_s = Seconds(start);
      const auto sim_start = Clock::now();
      RunOptions options;
      options.timing_only = true;
      options.faults = prepared->scenario.faults;
      VectorSink sink, base_sink;
      Executor run(CreateBackend("sim"), std::move(prepared->plan.plan), prepared->topology, options);
      run.RunToEnd(sink);
      Executor base(CreateBackend("sim"), std::move(prepared->baseline_plan.plan), prepared->topology, options);
      base.RunToEnd(base_sink);
      const double sim_s = Seconds(sim_start);
      const auto summary_start = Clock::now();
      const DpTrainSummary s = SummarizeDpTrain(*prepared, sink.events, run.backend(), base_sink.events, run.plan());
      const double summary_s = Seconds(summary_start);
      const double total_s = train_s + sim_s + summary_s;
      const bool small = std::strcmp(width, "32") == 0;
      if (small && total_s >= 1.0) over = true;
      std::printf("%-22s %6s %6s %10.3f %10.3f %10.3f %10.3f %10s\n", c.name, width, steps, train_s, sim_s,
                  summary_s, total_s, small ? (total_s < 1.0 ? "< 1 s ok" : "OVER 1 s") : "");
      (void)s;
    }
  }
  return over ? 1 : 0;
}

}  // namespace
}  // namespace shardlab

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  return shardlab::Main(quick);
}
