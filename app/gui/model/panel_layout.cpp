#include "app/gui/model/panel_layout.h"

#include <algorithm>

namespace shardlab::gui {

PanelLayout ComputePanelLayout(float width, float height, float menu_height, float metrics_share,
                               float weights_share) {
  PanelLayout p;
  const float top = menu_height;
  const float body = std::max(height - top, 1.0f);
  // Side columns keep a readable minimum; the centre takes what is left.
  const float left_w = std::clamp(width * 0.20f, std::min(260.0f, width * 0.3f), 380.0f);
  const float right_w = std::clamp(width * 0.24f, std::min(300.0f, width * 0.3f), 460.0f);
  // With weights beside it the band is taller: both want the rows.
  const float band_share = weights_share > 0 ? 0.42f : 0.36f;
  const float gantt_h = std::clamp(body * band_share, std::min(180.0f, body * 0.5f), body * 0.5f);
  const float upper_bottom = top + body - gantt_h;
  const float transport_h = std::min(44.0f, (upper_bottom - top) * 0.2f);
  const float metrics_h = (upper_bottom - top) * std::clamp(metrics_share, 0.1f, 1.0f);
  const float weights_w = width * std::clamp(weights_share, 0.0f, 0.8f);

  p.menu_bar = {{0, 0}, {width, top}};
  p.scenario = {{0, top}, {left_w, upper_bottom}};
  p.transport = {{left_w, top}, {width - right_w, top + transport_h}};
  p.topology = {{left_w, top + transport_h}, {width - right_w, upper_bottom}};
  p.metrics = {{width - right_w, top}, {width, top + metrics_h}};
  p.buffers = {{width - right_w, top + metrics_h}, {width, upper_bottom}};
  p.gantt = {{0, upper_bottom}, {width - weights_w, top + body}};
  p.weights = {{width - weights_w, upper_bottom}, {width, top + body}};
  return p;
}

}  // namespace shardlab::gui
