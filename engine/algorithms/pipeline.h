// Pipeline-parallel training of the small MLP (engine/model/mlp.h) as a Plan:
// the schedule's order (pipeline_schedule.h) becomes one Compute op per slot
// with real kernels, and a send/recv pair per activation and per gradient
// that crosses a stage boundary.
//
//   stage 0 (layers 0-1)        stage 1 (layers 2-3)
//   F(j): x·W0+b0, relu, ... ──► recv x.1[j] ─► F(j): ... loss
//   B(j): dW0 += ...        ◄── send gx.1[j] ◄─ B(j): loss grad, dW3 += ...
//   step: SGD/Adam on W0,b0,W1,b1       step: SGD/Adam on W2,b2,W3,b3
//
// Micro-batch j is rows [j·B/m, (j+1)·B/m) of every activation buffer; each
// buffer holds the whole batch, so the peak in-flight count is a property of
// the schedule, reported beside the formula. Gradients are accumulated over
// the micro-batches (the loss is the mean over the whole batch B), so after
// the step the weights equal the single-device MlpReference's.
//
// Op creation order follows a unit-time run of the schedule (every slot one
// tick, communication free). Each rank's send lane and recv lane therefore
// list transfers in an order that some execution realises, so no timing can
// make a send and its recv wait for each other (no deadlock); the tick is the
// op's logical step, as in the textbook grid.
#pragma once

#include <string>
#include <vector>

#include "engine/algorithms/pipeline_schedule.h"
#include "engine/model/mlp.h"
#include "engine/plan/plan.h"

namespace shardlab {

struct PipelineParams {
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  PipelineShape shape;   // stages p, micro-batches m, chunks v
  MlpConfig model;
};

/// Where one model layer's tensors live.
struct PipelineLayerBuffers {
  int rank = 0;
  BufferId weight = kNoBuffer, bias = kNoBuffer;
  BufferId weight_grad = kNoBuffer, bias_grad = kNoBuffer;
};

struct PipelinePlan {
  PipelineParams params;
  Plan plan;
  std::vector<std::vector<PipelineSlot>> order;  // per stage, the schedule's slots
  std::vector<std::vector<OpId>> slot_ops;       // per stage, the Compute op of each slot
  std::vector<int> chunk_first_layer;            // per global chunk, and one past the end
  std::vector<PipelineLayerBuffers> layers;      // per model layer
  BufferId loss = kNoBuffer;                     // last stage: loss of each micro-batch
  int loss_rank = 0;
};

/// Every check of BuildPipeline without building: the shape (CheckPipelineShape),
/// the model (CheckMlpConfig), then "stages: 8 stages but the model has 4
/// layers", "chunks: 4 stages × 3 chunks do not divide 8 layers", "microbatches:
/// a batch of 32 rows does not split into 5 micro-batches", "stages: ...
/// interleaving needs at least 2 stages".
void CheckPipelineParams(const PipelineParams& params);

/// Layers of each global chunk: [first[g], first[g+1]). Interleaved runs split
/// evenly; GPipe and 1F1B give the first L mod p stages one layer more.
std::vector<int> PipelineChunkLayers(const PipelineParams& params);

/// The unit-time tick at which each slot runs (F and B one tick each,
/// communication free): [stage][slot index in order].
std::vector<std::vector<int>> PipelineSlotTicks(const PipelineShape& shape,
                                                const std::vector<std::vector<PipelineSlot>>& order);

/// How views name a pipeline op: "F3", "B3" (micro-batch 3), "F3.1" for
/// local chunk 1 when interleaved, "opt" for the optimizer step; "" for ops
/// without a pipeline phase.
std::string PipelineSlotLabel(const OpTags& tags, const PipelineShape& shape);

/// The model layers stage `stage` holds, as "2-3", or "1,5" for chunks of
/// an interleaved schedule.
std::string PipelineStageLayers(const PipelinePlan& pipeline, int stage);

/// Builds the plan (checks first). Ranks are stages: rank s runs stage s.
PipelinePlan BuildPipeline(const PipelineParams& params);

}  // namespace shardlab
