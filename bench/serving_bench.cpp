// Serving 10,000 requests on 8 GPUs with continuous batching, timing only:
// the time `shardlab-cli run inference --timing-only` spends (arrivals,
// the cost model, the simulation), against the goal of 2 s (issue 29).
//
//   serving_bench [--requests N]   default 10000; layouts tp 8 x 1 and tp 2 x 4 replicas
//
// Prints each layout's wall time, the ratio to the goal, and what the run
// served (steps, tokens/s), so the figure is read beside the work done.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/scenarios/inference_scenario.h"

int main(int argc, char** argv) {
  using namespace shardlab;
  using Clock = std::chrono::steady_clock;
  int requests = 10000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--requests") requests = std::atoi(argv[i + 1]);
  constexpr double kGoalS = 2.0;
  std::printf("# serving_bench: %d requests, continuous batching, llama-7b-ish (fp16) on dgx-a100, timing only\n",
              requests);
  std::printf("# layout              wall s   goal ratio      steps   tokens/s   e2e p50 ms   e2e p99 ms\n");
  for (const auto& [tp, replicas] : {std::pair{8, 1}, std::pair{2, 4}}) {
    InferenceScenario s;
    s.serve_model = "llama-7b-ish";
    s.layout = {tp, 1, replicas};
    s.arrivals.requests = requests;
    s.arrivals.rate_per_s = 100;
    s.arrivals.prompt_mean = 128;
    s.arrivals.output_mean = 128;
    s.batcher.max_batch = 32;
    s.timing_only = true;
    const auto start = Clock::now();
    const InferenceRun run = RunInference(s);
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    const ServingResult& r = run.results.back();
    std::printf("  tp %d x %d replicas   %7.3f   %10.3f %10lld %10.0f %12.1f %12.1f\n", tp, replicas, wall,
                wall / kGoalS, static_cast<long long>(r.step_count), r.tokens_per_s, r.e2e_ns.p50 / 1e6,
                r.e2e_ns.p99 / 1e6);
  }
  return 0;
}
