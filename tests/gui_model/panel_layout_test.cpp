// PanelLayout: the panels tile the window without overlap, with and
// without a tensor-parallel layer's weights or ZeRO's memory chart beside
// the Gantt.
#include "app/gui/model/panel_layout.h"

#include <gtest/gtest.h>

#include <vector>

namespace shardlab::gui {
namespace {

double Area(const Rect& r) { return static_cast<double>(r.width()) * r.height(); }

void ExpectTiles(const PanelLayout& p, float width, float height) {
  const std::vector<Rect> panels = {p.menu_bar, p.scenario, p.transport, p.topology,
                                    p.metrics,  p.buffers,  p.gantt,     p.weights};
  double area = 0;
  for (std::size_t i = 0; i < panels.size(); ++i) {
    EXPECT_GE(panels[i].width(), 0) << "panel " << i;
    EXPECT_GE(panels[i].height(), 0) << "panel " << i;
    EXPECT_GE(panels[i].min.x, 0) << "panel " << i;
    EXPECT_LE(panels[i].max.x, width) << "panel " << i;
    EXPECT_LE(panels[i].max.y, height) << "panel " << i;
    area += Area(panels[i]);
    for (std::size_t j = 0; j < i; ++j) {
      if (Area(panels[i]) > 0 && Area(panels[j]) > 0) {
        EXPECT_FALSE(panels[i].Overlaps(panels[j])) << "panels " << j << " and " << i;
      }
    }
  }
  EXPECT_NEAR(area, static_cast<double>(width) * height, 1.0) << "the panels cover the window";
}

TEST(PanelLayout, CollectivePanelsTileTheWindowWithoutWeights) {
  const PanelLayout p = ComputePanelLayout(1600, 1000, 22);
  ExpectTiles(p, 1600, 1000);
  EXPECT_EQ(Area(p.weights), 0);
  EXPECT_EQ(p.gantt.width(), 1600);
}

TEST(PanelLayout, TensorParallelWeightsSitBesideTheGanttAndTheMetricsTakeTheColumn) {
  for (const auto& [w, h] : std::vector<std::pair<float, float>>{{1600, 1000}, {1280, 800}, {640, 480}}) {
    const PanelLayout p = ComputePanelLayout(w, h, 22, kTpMetricsShare, kTpWeightsShare);
    ExpectTiles(p, w, h);
    EXPECT_NEAR(p.weights.width(), w * kTpWeightsShare, 0.5);
    EXPECT_EQ(p.weights.min.y, p.gantt.min.y) << "side by side";
    EXPECT_EQ(p.weights.max.y, p.gantt.max.y);
    EXPECT_EQ(p.weights.min.x, p.gantt.max.x);
    EXPECT_EQ(Area(p.buffers), 0) << "no chunk buffers to show";
    // The band is taller than a collective's, so both have rows to show.
    EXPECT_GT(p.gantt.height(), ComputePanelLayout(w, h, 22).gantt.height() - 0.5f);
  }
}

TEST(PanelLayout, ZeroMemoryChartSitsBesideTheGanttAndTheMetricsTakeTheColumn) {
  for (const auto& [w, h] : std::vector<std::pair<float, float>>{{1600, 1000}, {1280, 800}, {640, 480}}) {
    const PanelLayout p = ComputePanelLayout(w, h, 22, kZeroMetricsShare, kZeroMemoryShare);
    ExpectTiles(p, w, h);
    EXPECT_NEAR(p.weights.width(), w * kZeroMemoryShare, 0.5);
    EXPECT_EQ(p.weights.min.y, p.gantt.min.y) << "side by side";
    EXPECT_EQ(p.weights.min.x, p.gantt.max.x);
    EXPECT_EQ(Area(p.buffers), 0) << "no chunk buffers to show";
    EXPECT_GT(p.weights.height(), 0.4f * (h - 22) - 0.5f) << "room for the bars";
  }
}

}  // namespace
}  // namespace shardlab::gui
