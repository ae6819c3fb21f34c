#include "engine/planner/planner_simulation.h"

#include "engine/algorithms/three_d.h"
#include "engine/run/backend.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"

namespace shardlab {

std::string WhyNotSimulable(const PlanCandidate& c) {
  const ParallelLayout& l = c.layout;
  if (!c.feasible) return "not feasible";
  if (l.interleave > 1) return "interleaving v " + std::to_string(l.interleave);
  if (l.zero_stage > 1) return "ZeRO-" + std::to_string(l.zero_stage);
  if (l.recompute != Recompute::kNone)
    return std::string(RecomputeName(l.recompute)) + " recomputation";
  return "";
}

SimulatedLayout SimulatePlanCandidate(const PlannerRequest& request, const Topology& topology,
                                      const PlanCandidate& candidate) {
  SimulatedLayout result;
  result.not_simulated = WhyNotSimulable(candidate);
  if (!result.not_simulated.empty()) return result;
  const ParallelLayout& l = candidate.layout;
  ThreeDTimingParams params;
  params.grid.dp = l.dp;
  params.grid.pp = l.pp;
  params.grid.tp = l.tp;
  params.schedule = PipelineSchedule::k1F1B;
  params.zero_stage = l.zero_stage;
  params.model = request.model;
  params.model.micro_batch = l.micro_batch;
  ThreeDPlan three_d = BuildThreeDTiming(params);

  RunOptions options;
  options.timing_only = true;
  Executor executor(CreateBackend("sim"), std::move(three_d.plan), topology, options);
  CountingSink sink;
  executor.RunToEnd(sink);
  if (executor.state() != ExecutorState::kDone) {
    result.not_simulated = "the simulation failed: " + executor.error();
    return result;
  }
  result.simulated = true;
  result.step_ns = sink.end_ns;
  result.events = sink.count;
  const DeviceSpec& gpu = topology.nodes[static_cast<std::size_t>(topology.gpus[0])].device;
  const double model_flops =
      double(request.model.global_batch) * request.model.TrainingFlopsPerSequence();
  const double gpus = double(l.dp) * l.pp * l.tp;
  if (result.step_ns > 0)
    result.mfu = model_flops / (result.step_ns * 1e-9 * gpus * gpu.fp16_tflops * 1e12);
  return result;
}

}  // namespace shardlab
