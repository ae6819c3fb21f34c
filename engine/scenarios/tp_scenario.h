// TpScenario: one tensor-parallel layer (Megatron), from named parameters to
// a runnable plan, and from its events to the compute/communication split,
// the all-reduces counted, and a check against the single-device layer.
// Shared by the CLI and the app.
//
//   TpScenario {layer (kind, B, S, H, F, heads, tp, SP, dtype), topology}
//        │ PrepareTp: load topology, check, BuildTpLayer
//        ▼
//   PreparedTp {scenario, topology, layer (plan, blocks, collectives)}
//        │ Executor(backend) ... events          rank r on GPU r
//        ▼
//   SummarizeTp -> TpMetrics (step, compute, communication, each
//   collective's bytes and time) and, unless timing-only, every output and
//   gradient block against TpLayerReference
//
// Errors are shardlab::Error (kInvalidInput) whose message starts with the
// field: "layer: ", "batch: ", "seq: ", "hidden: ", "ffn: ", "heads: ",
// "tp: ", "sequence-parallel: ", "dtype: ", "topology: ", "backend: ".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/algorithms/collective_cost.h"
#include "engine/algorithms/tensor_parallel.h"
#include "engine/core/event.h"
#include "engine/run/backend.h"
#include "engine/topology/topology.h"
#include "engine/verify/verdict.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

struct TpScenario {
  TpLayerConfig layer;
  std::string topology = "dgx-a100";  // preset name or file path; rank r on GPU r
  std::string backend = "sim";
  std::uint64_t seed = 1;
  bool timing_only = false;
};

/// The scenario the "tp" spec's parameters describe (backend "sim", seed 1).
/// heads 0: H/128 when H is a multiple of 128, else 4 (attention layers;
/// none for the others).
TpScenario TpFromParams(const ScenarioParams& params);

struct PreparedTp {
  TpScenario scenario;
  Topology topology;
  TpLayerPlan layer;  // its plan is moved out when an Executor takes it
};

/// Every check (backend, tp against the topology's GPUs, fp16 only when
/// timing-only, the layer's own checks) without building the plan.
void CheckTpScenario(const TpScenario& scenario, const Topology& topology);

/// Host memory a real (not timing-only) run of `config` would hold, about;
/// CheckTpScenario rejects real runs above TpMaxRealRunBytes().
double TpRealRunHostBytes(const TpLayerConfig& config);
double TpMaxRealRunBytes();

std::unique_ptr<PreparedTp> PrepareTp(const TpScenario& scenario);
std::unique_ptr<PreparedTp> PrepareTp(const TpScenario& scenario, const Topology& topology);

struct TpCollectiveTiming {
  TpCollective collective;
  Bytes tensor_bytes = 0;     // T × H × dtype: the seed's "Data_Size"
  Bytes sent_per_rank = 0;    // from the events; the most any rank sent
  TimeNs span_ns = 0;         // first op start to last op end, from the events
  int events = 0;
};

struct TpMetrics {
  int tp = 0;
  TimeNs step_ns = 0;      // forward + backward of the layer, first event to last
  TimeNs compute_ns = 0;   // the busiest rank's compute time
  /// Time during which some collective is running: the union of the
  /// collectives' spans (with sequence parallelism a fast rank may start
  /// the next one while a slow one finishes the last, so they can overlap).
  TimeNs comm_ns = 0;
  double comm_share = 0;   // comm_ns / step_ns, at most 1
  std::vector<TpCollectiveTiming> collectives;
  int forward_allreduces = 0;   // counted from the events (an RS + AG pair counts once)
  int backward_allreduces = 0;
};

/// Metrics from the events of a run of `layer` (whose plan is `plan`).
TpMetrics MeasureTp(const TpLayerPlan& layer, const Plan& plan, std::span<const Event> events);

/// Every output and gradient block against the double-precision layer,
/// each element within its bound (engine/verify/tp_bounds.h).
struct TpCheck {
  bool checked = false;
  std::string not_checked_reason;  // "timing only: ..."
  bool correct = false;            // verdict.correct()
  Verdict verdict;
  /// For display: largest |split − reference| over a block, divided by the
  /// largest |reference| value of that block (at least 0.1), over all
  /// output and gradient blocks.
  double output_error = 0;
  double gradient_error = 0;
  std::string worst_tensor;        // the verdict's: "dWq (rank 2)"
  int blocks_checked = 0;
};

struct TpSummary {
  TpMetrics metrics;
  TpCheck check;
  int steps = 0;
  std::size_t events = 0;
};

/// Metrics from `events`; unless timing-only, every output and gradient
/// block read from the backend against TpLayerReference. `ran` is the plan
/// the backend ran when it was moved out of prepared.layer.plan; null
/// means that plan.
TpSummary SummarizeTp(const PreparedTp& prepared, std::span<const Event> events,
                      const Backend& backend, const Plan* ran = nullptr);

/// The seed text's all-reduce estimate for the scenario's T × H tensor:
/// ring 2(n−1)/n · M / B + 2(n−1)·α, with B and α of the slowest hop of the
/// rank-order ring of GPUs 0..tp−1 on the topology. `text` spells it out.
struct TpAllReduceFormula {
  TimeNs ns = 0;
  Gbps bandwidth_gbps = 0;
  TimeNs alpha_ns = 0;
  std::string text;
};
TpAllReduceFormula TpAllReduceEstimate(const TpScenario& scenario, const Topology& topology);
// The same formula at a bandwidth the caller names (the seed's 600 GB/s):
// RingAllReduceNs (engine/algorithms/collective_cost.h).

/// The NVLink 3 figure the seed text puts in the ring formula: an A100's
/// two directions added (a ring sends each byte one way, 300 GB/s).
inline constexpr Gbps kSeedNvlink3Gbps = 600;

/// "all-reduce", "reduce-scatter", "all-gather".
const char* TpCollectiveKindName(GroupCollectiveKind kind);

/// One row of a scaling table: the layer at tp = N, timing-only on the
/// simulator, against the same layer on one GPU of the topology.
struct TpScalingRow {
  int tp = 0;
  TpMetrics metrics;
  TimeNs single_device_ns = 0;  // the layer at tp = 1 on GPU 0
  double speedup = 0;           // single / step
  double efficiency = 0;        // speedup / tp
  bool crosses_nodes = false;   // GPUs 0..tp−1 span more than one host
  int hosts = 1;                // hosts GPUs 0..tp−1 sit in
  Gbps ring_gbps = 0;           // slowest hop of the rank-order ring (0 at tp 1)
};

/// Runs `scenario` (forced timing-only, backend sim) at each tp in `tps`.
/// Every tp is checked before anything runs: throws Error "tp: ..." (or
/// the layer's field) when one does not fit the topology or split the
/// layer.
std::vector<TpScalingRow> RunTpScaling(const TpScenario& scenario, const std::vector<int>& tps);

}  // namespace shardlab
