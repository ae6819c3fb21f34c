#include "app/gui/model/serving_view.h"

#include <algorithm>
#include <cstdio>

#include "app/gui/i18n/language.h"
#include "engine/core/units.h"

namespace shardlab::gui {

ServingChart BuildServingChart(const InferenceRun& run) {
  ServingChart chart;
  chart.kv_blocks_per_replica = run.kv_blocks;
  for (const ServingResult& result : run.results) {
    ServingLane lane;
    lane.policy = BatchingPolicyName(result.policy);
    lane.makespan_ns = result.makespan_ns;
    lane.tokens_per_s = result.tokens_per_s;
    lane.e2e_p50_ns = result.e2e_ns.p50;
    lane.e2e_p99_ns = result.e2e_ns.p99;
    lane.ttft_p50_ns = result.ttft_ns.p50;
    lane.useful = result.useful;
    for (const ServedRequestTiming& r : result.requests) {
      lane.rows.push_back({r.id, r.replica, r.arrival_ns, r.admitted_ns, r.first_token_ns, r.finish_ns});
      chart.axis_end_ns = std::max(chart.axis_end_ns, r.finish_ns);
    }
    std::sort(lane.rows.begin(), lane.rows.end(), [](const ServingRow& a, const ServingRow& b) {
      return a.arrival_ns != b.arrival_ns ? a.arrival_ns < b.arrival_ns : a.request < b.request;
    });
    for (const ServingStepRecord& step : result.steps) {
      if (step.replica == 0) lane.kv_blocks.emplace_back(step.start_ns, step.kv_blocks);
    }
    chart.lanes.push_back(std::move(lane));
  }
  return chart;
}

std::string ServingVerdict(const ServingChart& chart) {
  const ServingLane* fixed = nullptr;
  const ServingLane* continuous = nullptr;
  for (const ServingLane& lane : chart.lanes) {
    if (lane.policy == "static") fixed = &lane;
    if (lane.policy == "continuous") continuous = &lane;
  }
  if (fixed == nullptr || continuous == nullptr || fixed->tokens_per_s <= 0) return "";
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2fx", continuous->tokens_per_s / fixed->tokens_per_s);
  return Format(Tr("continuous batching: %s static's tokens/s, end-to-end p50 %s against %s"), ratio,
                FormatTime(continuous->e2e_p50_ns).c_str(), FormatTime(fixed->e2e_p50_ns).c_str());
}

}  // namespace shardlab::gui
