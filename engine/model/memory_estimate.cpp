#include "engine/model/memory_estimate.h"

#include <algorithm>

#include "engine/model/zero_memory.h"

namespace shardlab {
namespace {

constexpr double kFp16Bytes = 2;
constexpr double kFp32Bytes = 4;
constexpr double kZero3GatheredLayers = 2;  // the layer computing and the one prefetched

// Layer-micro-batches stage `stage` holds at the peak of its schedule.
double LayersInFlight(const TransformerShape& shape, const ParallelLayout& layout, int stage) {
  const double p = layout.pp, m = layout.micro_batches, v = layout.interleave;
  const double layers_per_stage = double(shape.layers) / p;
  if (layout.interleave <= 1) return std::min(m, p - stage) * layers_per_stage;
  // Megatron's interleaved warm-up: (p − s − 1)·2 + (v − 1)·p chunks, then
  // one more in the steady state; a chunk is L/(p·v) layers.
  const double chunks = 2 * (p - stage - 1) + (v - 1) * p + 1;
  return std::min(chunks, m * v) * layers_per_stage / v;
}

}  // namespace

const char* RecomputeName(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

double ActivationBytesPerLayer(const TransformerShape& shape, const ParallelLayout& layout) {
  const double s = shape.seq_len, b = layout.micro_batch, h = shape.hidden;
  const double f = shape.ffn_hidden, a = shape.heads, t = layout.tp;
  const bool sp = layout.sequence_parallel && layout.tp > 1;
  if (layout.recompute == Recompute::kFull) return s * b * 2 * h / (sp ? t : 1);
  const double scores = layout.recompute == Recompute::kSelective ? 0 : 5 * a * s;
  // Attention 11h + 5as, MLP 3h + 4f, two layer norms 4h (per token, bytes).
  // Without SP the layer norms, the two dropout masks and the inputs of the
  // attention and the MLP (10h) stay whole on every tp rank.
  if (sp || layout.tp == 1) return s * b * (18 * h + 4 * f + scores) / t;
  return s * b * (10 * h + (8 * h + 4 * f + scores) / t);
}

double StageParametersPerGpu(const TransformerShape& shape, const ParallelLayout& layout,
                             int stage) {
  const double layers = double(shape.layers) / layout.pp;
  double params = layers * shape.LayerParameters();
  // The first stage holds the embeddings; the last the output layer (a copy
  // of the token table when they are different stages) and the final LN.
  if (stage == 0) params += shape.EmbeddingParameters();
  if (stage == layout.pp - 1) {
    if (layout.pp > 1) params += double(shape.vocab) * shape.hidden;
    params += 2.0 * shape.hidden;
  }
  return params / layout.tp;
}

MemoryEstimate EstimateTrainingMemory(const TransformerShape& shape, const ParallelLayout& layout,
                                      int stage) {
  if (stage < 0) {
    MemoryEstimate worst = EstimateTrainingMemory(shape, layout, 0);
    for (int s = 1; s < layout.pp; ++s) {
      const MemoryEstimate e = EstimateTrainingMemory(shape, layout, s);
      if (e.total() > worst.total()) worst = e;
    }
    return worst;
  }
  MemoryEstimate e;
  e.stage = stage;
  e.stage_parameters = StageParametersPerGpu(shape, layout, stage);
  const ZeroMemoryFormula states =
      ZeroMemoryPerGpu(e.stage_parameters, layout.dp, layout.zero_stage, layout.optimizer_k_bytes);
  e.parameters = states.parameters;
  e.gradients = states.gradients;
  e.optimizer_states = states.optimizer_states;
  e.activation_per_layer = ActivationBytesPerLayer(shape, layout);
  e.layers_in_flight = LayersInFlight(shape, layout, stage);
  e.activations = e.activation_per_layer * e.layers_in_flight;
  if (stage == layout.pp - 1) {
    e.logits = double(shape.seq_len) * layout.micro_batch * shape.vocab * kFp32Bytes / layout.tp;
  }
  if (layout.zero_stage >= 3 && layout.dp > 1) {
    e.zero3_gathered = kZero3GatheredLayers * shape.LayerParameters() / layout.tp * kFp16Bytes;
  }
  return e;
}

std::string ActivationFormulaText(const ParallelLayout& layout) {
  const bool split = layout.tp > 1;
  const bool sp = split && layout.sequence_parallel;
  switch (layout.recompute) {
    case Recompute::kFull:
      return sp ? "s·b·2h/t (full recompute, SP)" : "s·b·2h (full recompute)";
    case Recompute::kSelective:
      if (!split) return "s·b·(18h + 4f) (selective recompute)";
      return sp ? "s·b·(18h + 4f)/t (selective, SP)" : "s·b·(10h + (8h + 4f)/t) (selective)";
    case Recompute::kNone:
      break;
  }
  if (!split) return "s·b·(18h + 4f + 5as)";
  return sp ? "s·b·(18h + 4f + 5as)/t (SP)" : "s·b·(10h + (8h + 4f + 5as)/t)";
}

}  // namespace shardlab
