// InferenceScenario: serving a small decoder on several GPUs, from named
// parameters to two results that agree on the layout:
//
//   InferenceScenario {model, layout tp × pp × replicas, arrivals or a request
//                      file, batching, KV cache per GPU, topology}
//     │ RunInference
//     ├─► the real run: the first check_requests requests' prefill and decode
//     │   as a Plan (decode_plan.h) on the simulator, every logit against the
//     │   single-device decoder, its all-reduces counted and timed
//     └─► the serving simulation (serving_sim.h) of every request, timing
//         only, per batching policy (or all three on the same arrivals),
//         each step timed by the cost model (step_cost.h) whose α and B are
//         the topology's ring, as the tp scenario's formula
//
// Errors are shardlab::Error (kInvalidInput) whose message starts with the
// field: "tp: ", "pp: ", "replicas: ", "heads: ", "layers: ", "rate: ",
// "requests: ", "kv-cache: ", "batching: ", "requests-file: " (or
// "FILE:LINE:FIELD: "), "topology: ", "dtype: ".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/algorithms/decode_plan.h"
#include "engine/core/event.h"
#include "engine/scenarios/report.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/serving/serving_sim.h"
#include "engine/verify/verdict.h"

namespace shardlab {

struct InferenceScenario {
  DecoderConfig model;               // the small decoder the real run computes
  /// What the serving simulation times: "small" (the decoder above, in
  /// dtype) or a model preset's shape (model_presets.h) in fp16.
  std::string serve_model = "small";
  ServingLayout layout;
  int microbatches = 1;              // the real run's, per replica (pp > 1)
  ArrivalSpec arrivals;
  std::string requests_file;         // "" : the seeded arrivals
  BatcherConfig batcher;
  bool all_policies = false;         // static, dynamic and continuous on the same arrivals
  Bytes kv_cache_bytes = 0;          // per GPU; 0: 90% of the GPU's memory less the weights
  int kv_block_tokens = 16;
  DType dtype = DType::kF32;
  std::string topology = "dgx-a100";
  bool timing_only = false;          // skip the real run
  int check_requests = 4;
  std::uint64_t seed = 1;
  bool record_steps = false;         // keep the serving steps (the app's view)
  bool int8_weights = false;         // the served model's matrices in int8, per-channel scales
};

/// Int8 decode weights (quantize.h): what they save and what they cost.
struct Int8Report {
  Bytes weight_bytes_fp = 0, weight_bytes_int8 = 0;  // per GPU, the served model
  TimeNs decode_fp_ns = 0, decode_int8_ns = 0;       // one decode token at batch 1 (cost model)
  double speedup = 0;                                // decode_fp / decode_int8
  bool accuracy_checked = false;                     // the real run's requests, small decoder
  double logit_error = 0;                            // max |int8 − fp| / max |fp| over every logit
  double top1_agreement = 0;                         // positions whose argmax agrees
  int positions = 0;
};

InferenceScenario InferenceFromParams(const ScenarioParams& params);

struct InferenceCheck {
  bool checked = false;
  std::string not_checked_reason;
  Verdict verdict;
  int requests = 0;                  // run for real
  int passes = 0;
  int allreduces = 0;                // in the plan
  int allreduces_expected = 0;       // 2 · layers · passes · micro-batches... (hand count)
  bool allreduce_bytes_ok = false;   // every one T × H × dtype
  TimeNs decode_allreduce_ns = 0;    // mean span of a decode all-reduce, from the events
  TimeNs decode_allreduce_formula_ns = 0;  // the ring formula at the same T
  std::int64_t decode_allreduce_tokens = 0;
  Bytes kv_cache_bytes_per_gpu = 0;  // the plan's K and V buffers, rank 0
  Bytes kv_cache_tracked_bytes = 0;  // the memory tracker's peak of them on rank 0 (-1: no tracker)
};

struct InferenceRun {
  InferenceScenario scenario;
  DecoderConfig served;              // the model the serving simulation times
  StepCostModel cost;
  std::vector<RequestArrival> arrivals;
  Bytes kv_cache_bytes = 0;          // per GPU, "auto" resolved
  std::int64_t kv_blocks = 0;        // per replica
  Bytes kv_bytes_per_block = 0;      // per GPU
  std::vector<ServingResult> results;  // the chosen policy, or static, dynamic, continuous
  InferenceCheck check;
  /// With a shared prefix: the last policy's KV peak (blocks per replica)
  /// when every request holds its prefix itself; -1 without a prefix.
  std::int64_t kv_peak_unshared_blocks = -1;
  Int8Report int8;                   // int8_weights only
  /// The real run's plan and events (a trace of them shows its all-reduces
  /// on the Gantt and topology views); empty when not run.
  Plan real_plan;
  std::vector<Event> real_events;
  // The cost model's steps, for the lesson: one decode token at batch 1 and
  // at max_batch, one prompt of prompt_mean tokens.
  StepCostModel::Parts decode_1, decode_batch, prefill_1;
  const ServingResult* Find(BatchingPolicy policy) const;
};

/// Checks everything first (layout against the topology, the model, the
/// arrivals, that one request fits the KV cache), then runs.
InferenceRun RunInference(const InferenceScenario& scenario);

/// A run's report: the setup and the real run's check before the cost
/// model's table (position 0), the cost model's notes after it (1), the
/// notes under the serving table (2), and every --json field.
Report InferenceReport(const InferenceRun& run);

/// The spec's measured quantities of a run.
std::map<std::string, double> InferenceMeasured(const InferenceRun& run);

}  // namespace shardlab
