// Mixed precision with a dynamic loss scale, synchronised across ranks
// (seed 001 §19.2.3; Micikevicius et al.; PyTorch's GradScaler).
//
//   master weights (fp32) ──round──► working weights (fp16)
//   forward in fp16 (every product, bias, relu rounded to fp16)
//   dL/dy × S, rounded to fp16          S: the loss scale
//   backward in fp16 (every gradient rounded; past 65504 it is inf)
//   overflow flag of the rank: any inf/NaN in its gradients
//   all-reduce(max) of the one-element flag ──► every rank sees the same
//   flag set:   skip the update on every rank, S ← S·backoff (0.5), good ← 0
//   flag clear: all-reduce the gradients, unscale (÷S, fp32), update the
//               master weights; after `growth_interval` good steps S ← S·2
//
// bf16 (precision = bf16) keeps fp32's 8 exponent bits and gives up
// mantissa instead (8 significant bits against fp16's 11): a gradient of
// 1e-8 or 1e30 is still a number, so bf16 runs with no loss scale, no
// overflow flag and no skipped step, as PyTorch's autocast to bfloat16 does
// without a GradScaler. What it costs is precision, not range.
//
// On the simulator fp16 is emulated: each value is rounded to the nearest
// fp16 (RoundTo, ties to even; beyond 65504 it becomes inf) at the points
// above. The master weights never see an inf or a NaN: a step whose flag is
// set changes nothing but S.
#pragma once

#include <cstdint>
#include <span>

#include "engine/core/op_kinds.h"

namespace shardlab {

/// The nearest fp16 value of x (inf past 65504), as float.
float RoundToHalf(float x);
/// Rounds every element in place.
void RoundToHalf(std::span<float> values);
/// The nearest value of x in `working` (fp16, bf16; fp32 leaves it), as
/// float: the working precision of a mixed-precision pass.
float RoundToWorking(DType working, float x);
void RoundToWorking(DType working, std::span<float> values);
/// True when any element is inf or NaN.
bool HasNonFinite(std::span<const float> values);

struct LossScaleConfig {
  double initial_scale = 65536;   // 2^16, GradScaler's default
  double growth_factor = 2;
  double backoff_factor = 0.5;
  int growth_interval = 2000;      // good steps before S grows
};

/// The scale and its schedule; every rank holds one and feeds it the same
/// (all-reduced) flag, so every rank's S is the same at every step.
class DynamicLossScale {
 public:
  explicit DynamicLossScale(const LossScaleConfig& config);
  double scale() const { return scale_; }
  /// After the flag's all-reduce: returns true when the step must be
  /// skipped (the flag was set), and moves S.
  bool Update(bool any_overflow);
  int skipped() const { return skipped_; }

 private:
  LossScaleConfig config_;
  double scale_;
  int good_steps_ = 0;
  int skipped_ = 0;
};

}  // namespace shardlab
