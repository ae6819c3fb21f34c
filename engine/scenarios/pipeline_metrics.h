// Bubble and memory of a pipeline run, measured from its events.
//
//   stage 0  |F0|F1|F2|F3|  ·  ·  ·|B0|F4|B1| ... |B7|      span: first F start
//   stage 3  ·  ·  ·|F0|B0|F1|B1|F2| ...      |B7|  ·  ·     to last B end
//            └──────────── span ──────────────────────┘
//   idle(s) = span − busy(s)        busy: the stage's F and B time
//   bubble relative to useful work = Σ idle / Σ busy      formula (p−1)/m
//   bubble as share of the step    = Σ idle / (p · span)  formula (p−1)/(m+p−1)
//
// The optimizer step after the flush is not part of the bubble (every stage
// runs it at once). W slots (ZB-H1's weight gradients) count as busy. Peak
// in-flight: the most micro-batches (chunk activations, interleaved) whose
// forward has run on a stage and whose backward (its W, when split) has
// not, walking the stage's events in time order.
#pragma once

#include <span>
#include <vector>

#include "engine/algorithms/pipeline.h"
#include "engine/core/event.h"

namespace shardlab {

struct PipelineStageMetrics {
  TimeNs busy_ns = 0;      // its F, B (and W) ops
  TimeNs forward_ns = 0;
  TimeNs backward_ns = 0;
  TimeNs weight_ns = 0;    // W slots of a split backward (ZB-H1)
  TimeNs idle_ns = 0;      // span − busy
  double bubble_over_useful = 0;  // idle / busy
  int peak_inflight = 0;
  int formula_peak_inflight = 0;  // GPipe m, 1F1B min(m, p − s), interleaved from the order
};

struct PipelineMetrics {
  TimeNs span_ns = 0;      // first F start to last B end
  TimeNs step_ns = 0;      // the whole run, optimizer included
  TimeNs transfer_ns = 0;  // Σ duration of activation and gradient transfers
  std::int64_t transfers = 0;  // sends between stages
  Bytes transfer_bytes = 0;
  std::vector<PipelineStageMetrics> stages;
  double bubble_over_useful = 0;          // Σ idle / Σ busy
  double bubble_of_step = 0;              // Σ idle / (p · span)
  double formula_bubble_over_useful = 0;  // (p−1)/m, (p−1)/(v·m)
  double formula_bubble_of_step = 0;      // (p−1)/(m+p−1), (p−1)/(v·m+p−1)
};

/// Why a measured bubble exceeds the formula, which assumes free
/// communication and slots that all take as long (F = B, and = W when split).
struct PipelineBubbleExcess {
  bool above_formula = false;  // measured > 1.25 × formula + 0.01
  /// True when the average transfer is over 5% of a forward slot: the
  /// communication assumption fails first; else the slots are unequal.
  bool communication = false;
  TimeNs transfer_ns = 0;      // average transfer
  TimeNs forward_ns = 0;       // average slot of each pass, over all stages
  TimeNs backward_ns = 0;
  TimeNs weight_ns = 0;        // 0 unless the backward is split
};

PipelineBubbleExcess ExplainPipelineBubble(const PipelineMetrics& metrics,
                                           const PipelineShape& shape);

/// Metrics of `events`, every event of one run of `plan` (pipeline.plan,
/// or the same plan after an Executor took it).
PipelineMetrics MeasurePipeline(const PipelinePlan& pipeline, const Plan& plan,
                                std::span<const Event> events);

}  // namespace shardlab
