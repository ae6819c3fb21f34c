// Tensor parallelism (Megatron-LM): one layer split over tp ranks, forward
// and backward, as a Plan whose compute ops carry the real arithmetic and
// whose all-reduces are ring all-reduces among the tp ranks.
//
//   column linear   rank r: Y_r = X·A_r + a_r        forward: no communication
//                   backward: dX = Σ_r dY_r·A_rᵀ      one all-reduce ("f")
//   row linear      rank r: P_r = X_r·W_r            forward: Y = Σ_r P_r + b, one all-reduce ("g")
//                   backward: dX_r = dY·W_rᵀ          no communication
//   MLP             column then row: one all-reduce forward (g), one backward (f)
//
//   X[T×H] ──► A_r (H × F/tp) ──relu──► B_r (F/tp × H) ──► P_r ══all-reduce══► Y = ΣP_r + b
//
// Every all-reduce moves the T × H activations (or their gradient): 2(tp−1)
// ring steps of T·H/tp elements per rank, T·H·4 bytes in float32. A
// transformer layer (attention + MLP) has two of them forward and two
// backward (the seed text's 4 per layer); this plan holds one layer.
#pragma once

#include <vector>

#include "engine/model/tp_layer.h"
#include "engine/plan/plan.h"

namespace shardlab {

/// What one rank holds of the layer, for reading results back.
struct TpRankBuffers {
  BufferId y = kNoBuffer;    // its output: Y_r (column) or all of Y
  BufferId dx = kNoBuffer;   // its input gradient: all of dX, or dX_r (row)
  BufferId dw1 = kNoBuffer, db1 = kNoBuffer;  // first linear's gradient shards
  BufferId dw2 = kNoBuffer, db2 = kNoBuffer;  // the MLP's second linear's
};

struct TpLayerPlan {
  TpLayerConfig config;
  Plan plan;
  std::vector<TpRankBuffers> ranks;  // [tp]
  int forward_allreduces = 0;        // all-reduces in the forward pass
  int backward_allreduces = 0;
  std::int64_t allreduce_count = 0;  // elements each all-reduce reduces (T × H)
};

/// Builds the layer over ranks 0 .. tp-1 (checks the config first).
/// Compute ops are tagged kForward / kBackward; each all-reduce has its own
/// collective_seq (forward ones first) and tags.layer 0.
TpLayerPlan BuildTpLayer(const TpLayerConfig& config);

}  // namespace shardlab
