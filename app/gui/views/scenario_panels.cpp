#include "app/gui/views/scenario_panels.h"

#include <imgui.h>

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

void DpTrainMetrics(ViewContext& ctx, const ScenarioSettings*) {
  if (ctx.session.prepared() == nullptr) {
    ImGui::TextDisabled("%s", Tr("No run yet."));
    return;
  }
  DrawDpTrainMetrics(ctx);
}

}  // namespace

const std::vector<ScenarioPanel>& ScenarioPanelTable() {
  using S = PanelSlot;
  static const std::vector<ScenarioPanel> table = {
      // name               slot         title                                      share
      {"pipeline_metrics", S::kMetrics, nullptr, kPipelineMetricsShare, Metrics<DrawPipelineMetrics>},
      {"pipeline_legend", S::kLegend, nullptr, 0, DrawPipelineGanttLegend},
      {"pipeline_summary", S::kSummary, nullptr, 0, DrawPipelineSettingsSummary},
      {"pipeline_how_to_read", S::kHowToRead, nullptr, 0, DrawPipelineHowToRead},

      {"tp_metrics", S::kMetrics, nullptr, kTpMetricsShare, Metrics<DrawTpMetrics>},
      {"tp_weights", S::kBeside, [] { return Tr("Weights: the block of each matrix every GPU holds"); },
       kTpWeightsShare, TpWeights},
      {"tp_legend", S::kLegend, nullptr, 0, DrawTpGanttLegend},
      {"tp_summary", S::kSummary, nullptr, 0, DrawTpSettingsSummary},
      {"tp_how_to_read", S::kHowToRead, nullptr, 0, DrawTpHowToRead},

      {"zero_metrics", S::kMetrics, nullptr, kZeroMetricsShare, Metrics<DrawZeroMetrics>},
      {"zero_memory", S::kBeside, [] { return Tr("Memory per GPU: what the simulator allocated, by kind"); },
       kZeroMemoryShare, ZeroMemory},
      {"zero_legend", S::kLegend, nullptr, 0, DrawZeroGanttLegend},
      {"zero_summary", S::kSummary, nullptr, 0, DrawZeroSettingsSummary},
      {"zero_how_to_read", S::kHowToRead, nullptr, 0, DrawZeroHowToRead},

      // A 3D run or an MoE layer has no chunk buffers: the metrics take the column.
      {"three_d_metrics", S::kMetrics, nullptr, kTpMetricsShare, Metrics<DrawThreeDMetrics>},
      {"three_d_legend", S::kLegend, nullptr, 0, DrawThreeDGanttLegend},
      {"three_d_summary", S::kSummary, nullptr, 0, DrawThreeDSettingsSummary},
      {"three_d_how_to_read", S::kHowToRead, nullptr, 0, DrawThreeDHowToRead},

      {"moe_metrics", S::kMetrics, nullptr, kTpMetricsShare, Metrics<DrawMoeMetrics>},
      {"moe_legend", S::kLegend, nullptr, 0, DrawMoeGanttLegend},
      {"moe_summary", S::kSummary, nullptr, 0, DrawMoeSettingsSummary},
      {"moe_how_to_read", S::kHowToRead, nullptr, 0, DrawMoeHowToRead},

      // dp-train: its curves and statistics in the collective's column.
      {"dp_train_metrics", S::kMetrics, nullptr, kCollectiveMetricsShare, DpTrainMetrics},

      // Inference: the policies' numbers take the column; the requests, per policy, beside the timeline.
      {"inference_metrics", S::kMetrics, nullptr, kTpMetricsShare, Metrics<DrawInferenceMetrics>},
      {"serving", S::kBeside, [] { return Tr("Serving: each request's wait, prefill and decode, per batching policy"); },
       0.55f, DrawServingView},
  };
  return table;
}

const std::vector<ScenarioFieldWidget>& ScenarioFieldWidgetTable() {
  static const std::vector<ScenarioFieldWidget> table = {
      // name                         parameter            widget
      {"collective_algo_field", "algo", DrawAlgoField},              // the kind's algorithms, auto first
      {"collective_size_field", "size", DrawSizeField},              // with the bytes it means
      {"collective_ring_order_field", "ring_order", DrawRingOrderField},  // auto, rank or a custom list
      {"pipeline_schedule_field", "schedule", DrawScheduleField},    // a tooltip per schedule
      {"three_d_schedule_field", "schedule", DrawScheduleField},
      {"tp_layer_field", "layer", DrawTpLayerField},                 // a tooltip per layer
      {"tp_sequence_parallel_field", "sequence_parallel", DrawSequenceParallelField},  // off for the linears
      {"zero_stage_field", "zero_stage", DrawZeroStageField},        // what each stage shards
      {"zero_k_field", "k", DrawZeroKField},                         // 12 or 8, with their sources
  };
  return table;
}

const ScenarioFieldWidget* FindScenarioFieldWidget(std::string_view name) {
  for (const ScenarioFieldWidget& w : ScenarioFieldWidgetTable())
    if (name == w.name) return &w;
  return nullptr;
}

const ScenarioFieldWidget* FieldWidgetOf(std::string_view scenario, std::string_view param) {
  const ScenarioSpec* spec = FindScenario(scenario);
  if (spec == nullptr) return nullptr;
  for (const std::string& name : spec->panels) {
    const ScenarioFieldWidget* w = FindScenarioFieldWidget(name);
    if (w != nullptr && param == w->param) return w;
  }
  return nullptr;
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
