// What verification costs beside the run it checks: for each training
// scenario at the largest sizes the host checks in seconds, the host time
// of the simulated run (the data computed in float) and of its summary
// (the double-precision reference with its bounds, and the judge), and
// their ratio. Goal (issue 25): verification under 20% of the run.
//
//   verify_cost_bench [--quick]
//
// Ratios within one run on one machine; the absolute times say nothing.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "engine/run/executor.h"
#include "engine/scenarios/moe_scenario.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/three_d_scenario.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/zero_scenario.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count(); }

// Runs the plan on the simulator and summarises it; prints both times.
template <typename Prepared, typename Summarize>
void Measure(const std::string& what, Prepared& prepared, Plan& plan, std::uint64_t seed, Summarize summarize) {
  RunOptions options;
  options.seed = seed;
  Executor executor(CreateBackend("sim"), plan, prepared.topology, options);
  VectorSink sink;
  const auto run_start = Clock::now();
  executor.RunToEnd(sink);
  const double run_s = Seconds(run_start);
  const auto check_start = Clock::now();
  const auto summary = summarize(prepared, sink.events, executor.backend(), &executor.plan());
  const double check_s = Seconds(check_start);
  std::printf("%-58s run %8.2f s   verify %8.2f s   verify/run %6.1f%%   %s\n", what.c_str(), run_s, check_s,
              100 * check_s / run_s, summary.check.verdict.Text().c_str());
  std::fflush(stdout);
}

}  // namespace
}  // namespace shardlab

int main(int argc, char** argv) {
  using namespace shardlab;
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::printf("# verification cost on this machine's host (simulator, data in float)\n");
  {
    ZeroScenario s;
    s.params.stage = 3;
    s.params.ranks = 4;
    s.params.model.layers = 8;
    s.params.model.width = quick ? 256 : 512;
    s.params.steps = quick ? 2 : 4;
    auto p = PrepareZero(s);
    Measure("zero stage 3, 4 ranks, 8 x " + std::to_string(s.params.model.width) + ", " +
                std::to_string(s.params.steps) + " Adam steps",
            *p, p->zero.plan, s.seed, SummarizeZero);
  }
  {
    PipelineScenario s;
    s.params.shape.stages = 4;
    s.params.shape.microbatches = 8;
    s.params.model.width = quick ? 512 : 1024;
    s.params.model.batch = 128;
    auto p = PreparePipeline(s);
    Measure("pipeline 1f1b, 4 stages, 8 x " + std::to_string(s.params.model.width) + ", batch 128", *p,
            p->pipeline.plan, s.seed, SummarizePipeline);
  }
  {
    ThreeDScenario s;
    s.grid = {2, 2, 2};
    s.mlp.layers = 8;
    s.mlp.width = quick ? 256 : 512;
    s.mlp.batch = 64;
    s.microbatches = 4;
    auto p = PrepareThreeD(s, MakeSharedBus(8, 100, 500));
    Measure("3d dp2 pp2 tp2, 8 x " + std::to_string(s.mlp.width) + ", batch 64", *p, p->three_d.plan, s.seed,
            SummarizeThreeD);
  }
  {
    TpScenario s;
    s.layer.kind = TpLayerKind::kTransformer;
    s.layer.hidden = quick ? 256 : 512;
    s.layer.seq = quick ? 128 : 256;
    s.layer.tp = 4;
    s.layer.heads = s.layer.hidden / 64;
    auto p = PrepareTp(s);
    Measure("tp-transformer, tp 4, H " + std::to_string(s.layer.hidden) + ", seq " + std::to_string(s.layer.seq), *p,
            p->layer.plan, s.seed, SummarizeTp);
  }
  {
    MoeScenario s;
    s.layer.tokens = quick ? 1024 : 4096;
    s.layer.hidden = quick ? 128 : 256;
    s.layer.ffn = 2 * s.layer.hidden;
    auto p = PrepareMoe(s);
    Measure("moe, 4 ranks, 8 experts, " + std::to_string(s.layer.tokens) + " tokens, H " +
                std::to_string(s.layer.hidden),
            *p, p->layer.plan, s.seed, SummarizeMoe);
  }
  return 0;
}
