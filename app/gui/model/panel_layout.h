// PanelLayout: where each panel sits in the window, as a pure function of
// the window size, so the app and its screenshot tests agree on regions.
//
//   ┌────────────┬──────────────────────────────┬──────────────┐
//   │ scenario   │ transport bar                │ metrics      │
//   │ panel      ├──────────────────────────────┤              │
//   │            │ topology view                ├──────────────┤
//   │            │                              │ buffer view  │
//   ├────────────┴──────────────────────────────┴──────────────┤
//   │ Gantt timeline                                           │
//   └──────────────────────────────────────────────────────────┘
#pragma once

#include "app/gui/model/topology_layout.h"

namespace shardlab::gui {

struct PanelLayout {
  Rect menu_bar;
  Rect scenario;
  Rect transport;
  Rect topology;
  Rect metrics;
  Rect buffers;
  Rect gantt;
};

/// The share of the right column the metrics take above the buffer view:
/// a collective's buffers need the room; a pipeline's per-stage table does.
inline constexpr float kCollectiveMetricsShare = 0.40f;
inline constexpr float kPipelineMetricsShare = 0.78f;

/// Pixel rectangles for a window of `width` x `height` pixels whose menu
/// bar is `menu_height` tall. Panels tile the window without overlap.
PanelLayout ComputePanelLayout(float width, float height, float menu_height,
                               float metrics_share = kCollectiveMetricsShare);

}  // namespace shardlab::gui
