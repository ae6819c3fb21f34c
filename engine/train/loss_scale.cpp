#include "engine/train/loss_scale.h"

#include <cmath>

#include "engine/verify/bounds.h"

namespace shardlab {

float RoundToHalf(float x) { return static_cast<float>(RoundTo(DType::kF16, x)); }

void RoundToHalf(std::span<float> values) {
  for (float& v : values) v = RoundToHalf(v);
}

float RoundToWorking(DType working, float x) {
  return working == DType::kF32 ? x : static_cast<float>(RoundTo(working, x));
}

void RoundToWorking(DType working, std::span<float> values) {
  if (working == DType::kF32) return;
  for (float& v : values) v = RoundToWorking(working, v);
}

bool HasNonFinite(std::span<const float> values) {
  for (const float v : values)
    if (!std::isfinite(v)) return true;
  return false;
}

DynamicLossScale::DynamicLossScale(const LossScaleConfig& config)
    : config_(config), scale_(config.initial_scale) {}

bool DynamicLossScale::Update(bool any_overflow) {
  if (any_overflow) {
    scale_ *= config_.backoff_factor;
    good_steps_ = 0;
    ++skipped_;
    return true;
  }
  if (++good_steps_ >= config_.growth_interval) {
    scale_ *= config_.growth_factor;
    good_steps_ = 0;
  }
  return false;
}

}  // namespace shardlab
