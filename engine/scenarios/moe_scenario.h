// MoeScenario: one expert-parallel MoE layer, from named parameters to a
// runnable plan, and from its events to the load per expert and rank, the
// all-to-all bytes beside the hand count, the step split and the straggler,
// and a check against the single-device layer. Shared by the CLI and tests.
//
//   MoeScenario {layer (N, E, k, T, H, F, capacity factor, skew), topology}
//        │ PrepareMoe: load topology, check, route on the host, BuildMoeLayer
//        ▼
//   PreparedMoe {scenario, topology, layer (plan, routing)}
//        │ Executor(backend) ... events          rank r on GPU r
//        ▼
//   SummarizeMoe -> MoeMetrics and, unless timing-only, y and the gates of
//   every rank against MoeLayerReference
//
// Errors are shardlab::Error (kInvalidInput) whose message starts with the
// field: "ranks: ", "experts: ", "top-k: ", "tokens: ", "hidden: ", "ffn: ",
// "capacity-factor: ", "skew: ", "assignment: ", "topology: ", "backend: ".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/algorithms/moe.h"
#include "engine/core/event.h"
#include "engine/run/backend.h"
#include "engine/topology/topology.h"
#include "engine/verify/verdict.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

struct MoeScenario {
  MoeLayerConfig layer;
  std::string topology = "dgx-a100";  // preset name or file path; rank r on GPU r
  std::string backend = "sim";
  std::uint64_t seed = 1;
  bool timing_only = false;
};

/// The scenario the "moe" spec's parameters describe (backend "sim", seed 1).
MoeScenario MoeFromParams(const ScenarioParams& params);

struct PreparedMoe {
  MoeScenario scenario;
  Topology topology;
  MoeLayerPlan layer;  // its plan is moved out when an Executor takes it
};

/// Every check (backend, ranks against the topology's GPUs, the layer's
/// own checks, host memory of a real run, host work of the router's
/// routing) without building anything.
void CheckMoeScenario(const MoeScenario& scenario, const Topology& topology);

std::unique_ptr<PreparedMoe> PrepareMoe(const MoeScenario& scenario);
std::unique_ptr<PreparedMoe> PrepareMoe(const MoeScenario& scenario, const Topology& topology);

struct MoeRankMetrics {
  std::int64_t rows = 0;        // rows its experts computed (from the routing)
  TimeNs expert_ns = 0;         // its expert ops' time, from the events
  Bytes dispatch_sent = 0, dispatch_received = 0;  // from the events
  Bytes combine_sent = 0, combine_received = 0;
};

struct MoeMetrics {
  TimeNs step_ns = 0;  // first event to last
  /// The step cut where each phase's last op ends on any rank, so the four
  /// add up to step_ns: router (x·Wr, gates), dispatch (pack + all-to-all),
  /// experts (until the slowest rank's experts finish), combine (all-to-all
  /// back + weighted sum).
  TimeNs router_ns = 0, dispatch_ns = 0, experts_ns = 0, combine_ns = 0;
  std::vector<MoeRankMetrics> ranks;
  int straggler = -1;              // the rank with the longest expert time
  double straggler_load = 0;       // its rows / the mean rows per rank
  double straggler_time = 0;       // its expert time / the mean expert time
  int transfers = 0;               // send events of both all-to-alls
};

/// Metrics from the events of a run of `layer` (whose plan is `plan`).
MoeMetrics MeasureMoe(const MoeLayerPlan& layer, const Plan& plan, std::span<const Event> events);

/// Every rank's outputs and gates against the double-precision reference,
/// each element within its bound (engine/verify/moe_bounds.h).
struct MoeCheck {
  bool checked = false;
  std::string not_checked_reason;  // "timing only: ..."
  bool correct = false;            // verdict.correct()
  Verdict verdict;
  /// For display: largest |plan − reference| over y (and over the gates),
  /// divided by the largest |reference| value.
  double output_error = 0;
  double gate_error = 0;
  int worst_rank = -1;             // the rank of the verdict's worst tensor
};

struct MoeSummary {
  MoeMetrics metrics;
  MoeAllToAllBytes expected;  // the hand count, from the routing
  bool bytes_match = false;   // every rank's measured bytes equal `expected`
  MoeCheck check;
  int steps = 0;
  std::size_t events = 0;
};

/// Metrics, the hand count beside them, and unless timing-only the check
/// of every rank's y and gates against MoeLayerReference. `ran` is the
/// plan the backend ran when it was moved out of prepared.layer.plan; null
/// means that plan.
MoeSummary SummarizeMoe(const PreparedMoe& prepared, std::span<const Event> events,
                        const Backend& backend, const Plan* ran = nullptr);

}  // namespace shardlab
