// Activation checkpointing (recomputation) for the small MLP: which layers
// drop their activations after the forward and compute them again in the
// backward, and what that saves and costs.
//
//   forward  layer l:  z_l = x_l·W_l + b_l   a_l = relu(z_l)   (x_{l+1} = a_l)
//   kept:    z_l (for relu's backward) and a_l (the next layer's input, for its dW)
//   recompute layer l: z_l is freed as soon as a_l is made; just before the
//            backward of layer l, z_l = a_{l-1}·W_l + b_l again from the kept input
//
//   full       every hidden layer (0 .. L-2) recomputes (Megatron's "full":
//              keep each layer's input only)
//   selective  the layers listed ("0,2"), the rest keep everything
//
// Per micro-batch of b rows, H features, e bytes per element (4 fp32, 2 fp16),
// with R the recomputed layers (the last layer has no relu, so none of its
// own), the peak of the activations a rank holds at once (the forward's end:
// L-1-|R| pre-activations, L-1 outputs, y and dy) and the extra work are
//
//   peak activations  = (2L − |R|)·b·H·e         (L ≥ 2)
//   recompute FLOPs   = |R|·(2·b·H² + b·H)       (the product and the bias)
//
// The gradients are bit for bit those of no recomputation: the same
// operations on the same numbers (tests/train/recompute_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/mlp.h"

namespace shardlab {

enum class RecomputeMode : std::uint8_t { kNone, kFull, kSelective };
const char* RecomputeModeName(RecomputeMode mode);  // "none", "full", "selective"
/// Throws Error(kInvalidInput) "recompute: ..." for another word.
RecomputeMode ParseRecomputeMode(std::string_view text);

/// [layer]: true where the layer recomputes. `layers_text` ("0,2") names
/// the layers of kSelective (ignored otherwise). Throws Error(kInvalidInput)
/// "recompute_layers: ..." for a list that does not parse, a layer out of
/// 0 .. L-2 (the last layer keeps nothing of its own), or an empty list.
std::vector<bool> RecomputedLayers(RecomputeMode mode, std::string_view layers_text, int layers);

int RecomputedCount(const std::vector<bool>& recomputed);

/// The formulas above for one micro-batch of `rows` rows.
std::int64_t RecomputePeakActivationBytes(const MlpConfig& model, int rows, int element_bytes,
                                          const std::vector<bool>& recomputed);
double RecomputeFlops(const MlpConfig& model, int rows, const std::vector<bool>& recomputed);

}  // namespace shardlab
