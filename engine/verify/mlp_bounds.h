// The small MLP (engine/model/mlp.h) trained in double precision, with a
// bound for every element of every tensor the training scenarios check:
// gradients of the last step, parameters after it, the loss.
//
// Each element carries σ² (bounds.h: its error is a sum of independent
// zero-mean terms, σ² the sum of their squared bounds); the judge allows
// kSigmas·σ, plus a part `det` that holds whole discrete switches. With u
// the unit round-off the backend computes in, per layer and step:
//
//   forward   z = x·W + b   (k = H + 1 terms per element)
//             σz² = (σx² + c_H·x²)·W² + (x² + σx²)·σW² + σb² + c_H·b²
//             c_k = (k + 1)·k·u²: the rounding of a length-k sum,
//                   k·u²·(Σ|t|)² ≤ k²·u²·Σt² (Cauchy–Schwarz), plus the store
//   relu      a = max(z, 0): σa = σz where z > −λσz (1-Lipschitz), else 0
//   loss      g = (y − t)/B: σg² = σy²/B² + (3u·g)²;  L: Σ g²·σy² + (B + 3)·u²·L²
//   backward  dz = g where z > 0: certain where |z| > λσz; within λσz of 0 the
//             backend's switch may differ, an error of |g| + λσg. A switch is
//             one jump, not a sum of small independent terms, so Hoeffding
//             needs its whole size: (|g| + λσg)² goes into σ² (weighting it
//             by the switch's probability under-counts a switch that does
//             happen: a sweep of 600 runs found one)
//             dW = xᵀ·dz (k = B rows, any order: micro-batches, ranks, rings)
//             σdW² = (x²)ᵀ·(σdz² + c_B·dz²) + (σx²)ᵀ·(dz² + σdz²)
//             db = Σ dz;  dx = dz·Wᵀ (k = H), as the forward
//   SGD       p −= lr·g:  σp² += lr²·σg² + (2u·(|p| + lr·|g|))²
//   Adam      m, v as the kernel; the step f(m, v) = lr·m̂/(sqrt(v̂) + ε) is
//             bounded by intervals m ± λσm, v ± λσv (f is monotone in each),
//             clamped to |m̂|/sqrt(v̂) ≤ C_t (Cauchy–Schwarz over the history:
//             C_t = (1−β1)/(1−β1^t)·sqrt((1−β2^t)/(1−β2)·Σ_j (β1²/β2)^j), 1 at
//             t = 1). Where m's interval holds 0 the step may take either
//             sign: the whole width E of the interval goes into `det` (the
//             parameter's bound in units of lr), and E² (the whole jump, as
//             for the ReLU) into the σ² that the next step's products see.
//
// No step-count special case: the bounds grow with the steps exactly as far
// as the computation says. The reference's own double rounding is below
// 1e-8 of every bound and is not counted.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/mlp.h"

namespace shardlab {

/// A tensor of the reference: values, σ² of the backend's error, and the
/// deterministic part of the bound (Adam's sign switches; zero elsewhere).
struct BoundedTensor {
  std::vector<double> value, variance, det;
  /// σ² of the switches that `det` holds: counted where the tensor feeds
  /// later computation, not in its own bound (det holds them there).
  std::vector<double> switch_variance;
  /// kSigmas·σ + det, per element.
  std::vector<double> Bound() const;
};

class MlpBoundedReference {
 public:
  /// `unit_roundoff`: of the dtype the backend computes in (bounds.h).
  MlpBoundedReference(const MlpConfig& config, std::uint64_t seed, double unit_roundoff);

  /// Forward, loss, backward over the whole batch, then one optimizer step.
  void TrainStep();

  const MlpConfig& config() const { return config_; }
  /// Parameters now (after the last step).
  const BoundedTensor& weight(int layer) const { return weights_[layer]; }
  const BoundedTensor& bias(int layer) const { return biases_[layer]; }
  /// Gradients of the last step, before its update.
  const BoundedTensor& weight_grad(int layer) const { return weight_grads_[layer]; }
  const BoundedTensor& bias_grad(int layer) const { return bias_grads_[layer]; }
  /// Loss of the last step (Σ‖y − t‖²/2B) and its bound.
  double loss() const { return loss_; }
  double loss_bound() const;
  int steps() const { return steps_; }

 private:
  void Update(BoundedTensor& param, const BoundedTensor& grad, BoundedTensor& m1, BoundedTensor& m2);

  MlpConfig config_;
  double u_ = 0;
  std::vector<double> input_, target_;
  std::vector<BoundedTensor> weights_, biases_, weight_grads_, bias_grads_;
  std::vector<BoundedTensor> weight_m1_, weight_m2_, bias_m1_, bias_m2_;  // Adam
  int steps_ = 0;
  double loss_ = 0, loss_variance_ = 0;
};

}  // namespace shardlab
