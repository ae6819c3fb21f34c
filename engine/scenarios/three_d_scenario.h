// ThreeDScenario: DP × PP × TP training, from named parameters to a
// runnable plan, and from its events to the step time, its compute /
// communication split, traffic per group kind, memory per GPU, MFU and —
// for the small real model — a check against the single-device reference.
//
//   ThreeDScenario {grid, schedule, micro-batches, ZeRO, model (small MLP or
//                   a preset such as gpt3-175b), topology}
//        │ PrepareThreeD: load topology, check, build (real, or timing only)
//        ▼
//   PreparedThreeD {scenario, topology, plan, warnings}
//        │ Executor(backend) ... events
//        ▼
//   SummarizeThreeD -> ThreeDSummary
//
// Ranks sit on GPUs in order (rank r on GPU r; GPUs past the last rank stay
// idle, with a warning), so with tp ≤ GPUs per box
// each TP group stays in one box. MFU = model FLOPs of the step /
// (step time × GPUs × the GPU's peak: fp16 tensor-core for the timing-only
// transformer, fp32 for the real fp32 MLP).
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/algorithms/three_d.h"
#include "engine/run/backend.h"
#include "engine/topology/topology.h"
#include "engine/verify/verdict.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

struct ThreeDScenario {
  ParallelGrid grid;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int zero_stage = 0;
  /// "small": the real MLP (`mlp`, `microbatches`); otherwise a model
  /// preset name (model_presets.h), run timing-only at paper scale with
  /// its own batch and micro-batch.
  std::string model = "small";
  MlpConfig mlp;
  int microbatches = 2;
  int dp_buckets = 4;                   // paper scale: DP gradient buckets per rank
  int micro_batch = 0;                  // paper scale: sequences per micro-batch (0: the preset's)
  int global_batch = 0;                 // paper scale: sequences per step (0: the preset's)
  std::string topology = "dgx-a100";    // preset or file; 64x8 needs "64x-dgx-a100-ib"
  std::string backend = "sim";
  std::uint64_t seed = 1;
  bool skip_dp_reduce = false;          // tests: the broken variant
  bool timing_only() const { return model != "small"; }
};

/// The scenario the "3d" spec's parameters describe (backend "sim", seed
/// 1); lr 0: the optimizer's own. The small model's and a preset's own
/// parameters are all copied; PrepareThreeD uses those of its model.
ThreeDScenario ThreeDFromParams(const ScenarioParams& params);

struct PreparedThreeD {
  ThreeDScenario scenario;
  Topology topology;
  ThreeDPlan three_d;                   // its plan is moved out when an Executor takes it
  TransformerShape shape;               // paper scale only
  std::vector<std::string> warnings;    // "tp 16 spans 2 boxes: TP all-reduces leave NVLink"
  double model_flops = 0;               // per training step, whole model and batch
  double peak_flops_per_gpu = 0;        // FLOP/s of one GPU of the topology
};

/// Checks and builds. Errors name the field ("dp: ...", "grid: ...",
/// "model: ...", "topology: ...").
std::unique_ptr<PreparedThreeD> PrepareThreeD(const ThreeDScenario& scenario);
std::unique_ptr<PreparedThreeD> PrepareThreeD(const ThreeDScenario& scenario,
                                              const Topology& topology);

/// The small model after one step against the double-precision
/// MlpBoundedReference: every parameter and gradient shard (ZeRO-1: each
/// rank's reduced chunk) and the loss, each element within its bound
/// (engine/verify/mlp_bounds.h).
struct ThreeDCheck {
  bool checked = false;
  std::string not_checked_reason;
  bool correct = false;         // verdict.correct()
  Verdict verdict;
  /// For display: largest |got − reference| over a shard, beyond what
  /// Adam's sign switches of near-zero gradients allow (the bound's `det`),
  /// divided by the shard's largest |reference|.
  double weight_error = 0;
  double gradient_error = 0;
  std::string worst_tensor;     // the verdict's: "w3 on rank 5 (dp1 pp0 tp1)"
  double loss = 0, reference_loss = 0;
};

/// Per group kind (TP, PP, DP), indexed by GroupKind.
struct ThreeDGroupTraffic {
  Bytes max_sent_bytes_per_rank = 0;   // the busiest rank's bytes sent for that kind
  Bytes total_sent_bytes = 0;
  TimeNs max_busy_ns_per_rank = 0;     // union of that rank's send intervals of that kind
};

struct ThreeDMemory {
  double model_states_bytes = 0;       // per GPU: fp16 params + grads + K=12 optimizer state
  double activations_bytes = 0;        // per GPU, formula (paper scale) or tracked (small)
  Bytes tracked_peak_bytes = 0;        // the simulator's peak over ranks (every buffer)
};

struct ThreeDSummary {
  TimeNs step_ns = 0;
  TimeNs compute_ns = 0;        // busiest rank's compute-lane time
  TimeNs exposed_ns = 0;        // step − compute: communication and pipeline bubble not hidden
  double bubble_formula = 0;    // (p−1)/m of the schedule
  std::array<ThreeDGroupTraffic, kGroupKindCount> traffic{};
  ThreeDMemory memory;
  double mfu = 0;
  double model_flops = 0;
  ThreeDCheck check;
  std::size_t ops = 0, events = 0;
  int microbatches = 0;
};

/// Summarises a finished run; `ran` is the plan the backend ran when it was
/// moved out of prepared.three_d.plan (null: that plan).
ThreeDSummary SummarizeThreeD(const PreparedThreeD& prepared, std::span<const Event> events,
                              const Backend& backend, const Plan* ran = nullptr);

}  // namespace shardlab
