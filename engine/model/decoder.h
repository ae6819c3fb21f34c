// A small decoder-only language model: the transformer layers of
// tp_layer.h stacked, with a causal mask, token and position embeddings, a
// final LayerNorm and an LM head. It is what the inference scenario runs
// for real (prefill, then token-by-token decode with a KV cache) and what
// its single-device reference recomputes without a cache.
//
//   tokens ─► embed[tok] + pos[p] ─► L × transformer (causal) ─► LN ─► ·head ─► logits[V]
//
// Each layer is tp_layer.h's pre-norm block, h = x + attention(LN(x)),
// y = h + MLP(LN(h)), where position p attends to positions 0..p only.
// Layer l's weights are that layer's tensors (TpLayerTensors) from their
// own input streams, so every split of the model starts from one model.
// Token ids are seeded (DecoderTokens): the decode is teacher-forced, which
// changes no op and no byte of the serving plan, only which row of the
// embedding the next step reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/tp_layer.h"

namespace shardlab {

struct DecoderConfig {
  int layers = 2;         // L
  int hidden = 64;        // H
  int heads = 4;          // attention heads; H / heads is the head size d
  int ffn = 0;            // F; 0: 4H
  int vocab = 128;        // V
  int max_context = 256;  // positions a request may reach (prompt + output)

  int ffn_width() const { return ffn > 0 ? ffn : 4 * hidden; }
  int head_size() const { return heads > 0 ? hidden / heads : 0; }
  /// One layer as tp_layer.h describes it (transformer, T = tokens rows).
  TpLayerConfig LayerConfig(int tp, int tokens = 1) const;
  /// Parameters of the whole model (embeddings and head included).
  std::int64_t parameters() const;
  /// Parameters of one transformer layer: 4H² + 4H + 2HF + F + H.
  std::int64_t layer_parameters() const;
};

/// Throws Error(kInvalidInput) naming the field: "layers: ", "hidden: ",
/// "heads: " (heads must divide H and split evenly over tp: "heads: 6
/// heads do not split evenly over tp 4 ..."), "ffn: ", "vocab: ",
/// "max-context: ", "tp: ".
void CheckDecoderConfig(const DecoderConfig& config, int tp);

/// One weight of the model: "embed" [V×H], "pos" [max_context×H], the
/// layers' tensors (layer >= 0: "Wq", "bq", ..., "B", "b"), "head" [H×V].
struct DecoderTensor {
  std::string name;
  int layer = -1;  // -1: embeddings and head
  std::int64_t rows = 0, cols = 0;
  std::int64_t stream = 0;
  float scale = 1.0f;
};

std::vector<DecoderTensor> DecoderTensors(const DecoderConfig& config);
/// Throws std::out_of_range for a name/layer the model does not have.
const DecoderTensor& FindDecoderTensor(const std::vector<DecoderTensor>& tensors,
                                       const std::string& name, int layer = -1);

/// Token ids 0..V-1 of request `request`, positions 0..count-1, from the
/// seed (the same ids every backend and the reference use).
std::vector<int> DecoderTokens(std::uint64_t seed, int request, int count, int vocab);

/// Weight `tensor`'s element `index` as the buffers hold it (float), widened.
double DecoderWeight(std::uint64_t seed, const DecoderTensor& tensor, std::int64_t index);

}  // namespace shardlab
