// Data parallelism and ZeRO stages 1-3 (Rajbhandari et al.; DeepSpeed) for
// the small MLP, trained with Adam in mixed precision, as a Plan.
//
// Every rank computes the gradients of its B/N rows of the batch; what
// differs between the stages is who keeps which model state, and so which
// collectives run:
//
//   stage  parameters (fp16)  gradients (fp16)  master + Adam m, v (fp32)  per step
//   0      all                all               all                        all-reduce grads (per bucket)
//   1      all                all               1/N                        reduce-scatter grads, update
//                                                                          the shard, all-gather params
//   2      all                1/N               1/N                        the same; a bucket's full
//                                                                          gradient lives only until its
//                                                                          reduce-scatter
//   3      1/N                1/N               1/N                        all-gather each layer before
//                                                                          its forward and again before
//                                                                          its backward, reduce-scatter
//                                                                          its gradient
//
// The flat parameter space is W0, b0, W1, b1, ... (Ψ elements). Stages 0-2
// reduce gradients in buckets of whole layers, filled from the last layer
// down as backward produces them (PyTorch DDP's order; a bucket closes once
// it holds bucket_bytes of fp16 gradient, 25 MiB by default, so it may pass
// that by up to one layer); with `overlap` a bucket's collective
// may start as soon as its lowest layer's backward is done, else after the
// whole backward. Stage 3 shards each layer. Rank r owns chunk r of every
// bucket (stage 3: of every layer), ChunkBegin/ChunkCount's split, so Ψ need
// not divide by N.
//
// Arithmetic is float32 on the host; the fp16 buffers are fp16 in size and
// in the simulator's timing (tensor cores), which is what the memory and
// communication accounting needs. Buffers carry their MemoryCategory; the
// gathered parameters and layer gradients (stage 3), the bucket gradients
// (stage 2) and the fp32 staging of the initial weights are transient, so
// the simulator's MemoryTracker measures their peak.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/mlp.h"
#include "engine/plan/plan.h"

namespace shardlab {

/// The model ZeroParams starts from: Adam at a learning rate of 1e-3
/// (MlpConfig's default 0.05 suits SGD, not Adam).
MlpConfig ZeroDefaultModel();

struct ZeroParams {
  MlpConfig model = ZeroDefaultModel();  // the optimizer is always Adam here
  int ranks = 4;                // N, the data-parallel degree
  int stage = 0;                // 0 (plain data parallel), 1, 2, 3
  int steps = 1;                // training steps, each one Adam update
  Bytes bucket_bytes = 25 << 20;  // gradient bucket (stages 0-2), PyTorch DDP's 25 MiB
  bool overlap = true;          // a bucket's reduction starts when its gradients are ready
};

/// Throws Error(kInvalidInput) naming the field: "stage: ", "ranks: ",
/// "steps: ", "bucket: ", "batch: " (B must split into N equal shards of
/// rows), and the model's own ("layers: ", "width: ", ...).
void CheckZeroParams(const ZeroParams& params);

/// A contiguous range [begin, end) of the flat parameter space that is
/// reduced (and sharded) as one: a bucket of layers, or one layer (stage 3).
struct ZeroUnit {
  std::int64_t begin = 0, end = 0;
  int first_layer = 0, last_layer = 0;  // layers it holds, inclusive
  std::int64_t size() const { return end - begin; }
};

/// Where part of the flat parameter space sits on one rank at the end.
struct ZeroPiece {
  std::int64_t begin = 0;   // in the flat parameter space
  BufferSlice slice;        // its elements, in order
};

struct ZeroPlan {
  ZeroParams params;
  Plan plan;
  std::int64_t parameter_count = 0;       // Ψ
  std::vector<ZeroUnit> units;            // buckets (0-2) or layers (3), in reduction order
  std::vector<std::int64_t> shard_count;  // [rank]: elements of model state rank r owns (stages 1-3)
  /// [rank]: where the fp32 master parameters are after the run: all of Ψ
  /// on every rank (stage 0), else the rank's chunks.
  std::vector<std::vector<ZeroPiece>> master;
  /// [rank]: the fp16 working parameters after the run (all of Ψ for stages
  /// 0-2, the rank's chunks for stage 3).
  std::vector<std::vector<ZeroPiece>> working;
  std::vector<BufferId> loss;             // [rank]: [steps] partial losses
  int collectives_per_step = 0;
};

/// Flat offset of layer l's weight (its bias follows H² elements later).
std::int64_t ZeroLayerOffset(const MlpConfig& model, int layer);

/// The units of a configuration (checked first).
std::vector<ZeroUnit> ZeroUnits(const ZeroParams& params);

/// Builds the plan over ranks 0 .. N-1 (checks first). Ops are tagged with
/// the layer; compute phases forward, backward, optimizer; collectives
/// (all-reduce for stage 0, reduce-scatter / all-gather otherwise) have one
/// collective_seq each.
ZeroPlan BuildZero(const ZeroParams& params);

}  // namespace shardlab
