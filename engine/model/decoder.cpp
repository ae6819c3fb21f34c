#include "engine/model/decoder.h"

#include <cmath>
#include <stdexcept>

#include "engine/core/error.h"
#include "engine/core/fill.h"

namespace shardlab {
namespace {

// Streams: far from the collectives', the MLP's (2^40 + ...) and the TP
// layer's (2^41 + index); each layer gets its own block of 2^24.
constexpr std::int64_t kDecoderStreams = std::int64_t{3} << 41;
constexpr std::int64_t kLayerStride = std::int64_t{1} << 24;
constexpr std::int64_t kTokenStreams = std::int64_t{5} << 41;

[[noreturn]] void Fail(const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); }

}  // namespace

TpLayerConfig DecoderConfig::LayerConfig(int tp, int tokens) const {
  TpLayerConfig c;
  c.kind = TpLayerKind::kTransformer;
  c.batch = 1;
  c.seq = tokens;
  c.hidden = hidden;
  c.ffn = ffn_width();
  c.heads = heads;
  c.tp = tp;
  return c;
}

std::int64_t DecoderConfig::layer_parameters() const {
  const std::int64_t h = hidden, f = ffn_width();
  return 4 * h * h + 4 * h + 2 * h * f + f + h;
}

std::int64_t DecoderConfig::parameters() const {
  const std::int64_t h = hidden, v = vocab;
  return layers * layer_parameters() + v * h + std::int64_t{max_context} * h + h * v;
}

void CheckDecoderConfig(const DecoderConfig& c, int tp) {
  if (c.layers < 1 || c.layers > 1024) Fail("layers: " + std::to_string(c.layers) + " is outside 1..1024");
  if (c.vocab < 2 || c.vocab > (1 << 20)) Fail("vocab: " + std::to_string(c.vocab) + " is outside 2..1048576");
  if (c.max_context < 1 || c.max_context > (1 << 20))
    Fail("max-context: " + std::to_string(c.max_context) + " is outside 1..1048576");
  if (c.heads < 1) Fail("heads: " + std::to_string(c.heads) + " must be at least 1");
  if (tp >= 1 && c.heads % tp != 0)
    Fail("heads: " + std::to_string(c.heads) + " heads do not split evenly over tp " + std::to_string(tp) +
         " (each rank holds whole heads and their KV cache): choose a tp that divides " +
         std::to_string(c.heads));
  CheckTpLayerConfig(c.LayerConfig(tp));
}

std::vector<DecoderTensor> DecoderTensors(const DecoderConfig& c) {
  std::vector<DecoderTensor> out;
  const std::int64_t h = c.hidden, v = c.vocab;
  // Embeddings ±1 (LayerNorm follows), the head He-uniform over H.
  out.push_back({"embed", -1, v, h, kDecoderStreams + 0, 1.0f});
  out.push_back({"pos", -1, c.max_context, h, kDecoderStreams + 1, 0.5f});
  out.push_back({"head", -1, h, v, kDecoderStreams + 2, static_cast<float>(std::sqrt(6.0 / h))});
  for (int l = 0; l < c.layers; ++l)
    for (const TpTensorSpec& s : TpLayerTensors(c.LayerConfig(1))) {
      if (!s.weight) continue;
      out.push_back({s.name, l, s.rows, s.cols, s.stream + (l + 1) * kLayerStride, s.scale});
    }
  return out;
}

const DecoderTensor& FindDecoderTensor(const std::vector<DecoderTensor>& tensors,
                                       const std::string& name, int layer) {
  for (const DecoderTensor& t : tensors)
    if (t.name == name && t.layer == layer) return t;
  throw std::out_of_range("decoder has no tensor '" + name + "' in layer " + std::to_string(layer));
}

std::vector<int> DecoderTokens(std::uint64_t seed, int request, int count, int vocab) {
  std::vector<int> ids(static_cast<std::size_t>(std::max(count, 0)));
  for (int p = 0; p < count; ++p) {
    // InputValue is k/1024 for k in [-1024, 1024): 2048 equally likely values.
    const int k = static_cast<int>(std::lround(InputValue(seed, kTokenStreams + request, p) * 1024.0)) + 1024;
    ids[static_cast<std::size_t>(p)] = k % vocab;
  }
  return ids;
}

double DecoderWeight(std::uint64_t seed, const DecoderTensor& t, std::int64_t index) {
  return static_cast<double>(t.scale * InputValue(seed, t.stream, index));
}

}  // namespace shardlab
