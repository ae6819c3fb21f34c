// The app's panels. Each is a free function drawing into the current ImGui
// window (the caller positions windows from PanelLayout), reading the
// session, the replay clock and the theme; per-view UI state lives in the
// structs below, owned by the App.
#pragma once

#include <memory>

#include "app/gui/app/theme.h"
#include "app/gui/model/gantt_layout.h"
#include "app/gui/model/link_activity.h"
#include "app/gui/model/replay_clock.h"
#include "app/gui/model/session.h"
#include "app/gui/model/topology_layout.h"

namespace shardlab::gui {

class LinkRenderer;  // gl/link_renderer.h; null in headless use (benchmarks)

struct ViewContext {
  Session& session;
  ReplayClock& clock;
  const Theme& theme;
  LinkRenderer* link_renderer = nullptr;  // draws links with shaders/link.*
  double time_s = 0;                      // wall time, for animations
};

struct TopologyViewState {
  TopologyLayout layout;                  // rebuilt when the topology or aspect changes
  const Topology* laid_out = nullptr;
  float laid_out_aspect = 0;
  std::unique_ptr<LinkActivity> activity; // rebuilt per run
  const Plan* activity_plan = nullptr;
};

struct GanttViewState {
  GanttFrame frame;
  bool fitted = false;                    // fit to the run once it ends
  bool follow_cursor = true;              // keep the cursor in view while playing
};

void DrawTopologyView(ViewContext& ctx, TopologyViewState& state);
void DrawGanttView(ViewContext& ctx, GanttViewState& state);
void DrawBufferView(ViewContext& ctx);
void DrawMetricsPanel(ViewContext& ctx);
/// The metrics panel of a pipeline run (DrawMetricsPanel calls it).
void DrawPipelineMetrics(ViewContext& ctx);

}  // namespace shardlab::gui
