// The serving view's model: one served run per batching policy (the same
// arrivals), each request a row of three segments on one time axis shared
// by every policy, so static and continuous batching can be compared at a
// glance; and the numbers the metrics panel shows beside their formulas.
//
//   request 7   |··queued··|▓prefill▓|==== decode ====|        (static: waits for its batch,
//   request 8      |queued|▓|=== decode ===|                      padded to the longest)
//               0 ─────────────────── shared axis ──────────────► makespan of the slowest
//
// Pure: built from engine/scenarios/inference_scenario.h's InferenceRun.
#pragma once

#include <string>
#include <vector>

#include "engine/core/units.h"
#include "engine/scenarios/inference_scenario.h"

namespace shardlab::gui {

struct ServingRow {
  int request = 0;
  int replica = 0;
  TimeNs arrival_ns = 0, admitted_ns = 0, first_token_ns = 0, finish_ns = 0;
};

struct ServingLane {
  std::string policy;             // "static", "dynamic", "continuous"
  std::vector<ServingRow> rows;   // by arrival, then id
  TimeNs makespan_ns = 0;
  double tokens_per_s = 0;
  double e2e_p50_ns = 0, e2e_p99_ns = 0, ttft_p50_ns = 0;
  double useful = 0;              // real tokens / computed tokens
  /// KV blocks in use after each step's admission, per replica 0: (step start, blocks).
  std::vector<std::pair<TimeNs, std::int64_t>> kv_blocks;
};

struct ServingChart {
  std::vector<ServingLane> lanes;  // in the run's order (static, dynamic, continuous)
  TimeNs axis_end_ns = 0;          // the latest finish over every lane
  std::int64_t kv_blocks_per_replica = 0;
};

/// The chart of a run's served policies (empty when it served none).
ServingChart BuildServingChart(const InferenceRun& run);

/// "continuous: 8,857 tok/s, E2E p50 0.99 s — 1.43x static's throughput":
/// the sentence the view ends with; "" with fewer than two policies.
std::string ServingVerdict(const ServingChart& chart);

}  // namespace shardlab::gui
