// PipelineScenario: pipeline-parallel training of the small MLP, from named
// parameters to a runnable plan, and from its events to the bubble and a
// check against the single-device reference. Shared by the CLI and the app.
//
//   PipelineScenario {schedule, stages, micro-batches, chunks, model, topology}
//        │ PreparePipeline: load topology, check, BuildPipeline
//        ▼
//   PreparedPipeline {scenario, topology, pipeline (plan, order, layer buffers)}
//        │ Executor(backend) ... events
//        ▼
//   SummarizePipeline -> bubble (measured beside the formulas), peak
//   in-flight, and every gradient and updated weight against MlpReference
//
// Errors are shardlab::Error (kInvalidInput) whose message starts with the
// field: "stages: ", "microbatches: ", "chunks: ", "layers: ", "width: ",
// "batch: ", "schedule: ", "optimizer: ", "topology: ", "backend: ".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/algorithms/pipeline.h"
#include "engine/run/backend.h"
#include "engine/scenarios/pipeline_metrics.h"
#include "engine/topology/topology.h"
#include "engine/verify/verdict.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

struct PipelineScenario {
  PipelineParams params;
  std::string topology = "dgx-a100";  // preset name or file path; stage s on GPU s
  std::string backend = "sim";
  std::uint64_t seed = 1;
  bool timing_only = false;
};

/// The scenario the "pipeline" spec's parameters describe (backend "sim",
/// seed 1). chunks 0: 2 for the interleaved schedule, else 1; lr 0: the
/// optimizer's own (0.05 for sgd, 0.001 for adam).
PipelineScenario PipelineFromParams(const ScenarioParams& params);

struct PreparedPipeline {
  PipelineScenario scenario;
  Topology topology;
  PipelinePlan pipeline;  // its plan is moved out when an Executor takes it
  /// Timed only because one real step is above kMaxHostFlops (scenario.h),
  /// not because timing-only was asked for.
  bool host_too_large = false;
};

/// Floating-point work of one real training step on the host (forward,
/// backward and update of the whole batch): what the simulator computes
/// unless timing-only.
double PipelineHostFlops(const PipelineParams& params);

/// Every check (backend, stages against the topology's GPUs, the pipeline's
/// own checks) without building the plan.
void CheckPipelineScenario(const PipelineScenario& scenario, const Topology& topology);

std::unique_ptr<PreparedPipeline> PreparePipeline(const PipelineScenario& scenario);
std::unique_ptr<PreparedPipeline> PreparePipeline(const PipelineScenario& scenario,
                                                  const Topology& topology);

/// The trained model against the double-precision MlpBoundedReference
/// after one step: every gradient, updated parameter and the loss within
/// its bound (engine/verify/mlp_bounds.h).
struct PipelineCheck {
  bool checked = false;
  std::string not_checked_reason;  // "timing only: ..."
  bool correct = false;            // verdict.correct()
  Verdict verdict;
  /// For display: largest |pipelined − reference| over a tensor (beyond
  /// what Adam's sign switches allow), divided by the tensor's largest
  /// |reference| value (the verdict judges each element against its own
  /// bound instead).
  double gradient_error = 0;
  double weight_error = 0;
  std::string worst_tensor;        // the verdict's: "dw3 (stage 1)"
  double loss = 0;                 // Σ of the micro-batch losses
  double reference_loss = 0;
};

struct PipelineOutcomeSummary {
  PipelineMetrics metrics;
  PipelineCheck check;
  int steps = 0;
  std::size_t events = 0;
};

/// Metrics from `events`; unless timing-only, the result read from the
/// backend checked against MlpReference. `ran` is the plan the backend ran
/// when it was moved out of prepared.pipeline.plan; null means that plan.
PipelineOutcomeSummary SummarizePipeline(const PreparedPipeline& prepared,
                                         std::span<const Event> events, const Backend& backend,
                                         const Plan* ran = nullptr);

}  // namespace shardlab
