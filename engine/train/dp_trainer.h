// Data-parallel training of the small MLP with the training techniques, on
// the host with real arithmetic, step by step; the loss curve, the bytes
// each step sends and every technique's own record come back. The plan
// that times the same run on the simulator is dp_train_plan.h.
//
//   sync   every step: each rank's K micro-batches (grad_accumulation.h,
//          recompute.h, fp16 + loss scale or bf16: loss_scale.h), the
//          flag's all-reduce (fp16), the gradients' all-reduce (compression.h),
//          the update (SGD; fp32 master weights)
//   local  `local_steps` H > 1: local SGD (local_sgd.h)
//   ssp    `staleness` S > 0: stale-synchronous SGD with a parameter
//          server, ranks at their own speed (local_sgd.h)
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/units.h"
#include "engine/model/mlp.h"
#include "engine/train/compression.h"
#include "engine/train/local_sgd.h"
#include "engine/train/loss_scale.h"
#include "engine/train/mlp_pass.h"

namespace shardlab {

struct DpTrainConfig {
  MlpConfig model;              // SGD; batch = the global batch B
  int ranks = 4;
  int steps = 20;
  int accumulate = 1;           // K
  std::vector<bool> recompute;  // [layer]; empty: none
  /// fp32; fp16 mixed precision with a dynamic loss scale; bf16 mixed
  /// precision, which needs no loss scale (loss_scale.h).
  DType precision = DType::kF32;
  LossScaleConfig loss_scale;
  int overflow_rank = -1;       // a bad batch: rank R's gradient gets an inf ...
  int overflow_step = -1;       // ... at this step
  CompressionConfig compression;
  int local_steps = 1;          // H
  int staleness = 0;            // S; > 0: stale-synchronous
  std::vector<double> step_time;  // [rank]: SSP's relative step time (empty: all 1)
  std::uint64_t seed = 1;
  bool mixed() const { return precision != DType::kF32; }  // fp16 or bf16 working copies
  bool loss_scaled() const { return precision == DType::kF16; }
};

/// Throws Error(kInvalidInput) naming the field ("accumulate: ",
/// "local_steps: ", "staleness: ", "overflow: ", "compress: ", ...).
void CheckDpTrainConfig(const DpTrainConfig& config);

struct DpTrainResult {
  std::vector<double> loss;          // [step]: the batch's loss before the step's update
  double final_loss = 0;             // after the last step
  std::vector<char> skipped;         // [step]: the update was skipped (overflow)
  std::vector<double> scale;         // [step]: the loss scale the step used
  std::vector<char> overflow_rank;   // [step * ranks + r]: rank r's own flag
  std::vector<char> communicated;    // [step]: the step all-reduced (local SGD: averaged)
  std::vector<Bytes> bytes;          // [step]: bytes the busiest rank sent
  int nonfinite_updates = 0;         // updates that wrote an inf or NaN (must stay 0)
  std::vector<MlpParams> params;     // [rank]: after the run (sync, ssp: all the same)
  MlpParams first_gradient;          // sync: step 0's all-reduced, unscaled gradient
  /// fp16 / int8: the largest |compressed sum − exact sum| / bound over
  /// every element and step (≤ 1 when the bound holds); 0 otherwise.
  double compression_error_ratio = 0;
  std::int64_t recompute_flops = 0;  // rank 0, the whole run
  std::vector<StaleStep> stale;      // ssp: every rank's steps, in start order
  int max_staleness = 0;
  double makespan = 0;               // ssp: in step times
  int skipped_steps() const;
  Bytes total_bytes() const;
};

DpTrainResult RunDpTraining(const DpTrainConfig& config);

}  // namespace shardlab
