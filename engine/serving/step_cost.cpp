#include "engine/serving/step_cost.h"

#include <algorithm>

namespace shardlab {

TimeNs StepCostModel::Parts::total_ns() const { return std::max(compute_ns, memory_ns) + allreduce_ns + pipeline_ns; }

TimeNs StepCostModel::AllReduceNs(std::int64_t tokens) const {
  if (tp <= 1 || ring_gbps <= 0 || tokens <= 0) return 0;
  const double bytes = static_cast<double>(tokens) * model.hidden * DTypeBytes(dtype);
  return static_cast<TimeNs>(2.0 * (tp - 1) / tp * bytes / ring_gbps + 2.0 * (tp - 1) * ring_alpha_ns);
}

Bytes StepCostModel::KvBytesPerToken() const {
  const std::int64_t layers_per_stage = (model.layers + pp - 1) / pp;
  return 2 * layers_per_stage * (model.hidden / tp) * DTypeBytes(dtype);
}

Bytes StepCostModel::WeightBytesPerGpu() const {
  const double per_layer = static_cast<double>(model.layer_parameters()) / tp;
  const double layers = static_cast<double>(model.layers) / pp;
  const double embed = static_cast<double>(model.vocab + model.max_context) * model.hidden;  // stage 0
  const double head = static_cast<double>(model.hidden) * model.vocab;                     // last stage
  return static_cast<Bytes>(weight_bytes_per_param * (per_layer * layers + std::max(embed, head)));
}

StepCostModel::Parts StepCostModel::Cost(const StepWork& w) const {
  Parts p;
  const std::int64_t t = w.prefill_tokens + w.decode_rows;
  if (t <= 0) return p;
  const double h = model.hidden, v = model.vocab, layers = model.layers;
  // The whole model once per step, stage after stage (one request batch
  // has no other micro-batch to fill the pipeline with).
  const double flops = 2.0 * t * layers * static_cast<double>(model.layer_parameters()) / tp +
                       4.0 * layers * h / tp * static_cast<double>(w.prefill_pairs + w.decode_context) +
                       2.0 * t * h * v;
  const double bytes = weight_bytes_per_param * (layers * static_cast<double>(model.layer_parameters()) / tp + h * v) +
                       2.0 * layers * h / tp * DTypeBytes(dtype) * static_cast<double>(w.decode_context + w.prefill_tokens);
  p.compute_ns = tflops > 0 ? static_cast<TimeNs>(flops / (tflops * 1e3)) : 0;
  p.memory_ns = memory_gbps > 0 ? static_cast<TimeNs>(bytes / memory_gbps) : 0;
  p.allreduce_ns = 2 * model.layers * AllReduceNs(t);
  if (pp > 1 && hop_gbps > 0)
    p.pipeline_ns = (pp - 1) * static_cast<TimeNs>(hop_alpha_ns + static_cast<double>(t) * h * DTypeBytes(dtype) / hop_gbps);
  return p;
}

}  // namespace shardlab
