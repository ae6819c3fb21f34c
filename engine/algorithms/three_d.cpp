// The real-arithmetic 3D step of the small MLP (mlp.h): the StageModel that
// the skeleton (three_d_skeleton.h) runs on every rank.
//
// Layer l of the MLP is column-parallel when l is even and row-parallel
// when l is odd (Megatron's MLP pair), on tp ranks:
//
//   column l   W: H × H/tp (columns t·H/tp ..)   z, a: rows × H/tp   no forward comm
//   row l      W: H/tp × H (rows t·H/tp ..)      z: rows × H, partial sums → TP all-reduce,
//              then + b (b whole on every TP rank) and relu
//   backward   row: dX stays split (no comm); column: dX = Σ_t gz_t·W_tᵀ → TP all-reduce
//
// With tp = 1 both kinds are the whole layer and the all-reduces vanish,
// so a stage may start at any layer; with tp > 1 stages hold whole pairs.
// Replica d trains on rows [d·B/dp, (d+1)·B/dp) of the batch; the loss
// gradient is scaled by the global batch B, so summing the replicas'
// gradients (the DP all-reduce) gives the single-device gradient.
#include "engine/algorithms/three_d.h"

#include "engine/algorithms/three_d_skeleton.h"
#include "engine/core/error.h"

namespace shardlab {

const char* GroupKindName(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTensor: return "TP";
    case GroupKind::kPipeline: return "PP";
    case GroupKind::kData: return "DP";
  }
  return "?";
}

std::string GridCoordText(const ParallelGrid& grid, int rank) {
  const GridCoord c = grid.CoordOf(rank);
  return "dp" + std::to_string(c.dp) + " pp" + std::to_string(c.pp) + " tp" + std::to_string(c.tp);
}

namespace {

[[noreturn]] void Reject(const std::string& message) { throw Error(message); }

void CheckSchedule(PipelineSchedule schedule) {
  if (schedule != PipelineSchedule::k1F1B && schedule != PipelineSchedule::kGPipe)
    Reject(std::string("schedule: 3D runs '1f1b' or 'gpipe' (got '") +
           PipelineScheduleName(schedule) + "')");
}

}  // namespace

void CheckThreeDParams(const ThreeDParams& params) {
  const ParallelGrid& g = params.grid;
  CheckParallelGrid(g);
  CheckSchedule(params.schedule);
  CheckMlpConfig(params.model);
  if (params.zero_stage < 0 || params.zero_stage > 1)
    Reject("zero: 3D supports ZeRO stage 0 or 1 (got " + std::to_string(params.zero_stage) + ")");
  CheckPipelineShape(params.schedule, {g.pp, params.microbatches, 1});
  const MlpConfig& m = params.model;
  if (m.batch % g.dp != 0)
    Reject("batch: " + std::to_string(m.batch) + " rows do not split evenly over dp " +
           std::to_string(g.dp) + " replicas");
  const int rows = m.batch / g.dp;
  if (rows % params.microbatches != 0)
    Reject("microbatches: a replica's " + std::to_string(rows) + " rows do not split into " +
           std::to_string(params.microbatches) + " micro-batches");
  if (m.width % g.tp != 0)
    Reject("width: " + std::to_string(m.width) + " is not a multiple of tp " + std::to_string(g.tp));
  if (g.tp == 1) {
    if (g.pp > m.layers)
      Reject("pp: " + std::to_string(g.pp) + " stages but the model has only " +
             std::to_string(m.layers) + " layers");
  } else if (m.layers % 2 != 0 || m.layers / 2 < g.pp) {
    Reject("layers: tp " + std::to_string(g.tp) + " needs whole column/row pairs on every stage: " +
           std::to_string(m.layers) + " layers do not make " + std::to_string(g.pp) +
           " stages of pairs (use an even layer count >= 2 x pp)");
  }
}

std::vector<int> ThreeDStageLayers(const ThreeDParams& params) {
  const int pp = params.grid.pp, layers = params.model.layers;
  const int unit = params.grid.tp > 1 ? 2 : 1, units = layers / unit;
  std::vector<int> first(pp + 1, 0);
  for (int s = 0; s < pp; ++s) first[s + 1] = first[s] + unit * (units / pp + (s < units % pp ? 1 : 0));
  return first;
}

namespace {

// The MLP's buffers and kernels on one rank: see the file comment.
class MlpStageModel : public three_d::StageModel {
 public:
  explicit MlpStageModel(const ThreeDParams& params)
      : params_(params), m_(params.model), tp_(params.grid.tp), h_(params.model.width),
        rows_(params.model.batch / params.grid.dp), mb_rows_(rows_ / params.microbatches),
        ranks_(params.grid.ranks()) {}

  std::vector<ThreeDTensor> AddBuffers(PlanBuilder& b, int rank, GridCoord c, int first,
                                       int end) override {
    RankBuffers& rb = ranks_[rank];
    rb.first = first;
    rb.end = end;
    const std::int64_t batch = static_cast<std::int64_t>(rows_) * h_;
    const std::int64_t shard = h_ / tp_;
    if (first == 0) {
      Buffer in = MlpInitBuffer(rank, "input", m_, MlpTensor::kInput, 0, batch);
      in.init_offset = c.dp * batch;  // this replica's rows of the batch
      in.category = MemoryCategory::kActivations;
      rb.in = b.AddBuffer(in);
    } else {
      rb.in = Activation(b, rank, "x", batch);
      rb.in_grad = Activation(b, rank, "gx", batch);
    }
    std::vector<ThreeDTensor> tensors;
    for (int l = first; l < end; ++l) {
      const std::string ls = std::to_string(l);
      const bool column = IsColumn(l), last = l == m_.layers - 1;
      LayerBuffers lb;
      lb.in_width = l == first ? h_ : OutWidth(l - 1);
      lb.out_width = OutWidth(l);
      // The shard's block of the H×H weight, and of the bias.
      TpBlock wblock{0, h_, 0, h_, h_, h_}, bblock{0, 1, 0, h_, 1, h_};
      Buffer w = MlpInitBuffer(rank, "w" + ls, m_, MlpTensor::kWeight, l, lb.in_width * lb.out_width);
      Buffer bias = MlpInitBuffer(rank, "b" + ls, m_, MlpTensor::kBias, l, lb.out_width);
      if (column && tp_ > 1) {
        wblock.col0 = bblock.col0 = c.tp * shard;
        wblock.cols = bblock.cols = shard;
        w.init_offset = wblock.col0;
        w.init_row = shard;
        w.init_stride = h_;
        bias.init_offset = bblock.col0;
      } else if (tp_ > 1) {
        wblock.row0 = c.tp * shard;
        wblock.rows = shard;
        w.init_offset = wblock.row0 * h_;
      }
      w.category = bias.category = MemoryCategory::kParameters;
      lb.w = b.AddBuffer(w);
      lb.b = b.AddBuffer(bias);
      lb.dw = Gradient(b, rank, "dw" + ls, w.count);
      lb.db = Gradient(b, rank, "db" + ls, bias.count);
      const std::int64_t out = static_cast<std::int64_t>(rows_) * lb.out_width;
      lb.z = Activation(b, rank, last ? "y" : "z" + ls, out);
      lb.a = last ? lb.z : Activation(b, rank, "a" + ls, out);
      lb.ga = Activation(b, rank, last ? "gy" : "ga" + ls, out);
      lb.gz = last ? lb.ga : Activation(b, rank, "gz" + ls, out);
      rb.layers.push_back(lb);
      tensors.push_back({"w" + ls, l, false, lb.w, lb.dw, kNoBuffer, kNoBuffer, w.count, wblock});
      tensors.push_back({"b" + ls, l, true, lb.b, lb.db, kNoBuffer, kNoBuffer, bias.count, bblock});
    }
    if (end == m_.layers) {
      Buffer target = MlpInitBuffer(rank, "target", m_, MlpTensor::kTarget, 0, batch);
      target.init_offset = c.dp * batch;
      target.category = MemoryCategory::kActivations;
      rb.target = b.AddBuffer(target);
      rb.loss = b.AddBuffer(rank, "loss", params_.microbatches);
    }
    return tensors;
  }

  std::vector<three_d::Piece> Forward(int rank, int j) const override {
    const RankBuffers& rb = ranks_[rank];
    std::vector<three_d::Piece> pieces(1);
    BufferSlice in = Rows(rb.in, j, h_);
    for (int l = rb.first; l < rb.end; ++l) {
      const LayerBuffers& lb = rb.layers[l - rb.first];
      const bool last = l == m_.layers - 1;
      pieces.back().layer = l;
      auto& calls = pieces.back().kernels;
      const BufferSlice z = Rows(lb.z, j, lb.out_width);
      calls.push_back(MatMulCall(in, Whole(lb.w, lb.in_width * lb.out_width), z, mb_rows_,
                                 lb.out_width, lb.in_width));
      if (!IsColumn(l)) {  // partial sums: all-reduce over TP, then bias and relu
        pieces.back().tp_allreduce = z;
        pieces.emplace_back();
        pieces.back().layer = l;
      }
      auto& after = pieces.back().kernels;
      after.push_back(ElementwiseCall(KernelKind::kAddBias, Whole(lb.b, lb.out_width), {}, z,
                                      mb_rows_, lb.out_width));
      if (!last)
        after.push_back(ElementwiseCall(KernelKind::kRelu, z, {}, Rows(lb.a, j, lb.out_width),
                                        mb_rows_, lb.out_width));
      else
        after.push_back(ElementwiseCall(KernelKind::kMseLoss, z, Rows(rb.target, j, h_),
                                        BufferSlice{rb.loss, j, 1}, mb_rows_, h_,
                                        1.0f / (2.0f * static_cast<float>(m_.batch))));
      in = Rows(lb.a, j, lb.out_width);
    }
    return pieces;
  }

  std::vector<three_d::Piece> Backward(int rank, int j) const override {
    const RankBuffers& rb = ranks_[rank];
    std::vector<three_d::Piece> pieces(1);
    for (int l = rb.end - 1; l >= rb.first; --l) {
      const LayerBuffers& lb = rb.layers[l - rb.first];
      const bool last = l == m_.layers - 1;
      pieces.back().layer = l;
      auto& calls = pieces.back().kernels;
      const BufferSlice z = Rows(lb.z, j, lb.out_width), ga = Rows(lb.ga, j, lb.out_width);
      const BufferSlice gz = Rows(lb.gz, j, lb.out_width);
      if (last)  // dL/dy = (y − t)/B over the global batch
        calls.push_back(ElementwiseCall(KernelKind::kMseGrad, z, Rows(rb.target, j, h_), ga,
                                        mb_rows_, h_, 1.0f / static_cast<float>(m_.batch)));
      else
        calls.push_back(ElementwiseCall(KernelKind::kReluBackward, ga, z, gz, mb_rows_, lb.out_width));
      const BufferSlice in = l == rb.first ? Rows(rb.in, j, h_)
                                           : Rows(rb.layers[l - 1 - rb.first].a, j, lb.in_width);
      KernelCall dw = MatMulCall(in, gz, Whole(lb.dw, lb.in_width * lb.out_width), lb.in_width,
                                 lb.out_width, mb_rows_);
      dw.transpose_a = true;
      dw.accumulate = true;
      calls.push_back(dw);
      KernelCall db = ElementwiseCall(KernelKind::kColumnSum, gz, {}, Whole(lb.db, lb.out_width),
                                      mb_rows_, lb.out_width);
      db.accumulate = true;
      calls.push_back(db);
      if (l == 0) break;  // nobody needs the gradient of the input data
      const BufferSlice grad_in = l == rb.first ? Rows(rb.in_grad, j, h_)
                                                : Rows(rb.layers[l - 1 - rb.first].ga, j, lb.in_width);
      KernelCall dx = MatMulCall(gz, Whole(lb.w, lb.in_width * lb.out_width), grad_in, mb_rows_,
                                 lb.in_width, lb.out_width);
      dx.transpose_b = true;
      calls.push_back(dx);
      if (IsColumn(l)) {  // partial input gradients: all-reduce over TP (Megatron's f)
        pieces.back().tp_allreduce = grad_in;
        pieces.emplace_back();
      }
    }
    if (pieces.back().kernels.empty() && pieces.size() > 1) pieces.pop_back();
    return pieces;
  }

  BufferSlice Output(int rank, int j) const override {
    const LayerBuffers& lb = ranks_[rank].layers.back();
    return Rows(lb.a, j, lb.out_width);
  }
  BufferSlice Input(int rank, int j) const override { return Rows(ranks_[rank].in, j, h_); }
  BufferSlice InputGrad(int rank, int j) const override { return Rows(ranks_[rank].in_grad, j, h_); }
  BufferSlice OutputGrad(int rank, int j) const override {
    const LayerBuffers& lb = ranks_[rank].layers.back();
    return Rows(lb.ga, j, lb.out_width);
  }

  three_d::Piece Optimizer(const ThreeDTensor&, BufferSlice param, BufferSlice grad,
                           BufferSlice m1, BufferSlice m2) const override {
    three_d::Piece piece;
    piece.kernels.push_back(MlpOptimizerCall(m_, param, grad, m1, m2, 1));
    return piece;
  }
  bool NeedsMoments() const override { return m_.optimizer == OptimizerKind::kAdam; }
  BufferId Loss(int rank) const override { return ranks_[rank].loss; }

 private:
  struct LayerBuffers {
    int in_width = 0, out_width = 0;
    BufferId w = kNoBuffer, b = kNoBuffer, dw = kNoBuffer, db = kNoBuffer;
    BufferId z = kNoBuffer, a = kNoBuffer, gz = kNoBuffer, ga = kNoBuffer;
  };
  struct RankBuffers {
    int first = 0, end = 0;
    BufferId in = kNoBuffer, in_grad = kNoBuffer, target = kNoBuffer, loss = kNoBuffer;
    std::vector<LayerBuffers> layers;
  };

  bool IsColumn(int layer) const { return layer % 2 == 0; }
  int OutWidth(int layer) const { return IsColumn(layer) && layer != m_.layers - 1 ? h_ / tp_ : h_; }
  BufferSlice Rows(BufferId buffer, int j, int width) const {
    const std::int64_t n = static_cast<std::int64_t>(mb_rows_) * width;
    return {buffer, j * n, n};
  }
  static BufferSlice Whole(BufferId buffer, std::int64_t count) { return {buffer, 0, count}; }
  static BufferId Activation(PlanBuilder& b, int rank, const std::string& name, std::int64_t count) {
    Buffer buffer;
    buffer.name = name;
    buffer.rank = rank;
    buffer.count = count;
    buffer.category = MemoryCategory::kActivations;
    return b.AddBuffer(buffer);
  }
  static BufferId Gradient(PlanBuilder& b, int rank, const std::string& name, std::int64_t count) {
    Buffer buffer;
    buffer.name = name;
    buffer.rank = rank;
    buffer.count = count;
    buffer.category = MemoryCategory::kGradients;
    return b.AddBuffer(buffer);
  }

  const ThreeDParams& params_;
  const MlpConfig& m_;
  const int tp_, h_, rows_, mb_rows_;
  std::vector<RankBuffers> ranks_;
};

}  // namespace

ThreeDPlan BuildThreeD(const ThreeDParams& params) {
  CheckThreeDParams(params);
  three_d::SkeletonParams sp;
  sp.grid = params.grid;
  sp.schedule = params.schedule;
  sp.microbatches = params.microbatches;
  sp.zero_stage = params.zero_stage;
  sp.skip_dp_reduce = params.skip_dp_reduce;
  sp.stage_first_layer = ThreeDStageLayers(params);
  sp.title = "3D " + params.grid.Text() + ", " + PipelineScheduleName(params.schedule) + ", " +
             std::to_string(params.microbatches) + " micro-batches" +
             (params.zero_stage ? ", ZeRO-1" : "") + ", MLP " + std::to_string(params.model.layers) +
             "x" + std::to_string(params.model.width);
  MlpStageModel model(params);
  ThreeDPlan out = three_d::BuildSkeleton(sp, model);
  out.params = params;
  return out;
}

}  // namespace shardlab
