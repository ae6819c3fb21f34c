#include "engine/scenarios/pipeline_metrics.h"

#include <algorithm>
#include <limits>

#include "engine/run/metrics.h"

namespace shardlab {

PipelineMetrics MeasurePipeline(const PipelinePlan& pipeline, const Plan& plan,
                                std::span<const Event> events) {
  const int stages = plan.num_ranks;
  const PipelineSchedule schedule = pipeline.params.schedule;
  const PipelineShape& shape = pipeline.params.shape;

  PipelineMetrics out;
  out.stages.resize(stages);
  out.step_ns = RunSpanNs(events);
  out.formula_bubble_over_useful = FormulaBubbleOverUseful(schedule, shape);
  out.formula_bubble_of_step = FormulaBubbleOfStep(schedule, shape);

  TimeNs first = std::numeric_limits<TimeNs>::max(), last = 0;
  std::vector<std::vector<const Event*>> slots(stages);
  for (const Event& e : events) {
    const Op& op = plan.ops[e.op];
    if (op.kind == OpKind::kSend) {
      out.transfer_ns += e.duration_ns();
      ++out.transfers;
      out.transfer_bytes += e.bytes;
    }
    if (op.kind != OpKind::kCompute) continue;
    PipelineStageMetrics& st = out.stages[e.rank];
    switch (op.tags.phase) {
      case Phase::kForward: st.forward_ns += e.duration_ns(); break;
      case Phase::kBackward: st.backward_ns += e.duration_ns(); break;
      case Phase::kWeightGrad: st.weight_ns += e.duration_ns(); break;
      default: continue;
    }
    first = std::min(first, e.start_ns);
    last = std::max(last, e.end_ns);
    slots[e.rank].push_back(&e);
  }
  if (last < first) return out;  // no F/B events
  out.span_ns = last - first;
  TimeNs busy = 0, idle = 0;
  for (int s = 0; s < stages; ++s) {
    PipelineStageMetrics& st = out.stages[s];
    st.busy_ns = st.forward_ns + st.backward_ns + st.weight_ns;
    st.idle_ns = out.span_ns - st.busy_ns;
    st.bubble_over_useful = st.busy_ns > 0 ? st.idle_ns / st.busy_ns : 0;
    busy += st.busy_ns;
    idle += st.idle_ns;
    std::sort(slots[s].begin(), slots[s].end(),
              [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
    const Phase frees = SplitsBackward(schedule) ? Phase::kWeightGrad : Phase::kBackward;
    int held = 0;
    for (const Event* e : slots[s]) {
      const Phase phase = plan.ops[e->op].tags.phase;
      held += phase == Phase::kForward ? 1 : phase == frees ? -1 : 0;
      st.peak_inflight = std::max(st.peak_inflight, held);
    }
    st.formula_peak_inflight = FormulaPeakInFlight(schedule, shape, s);
  }
  out.bubble_over_useful = busy > 0 ? idle / busy : 0;
  out.bubble_of_step = out.span_ns > 0 ? idle / (stages * out.span_ns) : 0;
  return out;
}

PipelineBubbleExcess ExplainPipelineBubble(const PipelineMetrics& metrics,
                                           const PipelineShape& shape) {
  PipelineBubbleExcess out;
  out.above_formula =
      metrics.bubble_over_useful > metrics.formula_bubble_over_useful * 1.25 + 0.01;
  const double slots = static_cast<double>(shape.stages) * shape.microbatches * shape.chunks;
  for (const PipelineStageMetrics& st : metrics.stages) {
    out.forward_ns += st.forward_ns / slots;
    out.backward_ns += st.backward_ns / slots;
    out.weight_ns += st.weight_ns / slots;
  }
  out.transfer_ns =
      metrics.transfers > 0 ? metrics.transfer_ns / static_cast<double>(metrics.transfers) : 0;
  out.communication = out.transfer_ns > 0.05 * out.forward_ns;
  return out;
}

}  // namespace shardlab
