// An elastic data-parallel job that loses a GPU and recovers (seed 001
// §19.6.4): N ranks train the small MLP (engine/model/mlp.h) with plain
// data parallelism and SGD, a checkpoint every C steps; rank R fails
// during step S; the job restarts from the last checkpoint on N−1 ranks
// (or on N, with a replacement in R's place), re-splits the batch, and
// trains on to step T. One Plan holds the whole job:
//
//   step  0 ... c−1 | c ... S−1 | S (partial)      | reload, re-shard | c ... T−1
//   ranks N         | N (lost)  | N−1 (lost)       | writer → others  | N−1 (or N)
//        ckpt 0  ckpt c  ...          R stops here     ckpt c copied in, sent out
//
//   a training step on rank r (rows [r·B/n, (r+1)·B/n) of the batch):
//     F   forward of every layer            (one compute op)
//     B   loss gradient, backward           (one compute op)
//     AR  ring all-reduce of the gradients  (AppendGroupCollective)
//     opt SGD on every tensor
//   ckpt  the writer copies its parameters into a checkpoint buffer
//         (standing for shared storage; the scenario writes it to a file)
//
// The writer is the lowest rank that survives. Lost work is what ran after
// the checkpoint the job restarts from: the whole steps c .. S−1 and the
// survivors' share of step S. Every op is named by its call's note
// ("F s5 lost", "AR s3", "ckpt 4", "reload ckpt 4", "re-shard"), so the
// timeline says what was lost and what recovery cost.
//
// Invariant the tests check: the final parameters on every rank equal the
// single-device reference trained T steps (the job redoes the lost steps
// from the checkpoint, on the same batch).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/mlp.h"
#include "engine/plan/plan.h"

namespace shardlab {

struct ElasticParams {
  MlpConfig model;            // SGD only (a checkpoint holds the parameters alone)
  int ranks = 4;              // N
  int steps = 8;              // T: training steps the job completes
  int checkpoint_every = 2;   // C
  int fail_rank = 2;          // R
  int fail_step = 5;          // S: the training step during which R fails, 0 .. T−1
  bool replace = false;       // wait for a replacement in R's place instead of shrinking
};

/// Throws Error(kInvalidInput) naming the field ("fail_rank: rank 4 is out
/// of range ...", "batch: 30 rows do not split over 4 and 3 ranks ...").
void CheckElasticParams(const ElasticParams& params);

/// What an op of the job is for.
enum class ElasticRole : std::uint8_t { kTrain, kCheckpoint, kLost, kReload, kReshard };
const char* ElasticRoleName(ElasticRole role);  // "train", "checkpoint", "lost", ...

struct ElasticCheckpoint {
  int after_steps = 0;        // parameters after this many training steps
  BufferId buffer = kNoBuffer;  // on the writer: W0, b0, W1, b1, ... flat
  OpId op = kNoOp;
  int plan_step = 0;          // the op's logical step
};

struct ElasticRankParams {
  std::vector<BufferId> weights, biases;  // per layer
};

struct ElasticPlan {
  Plan plan;
  ElasticParams params;
  int writer = 0;
  int restart_from = 0;         // the checkpoint (training steps) the job restarts from
  int lost_steps = 0;           // whole steps thrown away: S − restart_from
  std::vector<int> ranks_before, ranks_after;
  std::vector<ElasticCheckpoint> checkpoints;  // in order; [0] holds the initial parameters
  int used_checkpoint = 0;      // index into checkpoints
  OpId reload = kNoOp;
  int reload_step = 0;          // logical step of the reload
  Bytes reshard_bytes = 0;      // bytes sent to restore the parameters
  Bytes checkpoint_bytes = 0;   // one checkpoint
  std::vector<ElasticRole> roles;     // per op
  std::vector<ElasticRankParams> params_of;  // per rank (every rank has buffers)
};

/// The whole job as one plan.
ElasticPlan BuildElastic(const ElasticParams& params);

}  // namespace shardlab
