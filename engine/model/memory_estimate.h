// Bytes one GPU holds while training a transformer under a 3D layout
// (data × pipeline × tensor parallel, ZeRO over the data-parallel ranks),
// from formulas: what the planner checks against a GPU's memory.
//
//   model states   the busiest pipeline stage's parameters, split by tp, then
//                  ZeroMemoryPerGpu over dp: (2+2+K)Ψ', 4Ψ'+KΨ'/d, ...
//                  Ψ' = L/p · layer/t (+ embedding/t on the first stage,
//                  + the output copy of it and the final LN on the last)
//   activations    per layer and micro-batch of b sequences of s tokens
//                  (Korthikanti et al. 2022, fp16, 1-byte dropout masks):
//                    none       s·b·(18h + 4f + 5·a·s)        = s·b·h·(34 + 5as/h) at f = 4h
//                      tp, no SP  s·b·(10h + (8h + 4f + 5as)/t)
//                      tp + SP    s·b·(18h + 4f + 5as)/t
//                    selective  the 5·a·s² attention scores dropped (recomputed)
//                    full       s·b·2h (the layer input only; /t with SP)
//                  × layer-micro-batches in flight on the stage: 1F1B keeps
//                  min(m, p − stage) micro-batches of its L/p layers; the
//                  interleaved schedule's first stage L/p·(p + (p−1)/v)
//                  (Megatron's warm-up count), at most all m·L/p
//   + logits       the last stage's fp32 s·b·V/t scores for the loss
//   + ZeRO-3       two gathered layers (the one in use, the one prefetched)
//
// Replicated biases and layer-norm weights (about 5h per layer) are counted
// as if split by tp; the position table as if split too. Gradient buckets,
// communication buffers, the CUDA context and fragmentation are not counted
// here: the planner keeps a share of the GPU free for them.
#pragma once

#include <string>

#include "engine/model/model_presets.h"

namespace shardlab {

enum class Recompute { kNone, kSelective, kFull };

/// "none", "selective", "full".
const char* RecomputeName(Recompute recompute);

/// A 3D layout with its batch split: what memory and time depend on.
struct ParallelLayout {
  int dp = 1, pp = 1, tp = 1;
  int zero_stage = 0;     // 0-3, over the dp ranks
  int micro_batch = 1;    // b: sequences per micro-batch
  int micro_batches = 1;  // m: micro-batches per pipeline per step
  int interleave = 1;     // v: model chunks per pipeline stage
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = true;  // with tp > 1 (Megatron's default at scale)
  int optimizer_k_bytes = 12;     // the ZeRO paper's K
};

struct MemoryEstimate {
  // The busiest stage (the one with the largest total), bytes per GPU.
  int stage = 0;
  double stage_parameters = 0;  // Ψ' before ZeRO: that stage's share / tp
  double parameters = 0, gradients = 0, optimizer_states = 0;
  double activations = 0;           // layers in flight × per layer
  double activation_per_layer = 0;  // one layer, one micro-batch
  double layers_in_flight = 0;      // layer-micro-batches the stage holds
  double logits = 0;                // last stage only
  double zero3_gathered = 0;        // ZeRO-3's gathered layers
  double model_states() const { return parameters + gradients + optimizer_states; }
  double total() const { return model_states() + activations + logits + zero3_gathered; }
};

/// Activation bytes of one layer for one micro-batch under `layout`.
double ActivationBytesPerLayer(const TransformerShape& shape, const ParallelLayout& layout);

/// Parameters one GPU of pipeline stage `stage` holds before ZeRO.
double StageParametersPerGpu(const TransformerShape& shape, const ParallelLayout& layout,
                             int stage);

/// The estimate for `stage`, or (stage < 0) for the stage that needs most.
/// The layout must divide the model (layers by pp·v); the caller checks.
MemoryEstimate EstimateTrainingMemory(const TransformerShape& shape, const ParallelLayout& layout,
                                      int stage = -1);

/// The activation formula in words for `layout` ("s·b·h·(34 + 5as/h)/t ...").
std::string ActivationFormulaText(const ParallelLayout& layout);

}  // namespace shardlab
