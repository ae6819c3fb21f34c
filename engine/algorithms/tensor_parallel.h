// Tensor parallelism (Megatron-LM): one layer split over tp ranks, forward
// and backward, as a Plan whose compute ops carry the real arithmetic and
// whose all-reduces are ring all-reduces among the tp ranks.
//
//   column linear   rank r: Y_r = X·A_r + a_r        forward: no communication
//                   backward: dX = Σ_r dY_r·A_rᵀ      one all-reduce ("f")
//   row linear      rank r: P_r = X_r·W_r            forward: Y = Σ_r P_r + b, one all-reduce ("g")
//                   backward: dX_r = dY·W_rᵀ          no communication
//   MLP             column then row: one all-reduce forward (g), one backward (f)
//   attention       heads split (Q, K, V column-parallel), Wo row-parallel: the same
//   transformer     attention then MLP: two all-reduces forward, two backward
//
//   X[T×H] ──► A_r (H × F/tp) ──relu──► B_r (F/tp × H) ──► P_r ══all-reduce══► Y = ΣP_r + b
//
// Every all-reduce moves the T × H activations (or their gradient): 2(tp−1)
// ring steps of T·H/tp elements per rank, T·H·dtype bytes. With sequence
// parallelism each becomes a reduce-scatter (leaving rank r the token rows
// r·T/tp..) and, before the next split linear, an all-gather: the same
// bytes, but LayerNorm, bias and residual run on T/tp rows per rank.
#pragma once

#include <string>
#include <vector>

#include "engine/algorithms/group_collective.h"
#include "engine/model/tp_layer.h"
#include "engine/plan/plan.h"

namespace shardlab {

/// A block of a row-major tensor of the single-device layer: rows
/// [row0, row0 + rows) and columns [col0, col0 + cols) of a tensor with
/// `total_cols` columns. A whole tensor is one block.
struct TpBlock {
  std::int64_t row0 = 0, rows = 0;
  std::int64_t col0 = 0, cols = 0;
  std::int64_t total_rows = 0, total_cols = 0;
};

enum class TpTensorRole : std::uint8_t { kWeight, kOutput, kGradient };

/// A buffer of one rank that holds a block of a tensor of the layer (named
/// as in TpLayerReference: "Wq", "y", "dW1" ...): weights as placed at the
/// start, outputs and gradients as left at the end of the run.
struct TpTensorBlock {
  std::string tensor;
  TpTensorRole role = TpTensorRole::kWeight;
  int rank = 0;
  BufferId buffer = kNoBuffer;
  std::int64_t offset = 0;  // element where the block starts in the buffer
  TpBlock block;
};

/// One collective of the layer: an all-reduce, or with sequence
/// parallelism the reduce-scatter or all-gather that replaces half of one.
struct TpCollective {
  int seq = 0;                      // the ops' collective_seq
  GroupCollectiveKind kind = GroupCollectiveKind::kAllReduce;
  bool forward = true;
  std::int64_t count = 0;           // elements of the whole tensor (T × H)
  std::string what;                 // "attention output (g)", "MLP input gradient (f)"
};

struct TpLayerPlan {
  TpLayerConfig config;
  Plan plan;
  std::vector<TpTensorBlock> blocks;     // every weight, output and gradient shard
  std::vector<TpCollective> collectives; // in plan order
  int forward_allreduces = 0;            // all-reduces (or RS+AG pairs) forward
  int backward_allreduces = 0;
  std::int64_t allreduce_count = 0;      // elements each all-reduce reduces (T × H)
};

/// Builds the layer over ranks 0 .. tp-1 (checks the config first).
/// Compute ops are tagged kForward / kBackward; each all-reduce has its own
/// collective_seq (forward ones first) and tags.layer 0.
TpLayerPlan BuildTpLayer(const TpLayerConfig& config);

}  // namespace shardlab
