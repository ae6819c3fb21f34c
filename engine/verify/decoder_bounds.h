// The decoder (engine/model/decoder.h) on one device, in double, with full
// causal attention recomputed for every position (no KV cache): the
// reference a served run's logits are judged against, and a bound for each
// logit in the σ model of bounds.h (λ = kSigmas standard deviations).
//
// Forward rules, as tp_bounds.h (σ² composes like a variance; a length-k
// dot product adds (k+1)·k·u²·Σ terms²; a sum or bias adds (u·result)²):
//   relu        σ kept where |z| > λσz; within λσz of 0 the switch costs
//               (|z| + λσz)/λ, in full
//   softmax     σp_j² ≤ 2·p_j²·(σs_j² + Σ p_i²·σs_i²) + ((n + 5)·u·p_j)²
//   layer norm  σy_j² ≤ 3·rstd²·(σx_j² + Σσx²/n² + ŷ_j²·Σ ŷ²σx²/n²)
//               + ((2n + 10)·u·(|ŷ_j| + 1))²  (the row's mean and variance)
// The served plan computes the same values in float32 in another order and
// with another split (heads over TP ranks, partial sums all-reduced, a
// cache instead of recomputation): a correct run lands within the bound.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/decoder.h"

namespace shardlab {

struct DecoderLogits {
  std::int64_t rows = 0, cols = 0;      // positions × V
  std::vector<double> value, bound;     // row-major
};

/// Logits of positions 0..tokens.size()-1 of one sequence; `unit_roundoff`
/// of the dtype the backend computes in (0: no bound, value only).
/// `int8_weights`: the layers' matrices (Wq, Wk, Wv, Wo, A, B) and the head
/// as int8 with per-channel scales (quantize.h), for the accuracy cost of
/// quantised decode weights; biases and embeddings stay exact.
DecoderLogits DecoderReferenceLogits(const DecoderConfig& config, std::uint64_t seed,
                                     const std::vector<int>& tokens, double unit_roundoff,
                                     bool int8_weights = false);

}  // namespace shardlab
