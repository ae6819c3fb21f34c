// PipelineGantt: what the Gantt adds for a pipeline run, as plain C++ (the
// view draws it): the bubble of each stage, the colour of each micro-batch,
// and the words for labels and tooltips.
//
//   span: first F start (any stage) ─────────────────── last B/W end (any stage)
//   s0  |F0|F1|F2|F3|░░░░░░░░░░░░░░░░░░░░░░░|B0|F4|B1|F5| ... |B7|
//   s3  |░░░░░░░░░░░|F0|B0|F1|B1|F2|B2|F3|B3|F4| ...  |B7|░opt░░░░░|
//        fill                                            drain
//
// A bubble is a stretch of a stage's compute row inside the span where it
// runs no F, B or W slot. The span is the engine's (pipeline_metrics.h):
// one for all stages, so the fill and drain staircases count, and the
// optimizer step is idle time as far as the bubble goes. So the bubbles of
// stage s add up to MeasurePipeline's stages[s].idle_ns.
//
// Colour: micro-batch j takes hue j of a fixed palette (cycling), and the
// pass picks the shade: forward light, backward dark and saturated, weight
// gradient greyed. F3, B3 and W3 share a hue, so a micro-batch can be
// followed through the stages and back.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/model/timeline_store.h"
#include "engine/algorithms/pipeline.h"
#include "engine/plan/plan.h"

namespace shardlab::gui {

/// Hues of the micro-batch palette; micro-batch j takes hue j mod this.
inline constexpr int kMicrobatchHueCount = 8;

/// A colour as hue (degrees, [0, 360)), saturation and value ([0, 1]).
struct Hsv {
  double hue_deg = 0;
  double saturation = 0;
  double value = 0;
};

/// True for the ops the bubble counts as work: compute ops of the forward,
/// backward or weight-gradient pass.
bool IsPipelineSlot(const Op& op);

/// The colour of micro-batch `microbatch` in `phase` (forward, backward or
/// weight gradient; other phases get a neutral grey), on a dark or light
/// background. A negative micro-batch counts as 0.
Hsv MicrobatchHsv(Phase phase, int microbatch, bool light_background);
/// 0xRRGGBB of `hsv`.
std::uint32_t HsvToRgb(const Hsv& hsv);

struct PipelineSpan {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  bool empty() const { return !(end_ns > start_ns); }
};

struct PipelineBubble {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  TimeNs duration_ns() const { return end_ns - start_ns; }
};

struct PipelineBubbles {
  PipelineSpan span;
  /// [stage] (= rank): the stage's idle stretches in the span, sorted and
  /// disjoint. A stage without a compute row idles for the whole span.
  std::vector<std::vector<PipelineBubble>> stages;

  /// Σ of stage `stage`'s bubbles; 0 for a stage out of range.
  TimeNs IdleNs(int stage) const;
};

/// First F/B/W start to last F/B/W end over every compute row of `store`;
/// empty when no slot has run yet.
PipelineSpan FindPipelineSpan(const TimelineStore& store, const Plan& plan);

/// The bubbles of one compute row inside `span`. Events of the row that
/// are not slots (the optimizer step) count as idle.
std::vector<PipelineBubble> RowBubbles(const TimelineRow& row, const Plan& plan,
                                       const PipelineSpan& span);

/// Every stage's bubbles, stages 0 .. plan.num_ranks-1.
PipelineBubbles FindPipelineBubbles(const TimelineStore& store, const Plan& plan);

/// The bubble of `bubbles` (sorted) that holds time `t_ns`, or -1.
int BubbleAt(const std::vector<PipelineBubble>& bubbles, TimeNs t_ns);

/// Box labels of a pipeline op, longest first, "" where none fits:
///   compute:  "F3.1", "F3", "3"  (".1": local chunk 1, interleaved only)
///   send:     "F3 -> GPU1", "F3 ->1", "F3"   (activation of micro-batch 3)
///   recv:     "B3 <- GPU2", "B3 <-2", "B3"   (gradient of micro-batch 3)
///   optimizer "optimizer", "opt", ""
std::array<std::string, 3> PipelineOpLabels(const Op& op, const PipelineShape& shape);

/// One line for a tooltip: "micro-batch 3, forward of layers 2-3",
/// "micro-batch 3, activation of layer 3", "optimizer step of layers 0-1";
/// "" for an op the pipeline did not tag.
std::string PipelineOpSummary(const Op& op, const PipelinePlan& pipeline);

/// Why stage `row.rank` idles in `bubble`, for its tooltip: "fill: waiting
/// for the activation of micro-batch 0 from GPU1", "waiting for the
/// gradient of micro-batch 3 from GPU2", "drain: this stage is done; the
/// others are still finishing". The wait named is the Recv the next slot
/// depends on: a slot's only wait besides its own lane.
std::string BubbleReason(const TimelineRow& row, const Plan& plan, const PipelineBubble& bubble,
                         const PipelineSpan& span);

}  // namespace shardlab::gui
