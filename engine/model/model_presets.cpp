#include "engine/model/model_presets.h"

#include "engine/core/error.h"

namespace shardlab {

double TransformerShape::LayerParameters() const {
  const double h = hidden, f = ffn_hidden;
  const double attention = 4.0 * h * h + 4.0 * h;  // QKV (3h² + 3h) + out (h² + h)
  const double mlp = 2.0 * h * f + f + h;          // up (h·f + f) + down (f·h + h)
  const double norms = 4.0 * h;                    // two layer norms, scale + shift
  return attention + mlp + norms;
}

double TransformerShape::EmbeddingParameters() const {
  return double(vocab) * hidden + double(seq_len) * hidden;
}

double TransformerShape::TotalParameters() const {
  return layers * LayerParameters() + EmbeddingParameters() + 2.0 * hidden;
}

double TransformerShape::LayerForwardFlopsPerSequence() const {
  const double s = seq_len, h = hidden, f = ffn_hidden;
  const double dense = 2.0 * s * (4.0 * h * h + 2.0 * h * f);  // QKV, out, MLP up/down
  const double attention = 2.0 * 2.0 * s * s * h;              // Q·Kᵀ and P·V
  return dense + attention;
}

double TransformerShape::LogitsForwardFlopsPerSequence() const {
  return 2.0 * double(seq_len) * hidden * vocab;
}

double TransformerShape::TrainingFlopsPerSequence() const {
  return 3.0 * (layers * LayerForwardFlopsPerSequence() + LogitsForwardFlopsPerSequence());
}

const std::vector<TransformerShape>& ModelPresets() {
  // Shapes from the GPT-3 paper (Brown et al. 2020, table 2.1: layers, d_model,
  // heads, batch in sequences = tokens / 2048) and LLaMA-7B's sizes with a GPT
  // MLP (4h) instead of SwiGLU, hence "-ish".
  static const std::vector<TransformerShape> presets = {
      {"gpt3-175b", 96, 12288, 96, 2048, 50257, 4 * 12288, 1536, 1,
       "GPT-3 175B: 96 layers, hidden 12288, 96 heads, seq 2048, batch 1536 (3.2M tokens)"},
      // The paper prints d_model 5140 for 13B, which 40 heads do not divide;
      // 5120 = 40 x 128 is the shape implementations train.
      {"gpt3-13b", 40, 5120, 40, 2048, 50257, 4 * 5120, 1024, 1,
       "GPT-3 13B: 40 layers, hidden 5120, 40 heads, seq 2048, batch 1024 (2M tokens)"},
      {"gpt3-1.3b", 24, 2048, 16, 2048, 50257, 4 * 2048, 512, 1,
       "GPT-3 XL 1.3B: 24 layers, hidden 2048, 16 heads, seq 2048, batch 512 (1M tokens)"},
      {"llama-7b-ish", 32, 4096, 32, 2048, 32000, 4 * 4096, 1024, 1,
       "LLaMA-7B-like: 32 layers, hidden 4096, 32 heads, seq 2048, vocab 32000, GPT MLP"},
  };
  return presets;
}

std::string ModelPresetNames() {
  std::string names;
  for (const auto& preset : ModelPresets()) names += (names.empty() ? "" : ", ") + preset.name;
  return names;
}

const TransformerShape& FindModelPreset(const std::string& name) {
  for (const auto& preset : ModelPresets())
    if (preset.name == name) return preset;
  throw Error("model: unknown preset '" + name + "' (known: " + ModelPresetNames() + ")");
}

void ValidateTransformerShape(const TransformerShape& shape) {
  const std::string who = "model " + (shape.name.empty() ? std::string("(custom)") : shape.name);
  auto positive = [&](int value, const char* field) {
    if (value <= 0)
      throw Error(who + ": " + field + " must be positive (got " + std::to_string(value) + ")");
  };
  positive(shape.layers, "layers");
  positive(shape.hidden, "hidden");
  positive(shape.heads, "heads");
  positive(shape.seq_len, "seq_len");
  positive(shape.vocab, "vocab");
  positive(shape.ffn_hidden, "ffn_hidden");
  positive(shape.global_batch, "global_batch");
  positive(shape.micro_batch, "micro_batch");
  if (shape.hidden % shape.heads != 0)
    throw Error(who + ": hidden " + std::to_string(shape.hidden) + " is not a multiple of heads " +
                std::to_string(shape.heads));
  if (shape.global_batch % shape.micro_batch != 0)
    throw Error(who + ": global_batch " + std::to_string(shape.global_batch) +
                " is not a multiple of micro_batch " + std::to_string(shape.micro_batch));
}

}  // namespace shardlab
