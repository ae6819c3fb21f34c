// 3D parallelism: data × pipeline × tensor parallel training as one Plan.
//
// Ranks form a ParallelGrid (parallel_grid.h, Megatron's order). Each DP
// replica d trains on its own rows of the batch; its pp stages hold
// consecutive layers; each stage's layers are split over tp ranks as
// Megatron's MLP pairs (column-parallel, then row-parallel):
//
//        stage 0 (layers 0-1)                         stage 1 (layers 2-3)
//   tp0: X·W0[:,0:H/2] relu ·W1[0:H/2,:] ═╗ P0   ──► recv X ... (same tp index)
//   tp1: X·W0[:,H/2:H] relu ·W1[H/2:H,:] ═╝ P1   ──► recv X ...
//        TP all-reduce (g): Y = P0 + P1 + b1      activation to stage 1, same (dp, tp)
//   backward: the conjugate all-reduce (f) of the input gradient of each
//   column-parallel layer; stage gradients flow back to the same (dp, tp)
//   after the last micro-batch: every gradient all-reduced over its DP group
//   (ranks with the same stage and tp index), or with ZeRO-1 reduce-scattered,
//   each DP rank updating its 1/dp of every tensor, and the parameters
//   all-gathered.
//
// Every slot of the pipeline schedule (1F1B, GPipe) becomes, on every rank
// of the stage: compute up to the next row-parallel product, the TP
// all-reduce, compute ... then the activation (or gradient) transfer. Ops
// are created in the unit-time order of the schedule (as pipeline.h), which
// is an order some execution realises, so lanes can never deadlock.
//
// Invariants the tests check: after one step every rank's parameter shard
// equals the matching block of MlpReference's (SGD and Adam); TP traffic
// stays in TP groups, activations go to the same (dp, tp) of the next
// stage, DP traffic in DP groups: each DP rank sends 2(d−1)/d of its
// gradient bytes.
#pragma once

#include <string>
#include <vector>

#include "engine/algorithms/parallel_grid.h"
#include "engine/algorithms/pipeline_schedule.h"
#include "engine/algorithms/tensor_parallel.h"
#include "engine/model/mlp.h"
#include "engine/model/model_presets.h"
#include "engine/plan/plan.h"

namespace shardlab {

/// Which kind of group a transfer of a 3D plan serves.
enum class GroupKind : std::uint8_t { kTensor, kPipeline, kData };
inline constexpr int kGroupKindCount = 3;
const char* GroupKindName(GroupKind kind);  // "TP", "PP", "DP"

/// What a collective_seq of a 3D plan is: a TP all-reduce, a stage-to-stage
/// transfer or a DP gradient collective, and which group of that kind
/// (ParallelGrid's group ids; a PP transfer names its PP group).
struct ThreeDCollectiveInfo {
  GroupKind kind = GroupKind::kTensor;
  int group = 0;
};

struct ThreeDParams {
  ParallelGrid grid;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;  // gpipe or 1f1b
  int microbatches = 1;   // per DP replica
  int zero_stage = 0;     // 0: DP all-reduce; 1: ZeRO-1 over the DP group
  MlpConfig model;        // the real model (BuildThreeD)
  /// For tests: leave out the DP gradient collective, so replicas update
  /// from their own slice of the batch only (the check must then fail).
  bool skip_dp_reduce = false;
};

/// A parameter tensor (or, at paper scale, a bucket of them) of one rank
/// with its gradient and optimizer state, and which block of the
/// single-device tensor it holds.
struct ThreeDTensor {
  std::string name;                 // "w3", "b3", "stage 1 bucket 2"
  int layer = -1;
  bool is_bias = false;
  BufferId param = kNoBuffer, grad = kNoBuffer;
  BufferId first_moment = kNoBuffer, second_moment = kNoBuffer;  // Adam; ZeRO-1: this rank's chunk
  std::int64_t count = 0;
  TpBlock block;                    // rows/cols of the layer's H×H weight or H bias
};

struct ThreeDPlan {
  ThreeDParams params;
  Plan plan;
  std::vector<int> stage_first_layer;            // per stage, and one past the end
  std::vector<ThreeDCollectiveInfo> collectives; // by collective_seq
  std::vector<std::vector<ThreeDTensor>> tensors;  // by rank
  std::vector<BufferId> loss;                    // by rank: per micro-batch losses (last stage)
  std::int64_t gradient_elements_per_rank = 0;   // of stage 0, tp 0 (ranks of a stage agree)
};

/// Every check of BuildThreeD without building: "dp: ...", "microbatches:
/// a replica's 8 rows do not split into 3 micro-batches", "width: 30 is not
/// a multiple of tp 4", "layers: tp 2 needs whole column/row pairs on every
/// stage: 6 layers do not split into 4 stages of pairs", "schedule: ...".
void CheckThreeDParams(const ThreeDParams& params);

/// Layers of each stage: [first[s], first[s+1]). With tp > 1 whole
/// column/row pairs are dealt out, the first stages taking one pair more.
std::vector<int> ThreeDStageLayers(const ThreeDParams& params);

/// Builds the real-arithmetic step of the small MLP (checks first).
ThreeDPlan BuildThreeD(const ThreeDParams& params);

/// Paper scale, timing only: the same schedule and groups with a
/// transformer's shapes (model_presets.h) and no arithmetic. Coarser than
/// the real step (see three_d_timing.cpp): per micro-batch and phase one
/// compute op per stage with the FLOPs of its layers and one TP all-reduce
/// of all their activations; DP gradients in `dp_buckets` buckets per rank.
/// The micro-batch count is global_batch / (dp · micro_batch).
struct ThreeDTimingParams {
  ParallelGrid grid;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int zero_stage = 0;
  TransformerShape model;
  int dp_buckets = 4;
};
void CheckThreeDTimingParams(const ThreeDTimingParams& params);
ThreeDPlan BuildThreeDTiming(const ThreeDTimingParams& params);

/// How views label a 3D op's rank: "dp1 pp0 tp1".
std::string GridCoordText(const ParallelGrid& grid, int rank);

}  // namespace shardlab
