// How fast the engine builds and simulates a paper-scale 3D step (timing
// only): GPT-3 175B on 64 DGX A100 (512 GPUs). The simulated step time and
// MFU are reported as counters beside the host time, so a run can be read
// against the `run 3d` example of docs/concepts/3d.md.
//
//   BM_ThreeDGpt3/dp/pp/tp    build, run and summarise one step; tp 8
//                             inside each box, dp·pp·tp = 512
#include <benchmark/benchmark.h>

#include "engine/run/executor.h"
#include "engine/scenarios/three_d_scenario.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

const Topology& Cluster() {
  static const Topology topology = MakeTopologyPreset("64x-dgx-a100-ib");
  return topology;
}

void BM_ThreeDGpt3(benchmark::State& state) {
  ThreeDScenario scenario;
  scenario.grid = {static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                   static_cast<int>(state.range(2))};
  scenario.model = "gpt3-175b";
  scenario.micro_batch = 4;  // 1536 / (dp · 4) micro-batches per replica
  ThreeDSummary summary;
  for (auto _ : state) {
    auto prepared = PrepareThreeD(scenario, Cluster());
    RunOptions options;
    options.timing_only = true;
    Executor executor(CreateBackend("sim"), std::move(prepared->three_d.plan), Cluster(), options);
    VectorSink sink;
    executor.RunToEnd(sink);
    summary = SummarizeThreeD(*prepared, sink.events, executor.backend(), &executor.plan());
  }
  state.counters["ops"] = static_cast<double>(summary.ops);
  state.counters["sim_step_s"] = summary.step_ns * 1e-9;
  state.counters["mfu"] = summary.mfu;
}
BENCHMARK(BM_ThreeDGpt3)
    ->Args({64, 1, 8})
    ->Args({8, 8, 8})
    ->Args({16, 4, 8})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
}  // namespace shardlab

BENCHMARK_MAIN();
