// The plan that times a data-parallel training run (dp_trainer.h) on the
// simulator: per rank and step, K micro-batches of forward (F), recompute
// (R) and backward (B) per layer, the overflow flag's one-element
// all-reduce, the gradients' all-reduce (or the compressed wire format's,
// or top-k's all-gather), the update; local SGD averages the parameters
// every H steps; stale-synchronous steps wait only for the step S behind.
//
//   rank 0  F0 F1 F2 F3 | R2 B3 B2 R1 B1 ... | flag | AR grads | SGD |
//   rank 1  ...
//
// The arithmetic was done by RunDpTraining; the plan carries what that
// run decided (skipped steps, averaging steps), the shapes and the bytes,
// so the simulator runs it timing-only. Activations are transient buffers,
// one per micro-batch, layer and kind (z, a, y, dL/d·), so the simulator's
// MemoryTracker measures the peak recompute.h's formula gives.
#pragma once

#include <string>

#include "engine/plan/plan.h"
#include "engine/train/dp_trainer.h"

namespace shardlab {

struct DpTrainPlan {
  Plan plan;
  int steps = 0;  // training steps laid out (the run's first few)
};

/// The first `steps` steps of `config`'s run (its outcome `result`).
DpTrainPlan BuildDpTrainPlan(const DpTrainConfig& config, const DpTrainResult& result, int steps);

}  // namespace shardlab
