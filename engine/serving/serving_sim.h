// A timing-only serving simulation: requests (arrivals.h) go round-robin to
// k replicas (the router); each replica runs steps as its batching policy
// decides (batcher.h), each step timed by a cost function (step_cost.h),
// its KV cache paged (kv_cache.h). No arithmetic: 10,000 requests simulate
// in well under a second.
//
//   per replica:  queue ──DecideBatch──► slots ──step (prefill of newcomers + one
//                 decode token each)──► tokens; a finished request frees its slot
//                 (continuous) or waits for its batch (static, dynamic)
//
//   TTFT  = first token − arrival        (the prefill step's end)
//   TPOT  = (last token − first token) / (output − 1)
//   E2E   = last token − arrival
//   tokens/s = output tokens / (last token − first arrival)
//   busy = Σ step time / (replicas × makespan); useful = real tokens / computed tokens
//
// Admission reserves a request's whole length (prompt + output; a static
// batch's padded length) in the KV cache, so no request is ever preempted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/units.h"
#include "engine/serving/arrivals.h"
#include "engine/serving/batcher.h"
#include "engine/serving/step_cost.h"

namespace shardlab {

struct ServingConfig {
  BatcherConfig batcher;
  int replicas = 1;
  std::int64_t kv_blocks = 1 << 20;  // per replica (every GPU of it holds its share)
  int kv_block_tokens = 16;
  bool record_steps = false;         // keep every step (for the app's view; small runs)
};

struct ServedRequestTiming {
  int id = 0, replica = 0;
  TimeNs arrival_ns = 0, admitted_ns = 0, first_token_ns = 0, finish_ns = 0;
  int prompt = 0, output = 0;
  TimeNs ttft_ns() const { return first_token_ns - arrival_ns; }
  TimeNs e2e_ns() const { return finish_ns - arrival_ns; }
  double tpot_ns() const {
    return output > 1 ? static_cast<double>(finish_ns - first_token_ns) / (output - 1) : 0.0;
  }
};

struct ServingStepRecord {
  int replica = 0;
  TimeNs start_ns = 0, end_ns = 0;
  StepWork work;
  int running = 0;              // unfinished requests in the slots (a static batch's finished ones hold theirs idle)
  int queued = 0;               // arrived and waiting when the step began
  std::int64_t kv_blocks = 0;   // used after admission
  std::vector<int> batch;       // the requests in the slots (record_steps)
  std::vector<int> prefilling;  // of them, those whose prefill this step runs
};

struct Percentiles {
  double p50 = 0, p99 = 0, mean = 0;
};

struct ServingResult {
  BatchingPolicy policy = BatchingPolicy::kContinuous;
  std::vector<ServedRequestTiming> requests;
  std::vector<ServingStepRecord> steps;  // record_steps only
  std::int64_t step_count = 0;
  TimeNs makespan_ns = 0;                // first arrival to last token
  double tokens_per_s = 0;               // output tokens / makespan
  Percentiles ttft_ns, tpot_ns, e2e_ns;
  double busy = 0;                       // Σ step time / (replicas × makespan)
  double useful = 0;                     // real tokens / computed tokens (padding wastes the rest)
  std::int64_t computed_tokens = 0, padded_tokens = 0;
  std::int64_t peak_kv_blocks = 0;       // the most any replica used at once
  double kv_occupancy = 0;               // positions held / positions the used blocks hold, at the peak
  /// Steps that began with a free slot while a request that would fit the
  /// KV cache waited (continuous batching: always 0).
  std::int64_t idle_slot_steps = 0;
};

using StepCostFn = std::function<TimeNs(const StepWork&)>;

/// Throws Error(kInvalidInput) "replicas: ", "max-batch: ", "kv-cache:
/// request N needs B blocks (prompt + output tokens), the cache holds M"
/// when one request cannot fit even an empty cache.
ServingResult SimulateServing(const std::vector<RequestArrival>& requests, const ServingConfig& config,
                              const StepCostFn& step_ns);

/// Nearest-rank percentiles of `values`.
Percentiles PercentilesOf(std::vector<double> values);

}  // namespace shardlab
