// PipelineGantt (see pipeline_gantt.h).
#include "app/gui/model/pipeline_gantt.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardlab::gui {
namespace {

// Micro-batch hues in palette order. Consecutive entries lie at least 90°
// apart on the colour wheel, so micro-batches next to each other in the
// timeline never look alike: blue, orange, green, magenta, gold, violet,
// teal, red.
// Gaps shorter than this share of the span are the rounding of a clock in
// floating-point nanoseconds (1e-13 ns between back-to-back slots), not
// waiting: they are dropped, which moves a stage's idle sum by less.
constexpr double kMinBubbleShare = 1e-9;

constexpr double kMicrobatchHuesDeg[kMicrobatchHueCount] = {215, 30, 130, 320, 52, 270, 178, 355};

/// Saturation and value of one pass's shade on one background.
struct Shade {
  double saturation;
  double value;
};

// Forward light (a pastel of the hue), backward deep, weight gradient
// greyed: three shades a student tells apart at a glance, all of one hue.
// On white the forward shade is a little stronger so it does not vanish
// on a washed-out projector, and the dark ones darker.
constexpr Shade kDarkForward{0.42, 1.00};
constexpr Shade kDarkBackward{0.85, 0.80};
constexpr Shade kDarkWeight{0.30, 0.68};
constexpr Shade kLightForward{0.45, 0.98};
constexpr Shade kLightBackward{0.90, 0.62};
constexpr Shade kLightWeight{0.30, 0.74};

const Op* OpOf(const Plan& plan, const Event& e) {
  return e.op >= 0 && e.op < static_cast<int>(plan.ops.size()) ? &plan.ops[static_cast<std::size_t>(e.op)]
                                                                : nullptr;
}

bool IsSlotEvent(const Plan& plan, const Event& e) {
  const Op* op = OpOf(plan, e);
  return op != nullptr && IsPipelineSlot(*op);
}

/// "layers 2-3" or "layer 2": layers [first, end) of the model.
std::string LayerRange(int first, int end) {
  if (end - first <= 1) return "layer " + std::to_string(first);
  return "layers " + std::to_string(first) + "-" + std::to_string(end - 1);
}

/// The layers of global chunk `chunk`, or "" when the plan does not say.
std::string ChunkLayers(const PipelinePlan& pipeline, int chunk) {
  const std::vector<int>& first = pipeline.chunk_first_layer;
  if (chunk < 0 || static_cast<std::size_t>(chunk) + 1 >= first.size()) return "";
  return LayerRange(first[static_cast<std::size_t>(chunk)], first[static_cast<std::size_t>(chunk) + 1]);
}

/// The layers stage `stage` holds: "layers 2-3", or "layers 1, 5" when interleaved.
std::string StageLayers(const PipelinePlan& pipeline, int stage) {
  const std::vector<int>& first = pipeline.chunk_first_layer;
  const std::size_t p = static_cast<std::size_t>(std::max(1, pipeline.params.shape.stages));
  std::string ranges;
  bool plural = false;
  for (std::size_t g = static_cast<std::size_t>(std::max(0, stage)); g + 1 < first.size(); g += p) {
    const int a = first[g], b = first[g + 1] - 1;
    plural = plural || !ranges.empty() || a != b;
    if (!ranges.empty()) ranges += ", ";
    ranges += a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b);
  }
  if (ranges.empty()) return "this stage's layers";
  return (plural ? "layers " : "layer ") + ranges;
}

const char* PassName(Phase phase, bool split_backward) {
  switch (phase) {
    case Phase::kForward: return "forward";
    case Phase::kBackward: return split_backward ? "input gradient (B)" : "backward";
    case Phase::kWeightGrad: return "weight gradient (W)";
    default: return "";
  }
}

/// The Recv that op `id` waits for, or null: a slot's only wait besides
/// its own lane is the activation or gradient it receives.
const Op* ReceivedInput(const Plan& plan, const Op& op) {
  for (const OpId* dep = plan.deps_begin(op); dep != plan.deps_end(op); ++dep) {
    if (*dep < 0 || *dep >= static_cast<OpId>(plan.ops.size())) continue;
    const Op& input = plan.ops[static_cast<std::size_t>(*dep)];
    if (input.kind == OpKind::kRecv) return &input;
  }
  return nullptr;
}

}  // namespace

bool IsPipelineSlot(const Op& op) {
  return op.kind == OpKind::kCompute &&
         (op.tags.phase == Phase::kForward || op.tags.phase == Phase::kBackward ||
          op.tags.phase == Phase::kWeightGrad);
}

Hsv MicrobatchHsv(Phase phase, int microbatch, bool light_background) {
  const int index = std::max(0, microbatch) % kMicrobatchHueCount;
  Hsv hsv;
  hsv.hue_deg = kMicrobatchHuesDeg[index];
  Shade shade{0.0, light_background ? 0.45 : 0.72};  // not a slot: grey
  if (phase == Phase::kForward) shade = light_background ? kLightForward : kDarkForward;
  if (phase == Phase::kBackward) shade = light_background ? kLightBackward : kDarkBackward;
  if (phase == Phase::kWeightGrad) shade = light_background ? kLightWeight : kDarkWeight;
  hsv.saturation = shade.saturation;
  hsv.value = shade.value;
  return hsv;
}

std::uint32_t HsvToRgb(const Hsv& hsv) {
  const double h = std::fmod(std::fmod(hsv.hue_deg, 360.0) + 360.0, 360.0) / 60.0;
  const double s = std::clamp(hsv.saturation, 0.0, 1.0);
  const double v = std::clamp(hsv.value, 0.0, 1.0);
  const double c = v * s;
  const double x = c * (1 - std::abs(std::fmod(h, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(h)) {
    case 0: r = c, g = x; break;
    case 1: r = x, g = c; break;
    case 2: g = c, b = x; break;
    case 3: g = x, b = c; break;
    case 4: r = x, b = c; break;
    default: r = c, b = x; break;
  }
  const double m = v - c;
  auto byte = [&](double channel) { return static_cast<std::uint32_t>(std::lround((channel + m) * 255)); };
  return byte(r) << 16 | byte(g) << 8 | byte(b);
}

TimeNs PipelineBubbles::IdleNs(int stage) const {
  if (stage < 0 || stage >= static_cast<int>(stages.size())) return 0;
  TimeNs idle = 0;
  for (const PipelineBubble& b : stages[static_cast<std::size_t>(stage)]) idle += b.duration_ns();
  return idle;
}

PipelineSpan FindPipelineSpan(const TimelineStore& store, const Plan& plan) {
  TimeNs first = std::numeric_limits<TimeNs>::max();
  TimeNs last = std::numeric_limits<TimeNs>::lowest();
  for (const TimelineRow& row : store.rows()) {
    if (row.lane != Lane::kCompute) continue;
    for (const Event& e : row.events) {
      if (!IsSlotEvent(plan, e)) continue;
      first = std::min(first, e.start_ns);
      last = std::max(last, e.end_ns);
    }
  }
  if (last < first) return {};
  return {first, last};
}

std::vector<PipelineBubble> RowBubbles(const TimelineRow& row, const Plan& plan, const PipelineSpan& span) {
  std::vector<PipelineBubble> bubbles;
  if (span.empty()) return bubbles;
  const TimeNs min_ns = kMinBubbleShare * (span.end_ns - span.start_ns);
  // Walk the slots in start order; `busy_until` is the end of the work so
  // far, and a slot starting after it closes a bubble.
  TimeNs busy_until = span.start_ns;
  for (const Event& e : row.events) {
    if (!IsSlotEvent(plan, e)) continue;
    const TimeNs start = std::clamp(e.start_ns, span.start_ns, span.end_ns);
    if (start - busy_until > min_ns) bubbles.push_back({busy_until, start});
    busy_until = std::max(busy_until, std::min(e.end_ns, span.end_ns));
  }
  if (span.end_ns - busy_until > min_ns) bubbles.push_back({busy_until, span.end_ns});
  return bubbles;
}

PipelineBubbles FindPipelineBubbles(const TimelineStore& store, const Plan& plan) {
  PipelineBubbles out;
  out.span = FindPipelineSpan(store, plan);
  const int stages = std::max(0, plan.num_ranks);
  out.stages.resize(static_cast<std::size_t>(stages));
  if (out.span.empty()) return out;
  std::vector<bool> has_row(static_cast<std::size_t>(stages), false);
  for (const TimelineRow& row : store.rows()) {
    if (row.lane != Lane::kCompute || row.rank < 0 || row.rank >= stages) continue;
    out.stages[static_cast<std::size_t>(row.rank)] = RowBubbles(row, plan, out.span);
    has_row[static_cast<std::size_t>(row.rank)] = true;
  }
  for (int s = 0; s < stages; ++s) {
    if (!has_row[static_cast<std::size_t>(s)]) out.stages[static_cast<std::size_t>(s)] = {{out.span.start_ns, out.span.end_ns}};
  }
  return out;
}

int BubbleAt(const std::vector<PipelineBubble>& bubbles, TimeNs t_ns) {
  const auto it = std::partition_point(bubbles.begin(), bubbles.end(),
                                       [&](const PipelineBubble& b) { return b.end_ns < t_ns; });
  if (it == bubbles.end() || t_ns < it->start_ns) return -1;
  return static_cast<int>(it - bubbles.begin());
}

std::array<std::string, 3> PipelineOpLabels(const Op& op, const PipelineShape& shape) {
  if (op.tags.phase == Phase::kOptimizer) return {"optimizer", "opt", ""};
  if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
    OpTags tags = op.tags;
    tags.chunk = -1;  // the arrow says where it goes; the chunk would only crowd the box
    const std::string slot = PipelineSlotLabel(tags, shape);
    if (slot.empty() || op.peer < 0) return {slot, slot, ""};
    const bool send = op.kind == OpKind::kSend;
    const std::string peer = std::to_string(op.peer);
    return {slot + (send ? " -> GPU" : " <- GPU") + peer, slot + (send ? " ->" : " <-") + peer, slot};
  }
  const std::string slot = PipelineSlotLabel(op.tags, shape);
  if (slot.empty()) return {"", "", ""};
  const std::string no_chunk = slot.substr(0, slot.find('.'));
  return {slot, no_chunk, op.tags.microbatch >= 0 ? std::to_string(op.tags.microbatch) : ""};
}

std::string PipelineOpSummary(const Op& op, const PipelinePlan& pipeline) {
  const PipelineShape& shape = pipeline.params.shape;
  if (op.tags.phase == Phase::kOptimizer) return "optimizer step of " + StageLayers(pipeline, op.rank);
  if (op.tags.microbatch < 0) return "";
  const std::string mb = "micro-batch " + std::to_string(op.tags.microbatch);
  if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
    const std::string layer = std::to_string(op.tags.layer);
    if (op.tags.phase == Phase::kForward) return mb + ", activation out of layer " + layer;
    if (op.tags.phase == Phase::kBackward) return mb + ", gradient of layer " + layer + "'s output";
    return mb;
  }
  if (!IsPipelineSlot(op)) return mb;
  std::string text = mb + ", " + PassName(op.tags.phase, SplitsBackward(pipeline.params.schedule));
  const std::string layers = ChunkLayers(pipeline, op.tags.chunk);
  if (!layers.empty()) text += " of " + layers;
  if (shape.chunks > 1 && op.tags.chunk >= 0 && shape.stages > 0) {
    text += " (chunk " + std::to_string(op.tags.chunk / shape.stages) + " of this stage)";
  }
  return text;
}

std::string BubbleReason(const TimelineRow& row, const Plan& plan, const PipelineBubble& bubble,
                         const PipelineSpan& span) {
  if (bubble.end_ns >= span.end_ns) {
    return "drain: this stage is done; the others are still finishing";
  }
  const std::string fill = bubble.start_ns <= span.start_ns ? "fill: " : "";
  // The slot the bubble ends with: the first one starting at or after its end.
  const auto next = std::find_if(row.events.begin(), row.events.end(), [&](const Event& e) {
    return e.start_ns >= bubble.end_ns && IsSlotEvent(plan, e);
  });
  if (next == row.events.end()) return fill + "waiting";
  const Op& slot = plan.ops[static_cast<std::size_t>(next->op)];
  const Op* input = ReceivedInput(plan, slot);
  if (input == nullptr) return fill + "waiting before micro-batch " + std::to_string(slot.tags.microbatch);
  const char* what = input->tags.phase == Phase::kBackward ? "gradient" : "activation";
  return fill + "waiting for the " + what + " of micro-batch " + std::to_string(input->tags.microbatch) +
         " from GPU" + std::to_string(input->peer);
}

}  // namespace shardlab::gui
