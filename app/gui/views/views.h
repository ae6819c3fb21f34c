// The app's panels. Each is a free function drawing into the current ImGui
// window (the caller positions windows from PanelLayout), reading the
// session, the replay clock and the theme; per-view UI state lives in the
// structs below, owned by the App.
#pragma once

#include <cstdint>
#include <array>
#include <memory>
#include <vector>

#include "app/gui/app/theme.h"
#include "app/gui/model/gantt_layout.h"
#include "app/gui/model/link_activity.h"
#include "app/gui/model/replay_clock.h"
#include "app/gui/model/run_insight.h"
#include "app/gui/model/session.h"
#include "app/gui/model/topology_layout.h"
#include "app/gui/model/memory_timeline.h"
#include "app/gui/model/tp_layer_view.h"
#include "app/gui/model/grid_groups.h"
#include "app/gui/model/zero_view.h"

namespace shardlab::gui {

class LinkRenderer;  // gl/link_renderer.h; null in headless use (benchmarks)
struct ScenarioPanelStates;  // scenario_panels.h

struct ViewContext {
  Session& session;
  ReplayClock& clock;
  const Theme& theme;
  LinkRenderer* link_renderer = nullptr;  // draws links with shaders/link.*
  double time_s = 0;                      // wall time, for animations
  ScenarioPanelStates* panel_states = nullptr;  // the scenario views' UI state (the App's)
  RunInsight* insight = nullptr;          // critical path, selection, pattern (null: none)
};

struct TopologyViewState {
  TopologyLayout layout;                  // rebuilt when the topology or aspect changes
  const Topology* laid_out = nullptr;
  float laid_out_aspect = 0;
  std::unique_ptr<LinkActivity> activity; // rebuilt per run
  const Plan* activity_plan = nullptr;
  std::vector<TpCollectiveName> tp_collectives;  // a tensor-parallel run's, else empty
  std::vector<ZeroCollectiveName> zero_collectives;  // a ZeRO run's, else empty
  // A 3D run: what the GPU tiles are coloured by, which group kinds' links
  // are lit (TP, PP, DP), and those links (rebuilt per run).
  GridColourMode grid_mode = GridColourMode::kTpGroup;
  std::array<bool, kGroupKindCount> show_kind{true, true, true};
  std::array<std::vector<bool>, kGroupKindCount> kind_links;
};

struct GanttViewState {
  GanttFrame frame;
  bool fitted = false;                    // fit to the run once it ends
  bool follow_cursor = true;              // keep the cursor in view while playing
};

struct TpWeightsViewState {
  std::uint64_t run_id = 0;               // the run `matrices` were read from
  std::vector<TpWeightMatrix> matrices;
  TpWeightLayout layout;                  // for the size and text height below
  float laid_out_w = 0, laid_out_h = 0, laid_out_line_h = 0;
};

struct ZeroMemoryViewState {
  std::uint64_t run_id = 0;               // the run `timeline` was built for
  std::size_t timeline_events = 0;        // events it was built from
  MemoryTimeline timeline;
};

void DrawTopologyView(ViewContext& ctx, TopologyViewState& state);
/// The selected op (bytes, times, achieved GB/s, its alpha-beta formula
/// with numbers, its route's links and their load, the ops it waited for:
/// click to follow) or link (the transfers that crossed it, busiest first).
void DrawDetailsPanel(ViewContext& ctx);
/// The critical path in the metrics panel: its four parts as a bar and
/// rows, what bounds it (a pipeline's stage, a ring's hop), and the switch
/// that outlines it in the timeline.
void DrawCriticalPathSummary(ViewContext& ctx);
void DrawGanttView(ViewContext& ctx, GanttViewState& state);
void DrawBufferView(ViewContext& ctx);
void DrawMetricsPanel(ViewContext& ctx);
/// The compare overlay's per-phase summary and explanation (DrawMetricsPanel
/// draws it first when a second run is laid over the Gantt).
void DrawCompareSummary(ViewContext& ctx);
/// The metrics panel of a pipeline run (DrawMetricsPanel calls it).
void DrawPipelineMetrics(ViewContext& ctx);
/// The metrics panel of a tensor-parallel layer (DrawMetricsPanel calls it).
void DrawTpMetrics(ViewContext& ctx);
/// The metrics panel of a ZeRO run (DrawMetricsPanel calls it).
void DrawZeroMetrics(ViewContext& ctx);
/// The metrics panel of a DP x PP x TP run (DrawMetricsPanel calls it).
void DrawThreeDMetrics(ViewContext& ctx);
/// The metrics panel of one MoE layer (DrawMetricsPanel calls it).
void DrawMoeMetrics(ViewContext& ctx);
/// dp-train: the loss curves (run and baseline), the step's bytes and time, and each technique's quantity beside its formula.
void DrawDpTrainMetrics(ViewContext& ctx);
/// A ZeRO run's memory per GPU: stacked bars by category, measured from
/// what the backend allocated, the formula as a line; live while the
/// replay plays, the peak at its ends.
void DrawZeroMemoryView(ViewContext& ctx, ZeroMemoryViewState& state);
/// A tensor-parallel layer's weights, each split into the blocks the GPUs
/// hold, in the ranks' colours; the blocks of GPUs computing now are lit.
void DrawTpWeightsView(ViewContext& ctx, TpWeightsViewState& state);

}  // namespace shardlab::gui
