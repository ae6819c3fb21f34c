#include "engine/train/loss_scale.h"

#include <cmath>

#include "engine/core/op_kinds.h"
#include "engine/verify/bounds.h"

namespace shardlab {

float RoundToHalf(float x) { return static_cast<float>(RoundTo(DType::kF16, x)); }

void RoundToHalf(std::span<float> values) {
  for (float& v : values) v = RoundToHalf(v);
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
