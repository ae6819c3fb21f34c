#include "app/cli/pipeline_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardlab::cli {

namespace {
constexpr int kMaxStages = 32;
}

std::vector<std::string> PipelineChart(const Plan& plan, const PipelineShape& shape,
                                       std::span<const Event> events, int max_columns) {
  if (shape.stages > kMaxStages)
    return {"(no chart: more than " + std::to_string(kMaxStages) + " stages)"};
  // The F/B events, the span they cover and the shortest slot.
  std::vector<const Event*> slots;
  TimeNs first = std::numeric_limits<TimeNs>::max(), last = 0;
  TimeNs shortest = std::numeric_limits<TimeNs>::max();
  std::size_t label_width = 2;
  for (const Event& e : events) {
    if (e.kind != OpKind::kCompute) continue;
    const Phase phase = plan.ops[e.op].tags.phase;
    if (phase != Phase::kForward && phase != Phase::kBackward && phase != Phase::kWeightGrad)
      continue;
    slots.push_back(&e);
    first = std::min(first, e.start_ns);
    last = std::max(last, e.end_ns);
    if (e.duration_ns() > 0) shortest = std::min(shortest, e.duration_ns());
    label_width = std::max(label_width, PipelineSlotLabel(plan.ops[e.op].tags, shape).size());
  }
  if (slots.empty() || last <= first) return {"(no chart: no timed forward or backward ops)"};
  // One cell per bin, a bin being the shortest slot, with each slot labelled
  // "F3" where it starts. When that is too wide, one character per bin
  // ('F' or 'B') over the whole span: the bubble still shows as dots.
  const int prefix = 10;  // "stage 12 |"
  const TimeNs span = last - first;
  const int width = std::max(16, max_columns - prefix);
  const bool labelled = span / shortest * static_cast<double>(label_width + 1) <= width + 1e-6;
  const int cell = labelled ? static_cast<int>(label_width) + 1 : 1;
  const TimeNs bin = labelled ? shortest : span / width;
  const int bins = std::max(1, static_cast<int>(std::ceil(span / bin - 1e-6)));
  std::vector<std::string> rows(static_cast<std::size_t>(shape.stages),
                                std::string(static_cast<std::size_t>(bins * cell), '.'));
  auto bin_of = [&](TimeNs t) {
    return std::clamp(static_cast<int>(std::floor((t - first) / bin + 0.5)), 0, bins);
  };
  // In time order per stage; a slot that rounds onto its predecessor's last
  // bin moves right by one, so every slot stays visible.
  std::sort(slots.begin(), slots.end(),
            [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
  std::vector<int> next_free(static_cast<std::size_t>(shape.stages), 0);
  for (const Event* e : slots) {
    std::string& row = rows[static_cast<std::size_t>(e->rank)];
    const OpTags& tags = plan.ops[e->op].tags;
    int& free_bin = next_free[static_cast<std::size_t>(e->rank)];
    const int from = std::max(free_bin, bin_of(e->start_ns));
    const int to = std::max(from + 1, bin_of(e->end_ns));
    free_bin = to;
    if (from * cell >= static_cast<int>(row.size())) continue;
    const std::size_t begin = static_cast<std::size_t>(from * cell);
    const std::size_t end = std::min(row.size(), static_cast<std::size_t>(to * cell));
    if (!labelled) {
      std::fill(row.begin() + static_cast<std::ptrdiff_t>(begin),
                row.begin() + static_cast<std::ptrdiff_t>(end),
                // Case alternates by micro-batch, so neighbours stay apart.
                "FfBbWw"[(tags.phase == Phase::kForward    ? 0
                          : tags.phase == Phase::kBackward ? 2
                                                           : 4) +
                         (tags.microbatch & 1)]);
      continue;
    }
    std::fill(row.begin() + static_cast<std::ptrdiff_t>(begin),
              row.begin() + static_cast<std::ptrdiff_t>(end), ' ');
    const std::string label = PipelineSlotLabel(tags, shape);
    row.replace(begin, std::min(label.size(), end - begin), label.substr(0, end - begin));
  }
  for (int s = 0; s < shape.stages; ++s) {
    std::string name = "stage " + std::to_string(s);
    name.resize(static_cast<std::size_t>(prefix - 1), ' ');
    rows[static_cast<std::size_t>(s)] = name + "|" + rows[static_cast<std::size_t>(s)];
  }
  return rows;
}

}  // namespace shardlab::cli
