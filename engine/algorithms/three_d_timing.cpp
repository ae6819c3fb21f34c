// 3D parallelism at paper scale, timing only: the skeleton's schedule and
// groups (three_d_skeleton.h) with a transformer's shapes and no data.
//
// Granularity, to keep 512 ranks × 96 layers × dozens of micro-batches
// tractable (about a million ops at dp 64 × tp 8):
//   - per micro-batch and phase, ONE compute op per rank with the FLOPs of
//     all its stage's layers (forward: LayerForwardFlopsPerSequence × b / tp,
//     the logits on the last stage; backward: twice that), on fp16 buffers
//     so the simulator uses the GPU's tensor-core rate;
//   - after it ONE TP all-reduce carrying the bytes of all the stage's
//     Megatron all-reduces for that pass (2 per layer of s·b·h fp16
//     values). The bytes are exact; the per-all-reduce latencies are paid
//     once instead of 2·layers times, and TP communication never overlaps
//     compute (as in Megatron without sequence-parallel overlap);
//   - the stage's parameters as `dp_buckets` fp16 buckets: DP all-reduces
//     (or ZeRO-1 reduce-scatter + all-gather) after the last backward, not
//     overlapped with it;
//   - the optimizer: memory-bound, 16 bytes touched per parameter.
// Embeddings and logits share one table on stage 0 and the last stage;
// their all-reduce between those stages is left out.
#include "engine/algorithms/three_d.h"

#include <algorithm>

#include "engine/algorithms/three_d_skeleton.h"
#include "engine/core/error.h"

namespace shardlab {

void CheckThreeDTimingParams(const ThreeDTimingParams& params) {
  const ParallelGrid& g = params.grid;
  CheckParallelGrid(g);
  ValidateTransformerShape(params.model);
  if (params.schedule != PipelineSchedule::k1F1B && params.schedule != PipelineSchedule::kGPipe)
    throw Error(std::string("schedule: 3D runs '1f1b' or 'gpipe' (got '") +
                PipelineScheduleName(params.schedule) + "')");
  if (params.zero_stage < 0 || params.zero_stage > 1)
    throw Error("zero: 3D supports ZeRO stage 0 or 1 (got " + std::to_string(params.zero_stage) + ")");
  const TransformerShape& m = params.model;
  if (g.pp > m.layers)
    throw Error("pp: " + std::to_string(g.pp) + " stages but " + m.name + " has " +
                std::to_string(m.layers) + " layers");
  if (m.heads % g.tp != 0 || m.hidden % g.tp != 0)
    throw Error("tp: " + std::to_string(g.tp) + " does not divide " + m.name + "'s " +
                std::to_string(m.heads) + " heads (Megatron splits attention by heads)");
  const std::int64_t per_step = static_cast<std::int64_t>(g.dp) * m.micro_batch;
  if (m.global_batch % per_step != 0)
    throw Error("batch: the global batch of " + std::to_string(m.global_batch) +
                " sequences does not split into dp " + std::to_string(g.dp) + " x micro-batch " +
                std::to_string(m.micro_batch));
  if (params.dp_buckets < 1) throw Error("buckets: must be at least 1");
}

namespace {

class TransformerStageModel : public three_d::StageModel {
 public:
  explicit TransformerStageModel(const ThreeDTimingParams& params)
      : p_(params), m_(params.model), ranks_(params.grid.ranks()) {}

  std::vector<ThreeDTensor> AddBuffers(PlanBuilder& b, int rank, GridCoord c, int first,
                                       int end) override {
    RankBuffers& rb = ranks_[rank];
    const int layers = end - first;
    const std::int64_t tokens = static_cast<std::int64_t>(m_.seq_len) * m_.micro_batch * m_.hidden;
    rb.pass_elements = 2 * layers * tokens;
    rb.act = Add(b, rank, "act", std::max<std::int64_t>(rb.pass_elements, tokens),
                 MemoryCategory::kActivations);
    rb.in = Add(b, rank, "x", tokens, MemoryCategory::kActivations);
    rb.in_grad = Add(b, rank, "gx", tokens, MemoryCategory::kActivations);
    rb.out_grad = Add(b, rank, "gy", tokens, MemoryCategory::kActivations);
    const bool last = end == m_.layers;
    const double seq_flops = layers * m_.LayerForwardFlopsPerSequence() +
                             (last ? m_.LogitsForwardFlopsPerSequence() : 0.0);
    rb.forward_flops = seq_flops * m_.micro_batch / p_.grid.tp;
    double params = layers * m_.LayerParameters();
    if (first == 0) params += m_.EmbeddingParameters();
    const auto stage_params = static_cast<std::int64_t>(params / p_.grid.tp);
    std::vector<ThreeDTensor> tensors;
    for (int k = 0; k < p_.dp_buckets; ++k) {
      ThreeDTensor t;
      t.name = "bucket" + std::to_string(k);
      t.layer = first;
      t.count = stage_params / p_.dp_buckets + (k < stage_params % p_.dp_buckets ? 1 : 0);
      t.param = Add(b, rank, "params." + t.name, t.count, MemoryCategory::kParameters);
      t.grad = Add(b, rank, "grads." + t.name, t.count, MemoryCategory::kGradients);
      tensors.push_back(t);
    }
    (void)c;
    return tensors;
  }

  std::vector<three_d::Piece> Forward(int rank, int) const override { return Pass(rank, 1.0); }
  std::vector<three_d::Piece> Backward(int rank, int) const override { return Pass(rank, 2.0); }
  BufferSlice Output(int rank, int) const override { return Tokens(ranks_[rank].act); }
  BufferSlice Input(int rank, int) const override { return Tokens(ranks_[rank].in); }
  BufferSlice InputGrad(int rank, int) const override { return Tokens(ranks_[rank].in_grad); }
  BufferSlice OutputGrad(int rank, int) const override { return Tokens(ranks_[rank].out_grad); }

  three_d::Piece Optimizer(const ThreeDTensor&, BufferSlice param, BufferSlice, BufferSlice,
                           BufferSlice) const override {
    three_d::Piece piece;
    piece.bytes = 16 * param.count;  // fp16 param and grad, fp32 master, m and v
    piece.written = param;
    return piece;
  }
  bool NeedsMoments() const override { return true; }

 private:
  struct RankBuffers {
    BufferId act = kNoBuffer, in = kNoBuffer, in_grad = kNoBuffer, out_grad = kNoBuffer;
    std::int64_t pass_elements = 0;
    double forward_flops = 0;
  };

  std::vector<three_d::Piece> Pass(int rank, double scale) const {
    const RankBuffers& rb = ranks_[rank];
    three_d::Piece piece;
    piece.flops = rb.forward_flops * scale;
    piece.written = Tokens(rb.act);
    piece.tp_allreduce = {rb.act, 0, rb.pass_elements};
    return {piece};
  }
  BufferSlice Tokens(BufferId buffer) const {
    return {buffer, 0, static_cast<std::int64_t>(m_.seq_len) * m_.micro_batch * m_.hidden};
  }
  static BufferId Add(PlanBuilder& b, int rank, const std::string& name, std::int64_t count,
                      MemoryCategory category) {
    Buffer buffer;
    buffer.name = name;
    buffer.rank = rank;
    buffer.count = count;
    buffer.dtype = DType::kF16;
    buffer.category = category;
    return b.AddBuffer(buffer);
  }

  const ThreeDTimingParams& p_;
  const TransformerShape& m_;
  std::vector<RankBuffers> ranks_;
};

}  // namespace

ThreeDPlan BuildThreeDTiming(const ThreeDTimingParams& params) {
  CheckThreeDTimingParams(params);
  three_d::SkeletonParams sp;
  sp.grid = params.grid;
  sp.schedule = params.schedule;
  sp.microbatches = params.model.global_batch / (params.grid.dp * params.model.micro_batch);
  sp.zero_stage = params.zero_stage;
  const int pp = params.grid.pp, layers = params.model.layers;
  sp.stage_first_layer.assign(pp + 1, 0);
  for (int s = 0; s < pp; ++s)
    sp.stage_first_layer[s + 1] = sp.stage_first_layer[s] + layers / pp + (s < layers % pp ? 1 : 0);
  sp.title = "3D " + params.grid.Text() + ", " + PipelineScheduleName(params.schedule) + ", " +
             std::to_string(sp.microbatches) + " micro-batches" +
             (params.zero_stage ? ", ZeRO-1" : "") + ", " + params.model.name + " (timing only)";
  TransformerStageModel model(params);
  ThreeDPlan out = three_d::BuildSkeleton(sp, model);
  out.params.grid = params.grid;
  out.params.schedule = params.schedule;
  out.params.microbatches = sp.microbatches;
  out.params.zero_stage = params.zero_stage;
  return out;
}

}  // namespace shardlab
