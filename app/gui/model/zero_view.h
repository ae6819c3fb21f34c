// View model of a data-parallel / ZeRO training run (engine/algorithms/zero.h):
// names for its collectives and ops, and the memory chart's bars.
//
// Collectives, one name per collective_seq (stage: what runs each step):
//
//   0   AR b1        all-reduce of bucket 1's gradients (layers 1-0)
//   1-2 RS b1        reduce-scatter of bucket 1's gradients
//       AG b1 upd    all-gather of bucket 1's updated parameters
//   3   AG L3 fwd    all-gather of layer 3's parameters before its forward
//       AG L3 bwd    ... again before its backward
//       RS L3        reduce-scatter of layer 3's gradients
//
// A transfer's pill adds its chunk ("AG L3 fwd·B"; an all-reduce its pass,
// "AR b1 RS·B"). Buckets are ZeroPlan::units, numbered in reduction order
// from 0 (the top layers: backward fills them first).
//
// The memory chart stands one bar per GPU, stacked bottom to top:
//
//   ┌───────┐ ░ gathered parameters ┐ transient: hatched, the peak at the
//   │░░░░░░░│ ░ gradient bucket     ┘ end of the run, what is live mid-run
//   ├───────┤   other (input rows, targets, loss)
//   ├───────┤   activations
//   ├───────┤ ┐ optimizer states (fp32 master, Adam m, v)
//   ├───────┤ │ gradients (fp16)      the model states the formula counts:
//   └───────┘ ┘ parameters (fp16)     (2+2+K)Ψ ... (4+K)Ψ/N, drawn as a line
//
// on one byte axis from 0 to what plain data parallelism (stage 0) would
// hold for the same model, so the stages of one model compare by height.
// The fp32 staging the load step uses for the initial weights (transient
// "other") is left out of the bars and counted apart (left_out).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "app/gui/model/memory_timeline.h"
#include "app/gui/model/topology_layout.h"
#include "engine/algorithms/zero.h"
#include "engine/run/memory_tracker.h"

namespace shardlab::gui {

enum class ZeroCollectiveKind {
  kAllReduceGradients,      // stage 0
  kReduceScatterGradients,  // stages 1-3
  kGatherForward,           // stage 3: a layer's parameters before its forward
  kGatherBackward,          // stage 3: ... before its backward
  kGatherUpdated,           // stages 1-2: the updated parameters after Adam
};

struct ZeroCollectiveName {
  int seq = -1;                // the ops' collective_seq
  ZeroCollectiveKind kind = ZeroCollectiveKind::kAllReduceGradients;
  int training_step = 0;       // 0-based Adam step it belongs to
  int unit = -1;               // index into ZeroPlan::units
  int layer = -1;              // the ops' tags.layer (a unit's lowest layer)
  std::string tag;             // "AG L3 fwd", "RS b1", "AR b0", "AG b1 upd"
  std::string what;            // "all-gather of layer 3's parameters before its forward"
  bool two_passes = false;     // an all-reduce: a reduce-scatter, then an all-gather pass
};

/// One name per collective of `plan` (the plan `zero` describes), in
/// collective_seq order.
std::vector<ZeroCollectiveName> NameZeroCollectives(const ZeroPlan& zero, const Plan& plan);
/// The name whose seq is `seq`, or null.
const ZeroCollectiveName* FindZeroCollective(const std::vector<ZeroCollectiveName>& names, int seq);

/// "bucket 1 (layers 1-0)", "bucket 0 (layer 3)" or, stage 3, "layer 3".
std::string ZeroUnitWords(const ZeroPlan& zero, int unit);
/// The unit holding layer `layer`, or -1.
int ZeroUnitOfLayer(const ZeroPlan& zero, int layer);

/// What compute op `op` does, in a sentence for its tooltip: "forward of
/// layer 2 on this GPU's 8 rows", "Adam on this GPU's shard of bucket 0
/// (layers 3-2)"; "" for transfers.
std::string ZeroComputeWords(const Op& op, const ZeroPlan& zero);

/// A Gantt box's labels, longest first: "forward L3", "F3", "F" for compute;
/// "AG L3 fwd·B ->2", "AG L3·B", "B" for a transfer of a named collective.
std::array<std::string, 3> ZeroOpLabels(const Op& op, const ZeroPlan& zero,
                                        const std::vector<ZeroCollectiveName>& names);

/// Bytes in decimal units with three significant digits, as the ZeRO paper
/// counts them (16 x 7.5B = 120 GB): "8.32 kB", "266 kB", "1.88 GB".
std::string ZeroBytesText(double bytes);

/// One piece of a bar.
struct ZeroMemorySegment {
  MemoryCategory category = MemoryCategory::kOther;
  bool transient = false;  // buffers that come and go (hatched)
  Bytes bytes = 0;
  Bytes base = 0;          // bytes under it
};

struct ZeroMemoryBar {
  int rank = 0;
  std::vector<ZeroMemorySegment> segments;  // bottom to top, none empty
  Bytes total = 0;         // the segments' sum: the bar's height
  Bytes persistent = 0;    // its persistent segments' sum
  Bytes model_states = 0;  // persistent parameters + gradients + optimizer states
  Bytes left_out = 0;      // transient "other": the load step's fp32 staging
};

/// Persistent categories bottom to top, then the transient ones.
inline constexpr MemoryCategory kZeroStackOrder[] = {
    MemoryCategory::kParameters, MemoryCategory::kGradients, MemoryCategory::kOptimizerStates,
    MemoryCategory::kActivations, MemoryCategory::kOther,
};
inline constexpr MemoryCategory kZeroTransientOrder[] = {
    MemoryCategory::kGradients, MemoryCategory::kGatheredParameters, MemoryCategory::kParameters,
    MemoryCategory::kOptimizerStates, MemoryCategory::kActivations,
};

/// Stacks `rank`'s persistent bytes and, on top, `transient` (bytes of
/// transient buffers per category: their peak, or what is live at a
/// moment); transient "other" goes to left_out instead.
ZeroMemoryBar StackZeroMemory(int rank, const CategoryBytes& persistent, const CategoryBytes& transient);
/// The end-of-run bar of what the backend measured: persistent, and each
/// category's peak above it.
ZeroMemoryBar ZeroPeakBar(int rank, const RankMemory& measured);
/// The bar at a moment of the replay: persistent and what is live then.
ZeroMemoryBar ZeroLiveBar(int rank, const MemoryTimeline& timeline, TimeNs t_ns);

/// The chart's byte axis: what stage 0 would hold for this model (16Ψ of
/// model states plus the bars' persistent activations and other bytes),
/// or more when a bar or the formula reaches higher. So every stage of
/// one model is drawn on the same axis.
double ZeroChartAxisBytes(double parameter_count, const std::vector<ZeroMemoryBar>& bars,
                          double formula_bytes);
/// Round tick values from 0 up to `axis_bytes`: steps of 1, 2 or 5 × 10^k
/// bytes, at most `max_ticks` + 1 of them.
std::vector<double> ZeroChartTicks(double axis_bytes, int max_ticks);

struct ZeroChartLayout {
  Rect plot;                                // 0 bytes at plot.max.y, axis_bytes at plot.min.y
  double axis_bytes = 0;
  std::vector<int> shown;                   // indices into the bars, left to right
  int hidden = 0;                           // bars left out, between the last two shown
  std::vector<Rect> bars;                   // [shown]: the bar's full height
  std::vector<std::vector<Rect>> segments;  // [shown][segment]
  float YOf(double bytes) const;            // screen y of a byte count
};

/// Minimum bar width and the gap beside it, in pixels.
inline constexpr float kZeroMinBarPx = 12.0f;
inline constexpr float kZeroMaxBarPx = 72.0f;

/// Places `bars` across `plot`: each in an equal slot, as wide as 60% of
/// it (kZeroMinBarPx .. kZeroMaxBarPx); when they do not fit, the first
/// ones and the last one, the rest counted in `hidden`.
ZeroChartLayout LayoutZeroMemoryChart(const std::vector<ZeroMemoryBar>& bars, double axis_bytes, Rect plot);

}  // namespace shardlab::gui
