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

/// Pixel rectangles for a window of `width` x `height` pixels whose menu
/// bar is `menu_height` tall. Panels tile the window without overlap.
PanelLayout ComputePanelLayout(float width, float height, float menu_height);

}  // namespace shardlab::gui
