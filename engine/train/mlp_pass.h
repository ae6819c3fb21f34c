// One rank's forward and backward of the small MLP (engine/model/mlp.h)
// over some rows of the batch, on the host, with the switches the training
// techniques need: gradients added into an accumulator (accumulation),
// layers whose pre-activation is recomputed (recompute.h), fp16 rounding at
// every op's output and a loss scale (loss_scale.h).
//
//   MlpParams ──► forward (rows r0 .. r0+b) ──► loss, dL/dy·scale
//       grads += backward (dW in double over the rows, stored as float)
//
// The loss and its gradient are those of the whole batch: Σ‖y − t‖²/(2B)
// with B = MlpConfig::batch, so gradients of all micro-batches of all
// ranks add up to the batch's gradient (MlpReference).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/op_kinds.h"
#include "engine/model/mlp.h"

namespace shardlab {

/// Weights and biases of every layer (or their gradients), float.
struct MlpParams {
  std::vector<std::vector<float>> w, b;  // [layer]: H×H, H
  /// Same shape, all zero.
  static MlpParams ZerosLike(const MlpConfig& model);
  /// The initial parameters (MlpInitValue), as MlpReference starts.
  static MlpParams Initial(const MlpConfig& model, std::uint64_t seed);
  std::int64_t size() const;  // Ψ
  /// Element i of the flat space W0, b0, W1, b1, ... (ZeroLayerOffset's order).
  float& at(std::int64_t i);
  float at(std::int64_t i) const;
  /// Flat copy and back.
  std::vector<float> Flat() const;
  void SetFlat(const std::vector<float>& flat);
};

/// The whole batch's inputs and targets (B×H each), as MlpReference has them.
struct MlpData {
  std::vector<float> input, target;
  static MlpData Of(const MlpConfig& model, std::uint64_t seed);
};

struct PassOptions {
  std::vector<bool> recompute;   // [layer] (empty: none)
  /// fp16 or bf16: every op's output is rounded to it; fp32: none is.
  DType working = DType::kF32;
  float loss_scale = 1.0f;       // dL/dy is multiplied by it
  /// The loss's divisor: the batch the gradient is a mean over (0: model.batch).
  int loss_rows = 0;
};

struct PassResult {
  double loss = 0;               // these rows' share of the loss
  std::int64_t recompute_flops = 0;
};

/// Forward and backward over rows [row0, row0 + rows) of `data`; adds the
/// gradients into `grads` (float, in layer order).
PassResult MlpForwardBackward(const MlpConfig& model, const MlpParams& params, const MlpData& data,
                              int row0, int rows, const PassOptions& options, MlpParams* grads);

/// The loss Σ‖y − t‖²/(2B) of the whole batch under `params` (fp32 forward).
double MlpBatchLoss(const MlpConfig& model, const MlpParams& params, const MlpData& data);

}  // namespace shardlab
