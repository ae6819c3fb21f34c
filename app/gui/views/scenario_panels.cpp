#include "app/gui/views/scenario_panels.h"

#include "app/gui/i18n/language.h"
#include "app/gui/model/panel_layout.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab::gui {
namespace {

// The metrics panels of the scenarios, each drawing from the session.
template <void (*Draw)(ViewContext&)>
void Metrics(ViewContext& ctx, const ScenarioSettings*) {
  Draw(ctx);
}

void TpWeights(ViewContext& ctx, const ScenarioSettings*) {
  if (ctx.panel_states != nullptr) DrawTpWeightsView(ctx, ctx.panel_states->tp_weights);
}

void ZeroMemory(ViewContext& ctx, const ScenarioSettings*) {
  if (ctx.panel_states != nullptr) DrawZeroMemoryView(ctx, ctx.panel_states->zero_memory);
}

}  // namespace

const std::vector<ScenarioPanel>& ScenarioPanelTable() {
  using S = PanelSlot;
  static const std::vector<ScenarioPanel> table = {
      // name               slot         title                                      share
      {"pipeline_metrics", S::kMetrics, nullptr, kPipelineMetricsShare, Metrics<DrawPipelineMetrics>},
      {"pipeline_legend", S::kLegend, nullptr, 0, DrawPipelineGanttLegend},
      {"pipeline_summary", S::kSummary, nullptr, 0, DrawPipelineSettingsSummary},

      {"tp_metrics", S::kMetrics, nullptr, kTpMetricsShare, Metrics<DrawTpMetrics>},
      {"tp_weights", S::kBeside, [] { return Tr("Weights: the block of each matrix every GPU holds"); },
       kTpWeightsShare, TpWeights},
      {"tp_legend", S::kLegend, nullptr, 0, DrawTpGanttLegend},
      {"tp_summary", S::kSummary, nullptr, 0, DrawTpSettingsSummary},

      {"zero_metrics", S::kMetrics, nullptr, kZeroMetricsShare, Metrics<DrawZeroMetrics>},
      {"zero_memory", S::kBeside, [] { return Tr("Memory per GPU: what the simulator allocated, by kind"); },
       kZeroMemoryShare, ZeroMemory},
      {"zero_legend", S::kLegend, nullptr, 0, DrawZeroGanttLegend},
      {"zero_summary", S::kSummary, nullptr, 0, DrawZeroSettingsSummary},

      // A 3D run or an MoE layer has no chunk buffers: the metrics take the column.
      {"three_d_metrics", S::kMetrics, nullptr, kTpMetricsShare, Metrics<DrawThreeDMetrics>},
      {"three_d_legend", S::kLegend, nullptr, 0, DrawThreeDGanttLegend},
      {"three_d_summary", S::kSummary, nullptr, 0, DrawThreeDSettingsSummary},

      {"moe_metrics", S::kMetrics, nullptr, kTpMetricsShare, Metrics<DrawMoeMetrics>},
      {"moe_legend", S::kLegend, nullptr, 0, DrawMoeGanttLegend},
      {"moe_summary", S::kSummary, nullptr, 0, DrawMoeSettingsSummary},

      // Inference: the policies' numbers take the column; the requests, per policy, beside the timeline.
      {"inference_metrics", S::kMetrics, nullptr, kTpMetricsShare, Metrics<DrawInferenceMetrics>},
      {"serving", S::kBeside, [] { return Tr("Serving: each request's wait, prefill and decode, per batching policy"); },
       0.55f, DrawServingView},
  };
  return table;
}

const ScenarioPanel* FindScenarioPanel(std::string_view name) {
  for (const ScenarioPanel& p : ScenarioPanelTable())
    if (name == p.name) return &p;
  return nullptr;
}

const ScenarioPanel* PanelOf(std::string_view scenario, PanelSlot slot) {
  const ScenarioSpec* spec = FindScenario(scenario);
  if (spec == nullptr) return nullptr;
  for (const std::string& name : spec->panels) {
    const ScenarioPanel* p = FindScenarioPanel(name);
    if (p != nullptr && p->slot == slot) return p;
  }
  return nullptr;
}

}  // namespace shardlab::gui
