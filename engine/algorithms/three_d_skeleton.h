// The part of a 3D plan that does not depend on the model: the pipeline
// schedule's slots in unit-time order on every (dp, tp) rank of a stage,
// TP all-reduces between compute pieces, stage-to-stage transfers, then the
// DP gradient collectives and the optimizer. A StageModel (the real MLP in
// three_d.cpp, a transformer's shapes in three_d_timing.cpp) says what each
// piece computes and which buffers it uses.
#pragma once

#include <string>
#include <vector>

#include "engine/algorithms/three_d.h"

namespace shardlab::three_d {

/// A stretch of one slot on one rank: compute, then (optionally) an
/// all-reduce of `tp_allreduce` over the rank's TP group.
struct Piece {
  std::vector<KernelCall> kernels;
  Flops flops = 0;            // timing mode: work without kernels
  Bytes bytes = 0;
  BufferSlice written;        // timing mode: what the op writes (its dtype sets the FLOP rate)
  BufferSlice tp_allreduce;   // invalid: none
  int layer = -1;
};

class StageModel {
 public:
  virtual ~StageModel() = default;
  /// Adds rank's buffers; its stage holds layers [first, end). Returns its
  /// parameter tensors with param and grad set (moments are the skeleton's).
  virtual std::vector<ThreeDTensor> AddBuffers(PlanBuilder& builder, int rank, GridCoord coord,
                                               int first, int end) = 0;
  virtual std::vector<Piece> Forward(int rank, int microbatch) const = 0;
  virtual std::vector<Piece> Backward(int rank, int microbatch) const = 0;
  /// Stage-to-stage transfers: what a stage sends forward and where the
  /// next one receives it; the input gradient it sends back and where the
  /// previous stage receives that.
  virtual BufferSlice Output(int rank, int microbatch) const = 0;
  virtual BufferSlice Input(int rank, int microbatch) const = 0;
  virtual BufferSlice InputGrad(int rank, int microbatch) const = 0;
  virtual BufferSlice OutputGrad(int rank, int microbatch) const = 0;
  /// The optimizer on [offset, offset+count) of a tensor (moments are
  /// slices of the same length, or invalid for SGD).
  virtual Piece Optimizer(const ThreeDTensor& tensor, BufferSlice param, BufferSlice grad,
                          BufferSlice first_moment, BufferSlice second_moment) const = 0;
  virtual bool NeedsMoments() const = 0;
  virtual DType MomentType() const { return DType::kF32; }
  /// The last stage's per-micro-batch loss buffer of `rank` (kNoBuffer: none).
  virtual BufferId Loss(int rank) const { (void)rank; return kNoBuffer; }
};

struct SkeletonParams {
  std::string title;
  ParallelGrid grid;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int microbatches = 1;
  int zero_stage = 0;
  bool skip_dp_reduce = false;
  std::vector<int> stage_first_layer;
};

/// Builds the plan around `model`.
ThreeDPlan BuildSkeleton(const SkeletonParams& params, StageModel& model);

}  // namespace shardlab::three_d
