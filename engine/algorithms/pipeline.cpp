#include "engine/algorithms/pipeline.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "engine/core/error.h"

namespace shardlab {
namespace {

[[noreturn]] void Reject(const std::string& message) {
  throw Error(message, ErrorKind::kInvalidInput);
}

}  // namespace

void CheckPipelineParams(const PipelineParams& params) {
  const PipelineShape& shape = params.shape;
  CheckPipelineShape(params.schedule, shape);
  CheckMlpConfig(params.model);
  const int layers = params.model.layers, p = shape.stages, v = shape.chunks;
  if (params.schedule == PipelineSchedule::kInterleaved1F1B && p < 2)
    Reject("stages: interleaved 1F1B needs at least 2 stages (one stage has nobody to interleave with)");
  if (p > layers)
    Reject("stages: " + std::to_string(p) + " stages but the model has only " +
           std::to_string(layers) + " layers (each stage needs at least one layer)");
  if (params.schedule == PipelineSchedule::kInterleaved1F1B && layers % (p * v) != 0)
    Reject("chunks: " + std::to_string(p) + " stages x " + std::to_string(v) + " chunks = " +
           std::to_string(p * v) + " model chunks do not divide " + std::to_string(layers) +
           " layers evenly (interleaving needs layers to be a multiple of stages x chunks)");
  if (params.model.batch % shape.microbatches != 0)
    Reject("microbatches: a batch of " + std::to_string(params.model.batch) +
           " rows does not split evenly into " + std::to_string(shape.microbatches) +
           " micro-batches (choose a divisor of the batch)");
}

std::vector<int> PipelineChunkLayers(const PipelineParams& params) {
  const int chunks = params.shape.stages * params.shape.chunks;
  const int layers = params.model.layers;
  std::vector<int> first(chunks + 1, 0);
  for (int g = 0; g < chunks; ++g)
    first[g + 1] = first[g] + layers / chunks + (g < layers % chunks ? 1 : 0);
  return first;
}

std::vector<std::vector<int>> PipelineSlotTicks(const PipelineShape& shape,
                                                const std::vector<std::vector<PipelineSlot>>& order) {
  const int p = shape.stages, m = shape.microbatches, chunks = p * shape.chunks;
  // Tick at which F/B of (global chunk, micro-batch) ran; -1 = not yet.
  std::vector<int> f_tick(static_cast<std::size_t>(chunks) * m, -1), b_tick = f_tick;
  auto at = [m](int g, int j) { return static_cast<std::size_t>(g) * m + j; };
  auto done_before = [](int tick, int now) { return tick >= 0 && tick < now; };
  std::vector<std::vector<int>> ticks(p);
  std::vector<std::size_t> next(p, 0);
  std::size_t remaining = 0;
  for (int s = 0; s < p; ++s) {
    ticks[s].assign(order[s].size(), -1);
    remaining += order[s].size();
  }
  for (int now = 0; remaining > 0; ++now) {
    std::size_t ran = 0;
    for (int s = 0; s < p; ++s) {
      if (next[s] == order[s].size()) continue;
      const PipelineSlot& slot = order[s][next[s]];
      const int g = GlobalChunk(shape, s, slot.chunk), j = slot.microbatch;
      bool ready = false;
      switch (slot.pass) {
        case PipelinePass::kForward: ready = g == 0 || done_before(f_tick[at(g - 1, j)], now); break;
        case PipelinePass::kBackward:
          ready = done_before(f_tick[at(g, j)], now) &&
                  (g == chunks - 1 || done_before(b_tick[at(g + 1, j)], now));
          break;
        case PipelinePass::kWeight: ready = done_before(b_tick[at(g, j)], now); break;
      }
      if (!ready) continue;
      if (slot.pass == PipelinePass::kForward) f_tick[at(g, j)] = now;
      if (slot.pass == PipelinePass::kBackward) b_tick[at(g, j)] = now;
      ticks[s][next[s]++] = now;
      ++ran;
    }
    if (ran == 0)
      throw Error("pipeline schedule deadlocks at tick " + std::to_string(now), ErrorKind::kRuntime);
    remaining -= ran;
  }
  return ticks;
}

namespace {

// Builds the plan; one instance per BuildPipeline call.
class PipelineBuilder {
 public:
  explicit PipelineBuilder(const PipelineParams& params)
      : params_(params),
        shape_(params.shape),
        model_(params.model),
        h_(params.model.width),
        rows_(params.model.batch / params.shape.microbatches),
        chunks_(params.shape.stages * params.shape.chunks),
        builder_(Title(params), params.shape.stages) {}

  PipelinePlan Build() {
    PipelinePlan out;
    out.params = params_;
    out.order = PipelineOrder(params_.schedule, shape_);
    out.chunk_first_layer = PipelineChunkLayers(params_);
    first_ = out.chunk_first_layer;
    const std::vector<std::vector<int>> ticks = PipelineSlotTicks(shape_, out.order);
    AddBuffers(out);

    // Every slot in tick order (stage order within a tick): the creation
    // order that keeps send and recv lanes consistent (see pipeline.h).
    std::vector<std::tuple<int, int, std::size_t>> slots;  // tick, stage, index
    int last_tick = 0;
    for (int s = 0; s < shape_.stages; ++s)
      for (std::size_t i = 0; i < out.order[s].size(); ++i) {
        slots.emplace_back(ticks[s][i], s, i);
        last_tick = std::max(last_tick, ticks[s][i]);
      }
    std::sort(slots.begin(), slots.end());
    const std::size_t per_dir = static_cast<std::size_t>(chunks_) * shape_.microbatches;
    recv_forward_.assign(per_dir, kNoOp);
    recv_backward_.assign(per_dir, kNoOp);
    out.slot_ops.resize(shape_.stages);
    for (int s = 0; s < shape_.stages; ++s) out.slot_ops[s].assign(out.order[s].size(), kNoOp);
    for (const auto& [tick, stage, index] : slots)
      out.slot_ops[stage][index] = AddSlot(stage, out.order[stage][index], tick);
    for (int s = 0; s < shape_.stages; ++s)
      AddOptimizerStep(s, last_tick + 1, out.slot_ops[s].back(), out);
    out.plan = builder_.Finish();
    return out;
  }

 private:
  static std::string Title(const PipelineParams& params) {
    std::string title = std::string(PipelineScheduleTitle(params.schedule)) + ", " +
                        std::to_string(params.shape.stages) + " stages, " +
                        std::to_string(params.shape.microbatches) + " micro-batches";
    if (params.shape.chunks > 1) title += ", " + std::to_string(params.shape.chunks) + " chunks";
    return title + ", MLP " + std::to_string(params.model.layers) + "x" +
           std::to_string(params.model.width);
  }

  int StageOf(int g) const { return g % shape_.stages; }
  std::size_t At(int g, int j) const { return static_cast<std::size_t>(g) * shape_.microbatches + j; }
  BufferSlice Rows(BufferId buffer, int j) const {
    return BufferSlice{buffer, static_cast<std::int64_t>(j) * rows_ * h_,
                       static_cast<std::int64_t>(rows_) * h_};
  }
  BufferId Zeros(int rank, const std::string& name, std::int64_t count) {
    return builder_.AddBuffer(rank, name, count);
  }

  void AddBuffers(PipelinePlan& out) {
    const int layers = model_.layers;
    const std::int64_t batch_elems = static_cast<std::int64_t>(model_.batch) * h_;
    const std::int64_t hh = static_cast<std::int64_t>(h_) * h_;
    const bool adam = model_.optimizer == OptimizerKind::kAdam;
    out.layers.resize(layers);
    z_.assign(layers, kNoBuffer);
    a_ = gz_ = ga_ = adam_w_m_ = adam_w_v_ = adam_b_m_ = adam_b_v_ = z_;
    chunk_in_.assign(chunks_, kNoBuffer);
    chunk_in_grad_ = chunk_in_;
    for (int g = 0; g < chunks_; ++g) {
      const int s = StageOf(g);
      const std::string gs = std::to_string(g);
      chunk_in_[g] = g == 0 ? builder_.AddBuffer(MlpInitBuffer(s, "input", model_, MlpTensor::kInput,
                                                               0, batch_elems))
                            : Zeros(s, "x.c" + gs, batch_elems);
      if (g > 0) chunk_in_grad_[g] = Zeros(s, "gx.c" + gs, batch_elems);
      for (int l = first_[g]; l < first_[g + 1]; ++l) {
        const std::string ls = std::to_string(l);
        PipelineLayerBuffers& lb = out.layers[l];
        lb.rank = s;
        lb.weight = builder_.AddBuffer(MlpInitBuffer(s, "w" + ls, model_, MlpTensor::kWeight, l, hh));
        lb.bias = builder_.AddBuffer(MlpInitBuffer(s, "b" + ls, model_, MlpTensor::kBias, l, h_));
        lb.weight_grad = Zeros(s, "dw" + ls, hh);
        lb.bias_grad = Zeros(s, "db" + ls, h_);
        if (adam) {
          adam_w_m_[l] = Zeros(s, "adam.m.w" + ls, hh);
          adam_w_v_[l] = Zeros(s, "adam.v.w" + ls, hh);
          adam_b_m_[l] = Zeros(s, "adam.m.b" + ls, h_);
          adam_b_v_[l] = Zeros(s, "adam.v.b" + ls, h_);
        }
        const bool last = l == layers - 1;
        z_[l] = Zeros(s, last ? "y" : "z" + ls, batch_elems);
        a_[l] = last ? z_[l] : Zeros(s, "a" + ls, batch_elems);
        ga_[l] = Zeros(s, last ? "gy" : "ga" + ls, batch_elems);
        gz_[l] = last ? ga_[l] : Zeros(s, "gz" + ls, batch_elems);
      }
    }
    const int last_stage = StageOf(chunks_ - 1);
    target_ = builder_.AddBuffer(
        MlpInitBuffer(last_stage, "target", model_, MlpTensor::kTarget, 0, batch_elems));
    out.loss = loss_ = Zeros(last_stage, "loss", shape_.microbatches);
    out.loss_rank = last_stage;
    layers_ = out.layers;
  }

  static BufferSlice Whole(BufferId buffer, std::int64_t count) { return {buffer, 0, count}; }

  std::vector<KernelCall> ForwardKernels(int g, int j) const {
    std::vector<KernelCall> calls;
    const std::int64_t hh = static_cast<std::int64_t>(h_) * h_;
    BufferSlice in = Rows(chunk_in_[g], j);
    for (int l = first_[g]; l < first_[g + 1]; ++l) {
      calls.push_back(MatMulCall(in, Whole(layers_[l].weight, hh), Rows(z_[l], j), rows_, h_, h_));
      calls.push_back(ElementwiseCall(KernelKind::kAddBias, Whole(layers_[l].bias, h_), {},
                                  Rows(z_[l], j), rows_, h_));
      if (a_[l] != z_[l])
        calls.push_back(ElementwiseCall(KernelKind::kRelu, Rows(z_[l], j), {}, Rows(a_[l], j), rows_, h_));
      in = Rows(a_[l], j);
    }
    if (g == chunks_ - 1)  // the loss, Σ‖y − t‖²/(2B) over this micro-batch's rows
      calls.push_back(ElementwiseCall(KernelKind::kMseLoss, in, Rows(target_, j),
                                  BufferSlice{loss_, j, 1}, rows_, h_,
                                  1.0f / (2.0f * static_cast<float>(model_.batch))));
    return calls;
  }

  // The backward of chunk g for micro-batch j: the input gradients (what the
  // previous stage waits for) and, unless `split`, the weight gradients
  // too; with `split` they come later from WeightKernels (ZB-H1's W).
  std::vector<KernelCall> BackwardKernels(int g, int j, bool split) const {
    std::vector<KernelCall> calls;
    const std::int64_t hh = static_cast<std::int64_t>(h_) * h_;
    const int last_layer = model_.layers - 1;
    if (g == chunks_ - 1)  // dL/dy = (y − t)/B: the whole batch's mean
      calls.push_back(ElementwiseCall(KernelKind::kMseGrad, Rows(z_[last_layer], j), Rows(target_, j),
                                  Rows(ga_[last_layer], j), rows_, h_,
                                  1.0f / static_cast<float>(model_.batch)));
    for (int l = first_[g + 1] - 1; l >= first_[g]; --l) {
      if (gz_[l] != ga_[l])
        calls.push_back(ElementwiseCall(KernelKind::kReluBackward, Rows(ga_[l], j), Rows(z_[l], j),
                                    Rows(gz_[l], j), rows_, h_));
      if (!split) AppendWeightGradient(g, l, j, calls);
      if (l == 0) break;  // nobody needs the gradient of the input data
      const BufferSlice grad_in = l == first_[g] ? Rows(chunk_in_grad_[g], j) : Rows(ga_[l - 1], j);
      KernelCall dx = MatMulCall(Rows(gz_[l], j), Whole(layers_[l].weight, hh), grad_in, rows_, h_, h_);
      dx.transpose_b = true;
      calls.push_back(dx);
    }
    return calls;
  }

  std::vector<KernelCall> WeightKernels(int g, int j) const {
    std::vector<KernelCall> calls;
    for (int l = first_[g + 1] - 1; l >= first_[g]; --l) AppendWeightGradient(g, l, j, calls);
    return calls;
  }

  // dW_l += input_lᵀ·gz_l and db_l += Σ_rows gz_l over micro-batch j's rows.
  void AppendWeightGradient(int g, int l, int j, std::vector<KernelCall>& calls) const {
    const std::int64_t hh = static_cast<std::int64_t>(h_) * h_;
    const BufferSlice in = l == first_[g] ? Rows(chunk_in_[g], j) : Rows(a_[l - 1], j);
    KernelCall dw = MatMulCall(in, Rows(gz_[l], j), Whole(layers_[l].weight_grad, hh), h_, h_, rows_);
    dw.transpose_a = true;
    dw.accumulate = true;
    calls.push_back(dw);
    KernelCall db = ElementwiseCall(KernelKind::kColumnSum, Rows(gz_[l], j), {},
                                    Whole(layers_[l].bias_grad, h_), rows_, h_);
    db.accumulate = true;
    calls.push_back(db);
  }

  OpId AddSlot(int stage, const PipelineSlot& slot, int tick) {
    const int g = GlobalChunk(shape_, stage, slot.chunk), j = slot.microbatch;
    Op op;
    op.rank = stage;
    op.lane = Lane::kCompute;
    op.step = tick;
    op.tags.phase = slot.pass == PipelinePass::kForward    ? Phase::kForward
                    : slot.pass == PipelinePass::kBackward ? Phase::kBackward
                                                           : Phase::kWeightGrad;
    op.tags.microbatch = j;
    op.tags.chunk = g;
    op.tags.layer = first_[g];
    std::vector<OpId> deps;
    OpTags link_tags = op.tags;
    if (slot.pass == PipelinePass::kWeight) return builder_.AddCompute(op, WeightKernels(g, j), {});
    if (slot.pass == PipelinePass::kForward) {
      if (g > 0) deps.push_back(recv_forward_[At(g, j)]);
      const OpId id = builder_.AddCompute(op, ForwardKernels(g, j), deps);
      if (g + 1 < chunks_) {  // the activation goes to the next chunk's stage
        const int last = first_[g + 1] - 1;
        link_tags.layer = last;
        const auto t = builder_.AddTransfer(stage, StageOf(g + 1), Rows(a_[last], j),
                                            Rows(chunk_in_[g + 1], j), ReduceOp::kNone, tick,
                                            link_tags, {id}, {});
        recv_forward_[At(g + 1, j)] = t.recv;
      }
      return id;
    }
    if (g + 1 < chunks_) deps.push_back(recv_backward_[At(g, j)]);
    const OpId id = builder_.AddCompute(op, BackwardKernels(g, j, SplitsBackward(params_.schedule)), deps);
    if (g > 0) {  // the input gradient goes back to the previous chunk's stage
      const int prev_last = first_[g] - 1;
      link_tags.layer = prev_last;
      const auto t = builder_.AddTransfer(stage, StageOf(g - 1), Rows(chunk_in_grad_[g], j),
                                          Rows(ga_[prev_last], j), ReduceOp::kNone, tick,
                                          link_tags, {id}, {});
      recv_backward_[At(g - 1, j)] = t.recv;
    }
    return id;
  }

  void AddOptimizerStep(int stage, int step, OpId after, PipelinePlan& out) {
    std::vector<KernelCall> calls;
    for (int l = 0; l < model_.layers; ++l) {
      if (out.layers[l].rank != stage) continue;
      const std::int64_t hh = static_cast<std::int64_t>(h_) * h_;
      const PipelineLayerBuffers& lb = out.layers[l];
      const BufferId params[2] = {lb.weight, lb.bias};
      const BufferId grads[2] = {lb.weight_grad, lb.bias_grad};
      const BufferId m1[2] = {adam_w_m_[l], adam_b_m_[l]};
      const BufferId m2[2] = {adam_w_v_[l], adam_b_v_[l]};
      const std::int64_t counts[2] = {hh, h_};
      for (int t = 0; t < 2; ++t)
        calls.push_back(MlpOptimizerCall(model_, Whole(params[t], counts[t]),
                                         Whole(grads[t], counts[t]), Whole(m1[t], counts[t]),
                                         Whole(m2[t], counts[t]), 1));
    }
    Op op;
    op.rank = stage;
    op.lane = Lane::kCompute;
    op.step = step;
    op.tags.phase = Phase::kOptimizer;
    builder_.AddCompute(op, calls, {after});
  }

  const PipelineParams& params_;
  const PipelineShape& shape_;
  const MlpConfig& model_;
  const int h_, rows_, chunks_;
  PlanBuilder builder_;
  std::vector<int> first_;
  std::vector<PipelineLayerBuffers> layers_;
  std::vector<BufferId> z_, a_, gz_, ga_, adam_w_m_, adam_w_v_, adam_b_m_, adam_b_v_;
  std::vector<BufferId> chunk_in_, chunk_in_grad_;
  BufferId target_ = kNoBuffer, loss_ = kNoBuffer;
  std::vector<OpId> recv_forward_, recv_backward_;  // [global chunk][micro-batch]
};

}  // namespace

std::string PipelineSlotLabel(const OpTags& tags, const PipelineShape& shape) {
  if (tags.phase == Phase::kOptimizer) return "opt";
  const char* pass = tags.phase == Phase::kForward      ? "F"
                     : tags.phase == Phase::kBackward   ? "B"
                     : tags.phase == Phase::kWeightGrad ? "W"
                                                        : nullptr;
  if (pass == nullptr) return "";
  std::string label = pass + std::to_string(tags.microbatch);
  if (shape.chunks > 1 && tags.chunk >= 0 && shape.stages > 0)
    label += "." + std::to_string(tags.chunk / shape.stages);
  return label;
}

std::string PipelineStageLayers(const PipelinePlan& pipeline, int stage) {
  std::string text;
  const int p = pipeline.params.shape.stages;
  for (std::size_t g = static_cast<std::size_t>(stage); g + 1 < pipeline.chunk_first_layer.size();
       g += static_cast<std::size_t>(p)) {
    const int a = pipeline.chunk_first_layer[g], b = pipeline.chunk_first_layer[g + 1] - 1;
    if (!text.empty()) text += ",";
    text += a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b);
  }
  return text;
}

PipelinePlan BuildPipeline(const PipelineParams& params) {
  CheckPipelineParams(params);
  return PipelineBuilder(params).Build();
}

}  // namespace shardlab
