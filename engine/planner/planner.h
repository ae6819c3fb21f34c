// The 3D-parallel planner: every way to lay a transformer over N GPUs as
// data × pipeline × tensor parallel (× ZeRO stage, micro-batch size,
// interleaving, recomputation), the ones that fit ranked by an analytic
// step time, the others with the reason they were rejected.
//
//   rank = tp_index + tp · (dp_index + dp · pp_index)      (ParallelGrid: Megatron's order)
//   GPUs 0..N−1 of the topology: a TP group is tp consecutive GPUs (inside a
//   box when tp ≤ GPUs per box), DP replicas next, pipeline stages outermost.
//
// Checks, in this order (the first that fails is the reason):
//   tp divides the heads and the MLP width    pp divides the layers
//   the TP group stays on one host or on NVLink (else its all-reduces,
//     2 per layer forward and 2 backward, would cross InfiniBand)
//   dp · b divides the global batch           v > 1: pp > 1, pp·v divides
//   the layers, pp divides m (Megatron's interleaved schedule)
//   the busiest stage's memory (memory_estimate.h) ≤ usable share of the GPU
//
// Step time (one optimizer step), per GPU on the slowest stage:
//   slot       = compute(b sequences through L/p layers) / (peak · efficiency)
//                + TP all-reduces: 4 per layer (6 with full recompute) of s·b·h
//                  fp16 bytes, ring over the TP group's links
//   pipeline   = (m + (p − 1)/v) · slot                    bubble (p−1)/(v·m)
//              + 2·(v·m + p − 1) activation sends of s·b·h·2/t bytes
//   DP / ZeRO  = ring over the DP group's links of the stage's fp16 gradients:
//                0: all-reduce, hidden behind the last micro-batch's backward
//                1: reduce-scatter hidden so; the parameter all-gather exposed
//                2: a reduce-scatter per micro-batch (hidden behind its
//                   backward), the all-gather exposed
//                3: per micro-batch 2 parameter all-gathers + a reduce-scatter,
//                   hidden behind that micro-batch's compute where they fit
//   MFU        = model FLOPs (3 × forward, no recompute) / (step · N · peak)
// Every group of a kind runs at once, so a group's bandwidth is its ring's
// share of the links it crosses (group_bandwidth.h). The model ignores the
// optimizer step, kernel launch gaps and imperfect overlap: it ranks
// layouts; it does not promise their absolute time.
#pragma once

#include <string>
#include <vector>

#include "engine/model/memory_estimate.h"
#include "engine/model/model_presets.h"
#include "engine/topology/topology.h"

namespace shardlab {

struct PlannerRequest {
  TransformerShape model;      // its global_batch is the batch planned for
  int gpus = 0;                // the first `gpus` GPUs of the topology
  Bytes gpu_memory_bytes = 0;  // 0: the GPU's own figure
  /// Share of GPU memory the estimate may fill; the rest is left to the
  /// CUDA context, NCCL and gradient buffers, and fragmentation.
  double usable_memory_fraction = 0.9;
  /// Achieved share of the GPU's dense fp16 peak in the matmuls.
  double compute_efficiency = 0.5;
  std::vector<int> zero_stages = {0, 1, 2, 3};
  std::vector<int> micro_batch_sizes = {1, 2, 4, 8};
  std::vector<int> interleaves = {1, 2, 3, 4};
  std::vector<Recompute> recomputes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  int optimizer_k_bytes = 12;
};

enum class RejectReason {
  kTpSplitsHeads,      // tp does not divide the heads or the MLP width
  kPpSplitsLayers,     // pp does not divide the layers
  kTpCrossesNode,      // the TP group leaves its host for a non-NVLink route
  kBatchNotDivisible,  // dp · b does not divide the global batch
  kInterleaveInvalid,  // v does not divide the stage's layers, or pp ∤ m
  kOutOfMemory,        // the busiest stage does not fit
};

/// "tp does not divide heads", ..., for grouping in reports.
const char* RejectReasonName(RejectReason reason);

struct StepTimeEstimate {
  TimeNs step_ns = 0;
  TimeNs compute_ns = 0;     // m · slot compute (busy matmuls on the slowest stage)
  TimeNs bubble_ns = 0;      // (p − 1)/v idle slots
  TimeNs tp_comm_ns = 0;     // TP all-reduces on the critical path
  TimeNs pp_comm_ns = 0;     // activation and gradient sends between stages
  TimeNs dp_comm_ns = 0;     // DP / ZeRO traffic, whole
  TimeNs dp_exposed_ns = 0;  // the part not hidden behind compute
  Gbps tp_gbps = 0, pp_gbps = 0, dp_gbps = 0;  // the groups' bandwidth under load
  double mfu = 0;                              // model FLOPs utilisation
  double comm_share() const {
    return step_ns > 0 ? double(tp_comm_ns + pp_comm_ns + dp_exposed_ns) / step_ns : 0;
  }
};

struct PlanCandidate {
  ParallelLayout layout;
  /// How far the candidate got: a layout rejected before its batch split
  /// is reported once, with micro_batch, interleave and zero_stage 0.
  bool expanded = true;
  bool feasible = false;
  RejectReason reason = RejectReason::kOutOfMemory;
  std::string detail;     // "tp 16 spans hosts 0-1 over InfiniBand", "needs 93.1 GB > 72 GB"
  MemoryEstimate memory;  // when expanded
  StepTimeEstimate time;  // when feasible
};

struct PlannerResult {
  std::vector<PlanCandidate> feasible;  // fastest first; ties in layout order
  std::vector<PlanCandidate> rejected;  // in enumeration order
  double usable_memory_bytes = 0;
  double gpu_memory_bytes = 0;
  double peak_flops = 0;  // per GPU, dense fp16
  int gpus_per_host = 0;  // of the first GPU's host
  std::string gpu_model;
  std::string time_model = "analytic";  // how step times were obtained
};

/// Plans `request` on `topology`. Throws Error(kInvalidInput) naming the
/// field when the request cannot be planned at all: "gpus: ...", "model: ...",
/// "gpu-memory: ...", "topology: ...".
PlannerResult PlanParallelLayouts(const PlannerRequest& request, const Topology& topology);

/// Strict weak order of the ranking: step time, then fewer GPUs per model
/// copy (smaller tp, then smaller pp), then lower ZeRO stage, larger b,
/// smaller v, less recomputation. Exposed for tests.
bool RanksBefore(const PlanCandidate& a, const PlanCandidate& b);

}  // namespace shardlab
