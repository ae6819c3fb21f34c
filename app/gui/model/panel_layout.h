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
//
// A tensor-parallel layer gives the bottom band's right part to its weight
// blocks, beside the Gantt, and the whole right column to the metrics; a
// ZeRO run gives the same place to its memory chart:
//
//   ├────────────┴──────────────────────────────┤ metrics      │
//   │ Gantt timeline              │ weights      │ (no buffers) │
//   └─────────────────────────────┴──────────────┴──────────────┘
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
  Rect weights;  // beside the Gantt: tensor-parallel weight blocks or ZeRO's
                 // memory chart; empty (zero size) otherwise
};

/// The share of the right column the metrics take above the buffer view:
/// a collective's buffers need the room; a pipeline's per-stage table does.
inline constexpr float kCollectiveMetricsShare = 0.40f;
inline constexpr float kPipelineMetricsShare = 0.78f;
/// A tensor-parallel layer has no chunk buffers: the metrics take the column.
inline constexpr float kTpMetricsShare = 1.0f;
/// The share of the bottom band's width the weight blocks take beside the
/// Gantt (0: no weights panel); with them the band is 42% of the height, not 36%.
inline constexpr float kTpWeightsShare = 0.42f;

/// ZeRO: the metrics take the column (no chunk buffers) and the memory
/// chart the weights' place, a little wider: it is the run's main picture.
inline constexpr float kZeroMetricsShare = 1.0f;
inline constexpr float kZeroMemoryShare = 0.46f;

/// Pixel rectangles for a window of `width` x `height` pixels whose menu
/// bar is `menu_height` tall. Panels tile the window without overlap; a
/// metrics share of 1 leaves the buffers an empty rectangle at the column's
/// foot, a weights share of 0 leaves the weights one at the band's end.
PanelLayout ComputePanelLayout(float width, float height, float menu_height,
                               float metrics_share = kCollectiveMetricsShare, float weights_share = 0.0f);

}  // namespace shardlab::gui
