// Transformer shapes of published models, for timing-only runs and memory
// estimates at paper scale (no weights, no data: only the sizes that set
// FLOPs, bytes and memory).
//
// Parameters of a GPT-style decoder with L layers, hidden h, vocabulary V and
// sequence s (learned positions, biases and layer norms included):
//
//   per layer   12·h² + 13·h      (QKV 3h², out-proj h², MLP 8h², biases, 2 LN)
//   embeddings  V·h + s·h
//   final LN    2·h
//
// GPT-3 175B: 96·12·12288² ≈ 173.9e9 + 50257·12288 ≈ 0.62e9 → 174.6e9.
//
// Training FLOPs per token (the Megatron-LM paper's count, with activation
// recomputation off): 6·P for the dense matmuls plus the attention
// score/context products 12·L·h·s (forward 2 matmuls of 2·s·h each, ×3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardlab {

/// The shape of a decoder-only transformer and the batch it trains on.
struct TransformerShape {
  std::string name;          // "gpt3-175b"
  int layers = 0;            // L
  int hidden = 0;            // h
  int heads = 0;             // a (h % a == 0)
  int seq_len = 0;           // s, tokens per sequence
  int vocab = 0;             // V
  int ffn_hidden = 0;        // MLP inner width; 4h for GPT
  int global_batch = 0;      // sequences per optimizer step (all DP replicas)
  int micro_batch = 1;       // sequences per micro-batch on one pipeline
  std::string description;   // one line for listings

  /// Parameters of one transformer layer: attention 4h² + MLP 2·h·ffn, biases, 2 LN.
  double LayerParameters() const;
  /// Token and position embeddings (the output layer shares the token table).
  double EmbeddingParameters() const;
  /// Every parameter: L layers + embeddings + final layer norm.
  double TotalParameters() const;
  /// Forward FLOPs of one layer for one sequence: dense matmuls + attention.
  double LayerForwardFlopsPerSequence() const;
  /// Forward FLOPs of the output projection (logits) for one sequence.
  double LogitsForwardFlopsPerSequence() const;
  /// Training FLOPs (forward + backward = 3× forward) of one sequence through
  /// the whole model, no recomputation.
  double TrainingFlopsPerSequence() const;
};

/// The built-in shapes ("gpt3-175b", "gpt3-13b", "gpt3-1.3b", "llama-7b-ish").
const std::vector<TransformerShape>& ModelPresets();

/// The preset named `name` (case-sensitive). Throws Error(kInvalidInput)
/// "model: unknown preset 'x' (known: ...)".
const TransformerShape& FindModelPreset(const std::string& name);

/// Names of the presets, comma-separated, for help texts and error messages.
std::string ModelPresetNames();

/// Throws Error(kInvalidInput) naming the first field that is not positive
/// or not consistent (hidden % heads, global_batch % micro_batch).
void ValidateTransformerShape(const TransformerShape& shape);

}  // namespace shardlab
