// GanttLayout: exact time-to-pixel mapping, folding that never hides an op
// a pixel wide, the replay cursor, zoom about an anchor, and the ruler.
#include "app/gui/model/gantt_layout.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace shardlab::gui {
namespace {

Event Op(TimeNs start_ns, TimeNs end_ns) {
  Event e;
  e.op = 0;
  e.lane = Lane::kSend;
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  return e;
}

TimelineRow RowOf(std::vector<Event> events) {
  TimelineRow row;
  row.events = std::move(events);
  for (std::size_t i = 0; i < row.events.size(); ++i) row.events[i].op = static_cast<int>(i);
  return row;
}

GanttFrame Frame(TimeNs view_start_ns, double ns_per_px, double width_px = 1000) {
  GanttFrame frame;
  frame.view_start_ns = view_start_ns;
  frame.ns_per_px = ns_per_px;
  frame.width_px = width_px;
  return frame;
}

// Every visible event is in exactly one box, boxes in event order.
void ExpectEachVisibleOpCoveredOnce(const TimelineRow& row, const GanttFrame& frame,
                                    const std::vector<GanttBox>& boxes) {
  std::vector<int> covered(row.events.size(), 0);
  int next = -1;
  for (const GanttBox& box : boxes) {
    ASSERT_GE(box.event_count, 1);
    EXPECT_GT(box.first_event, next - 1);
    for (int i = box.first_event; i < box.first_event + box.event_count; ++i)
      ++covered[static_cast<std::size_t>(i)];
    next = box.first_event + box.event_count;
    EXPECT_GE(box.x0_px, 0);
    EXPECT_LE(box.x1_px, frame.width_px);
    EXPECT_LE(box.x0_px, box.x1_px);
  }
  for (std::size_t i = 0; i < row.events.size(); ++i) {
    const Event& e = row.events[i];
    const bool visible = e.end_ns >= frame.view_start_ns && e.start_ns <= frame.view_end_ns() &&
                         e.start_ns <= frame.cursor_ns;
    EXPECT_EQ(covered[i], visible ? 1 : 0) << "event " << i;
  }
}

TEST(GanttLayout, MapsTimeToPixelsExactlyAtEveryZoom) {
  const TimelineRow row = RowOf({Op(100, 300)});
  struct Case {
    TimeNs view_start_ns;
    double ns_per_px;
    double x0, x1;
  };
  for (const Case& c : {Case{0, 0.5, 200, 600}, Case{50, 0.5, 100, 500}, Case{0, 10, 10, 30},
                        Case{-1000, 10, 110, 130}, Case{0, 1e4, 0.01, 0.03}}) {
    const GanttFrame frame = Frame(c.view_start_ns, c.ns_per_px);
    EXPECT_DOUBLE_EQ(frame.TimeToPx(100), c.x0);
    EXPECT_DOUBLE_EQ(frame.TimeToPx(300), c.x1);
    const std::vector<GanttBox> boxes = PrepareGanttRow(row, frame);
    ASSERT_EQ(boxes.size(), 1u) << c.ns_per_px;
    EXPECT_EQ(boxes[0].first_event, 0);
    EXPECT_EQ(boxes[0].event_count, 1);
    EXPECT_DOUBLE_EQ(boxes[0].x0_px, c.x0);
    if (c.x1 - c.x0 >= kMinOpPx) {
      EXPECT_DOUBLE_EQ(boxes[0].x1_px, c.x1);
    } else {
      EXPECT_DOUBLE_EQ(boxes[0].x1_px, c.x0 + 1);  // a tiny op stays one pixel wide
    }
  }
}

TEST(GanttLayout, ClampsOpsCutByTheViewAndSkipsOpsOutsideIt) {
  const TimelineRow row = RowOf({Op(0, 50), Op(60, 200), Op(400, 1200), Op(1300, 1400)});
  const GanttFrame frame = Frame(100, 1, 1000);  // shows [100, 1100]
  const std::vector<GanttBox> boxes = PrepareGanttRow(row, frame);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].first_event, 1);
  EXPECT_DOUBLE_EQ(boxes[0].x0_px, 0);
  EXPECT_DOUBLE_EQ(boxes[0].x1_px, 100);
  EXPECT_EQ(boxes[1].first_event, 2);
  EXPECT_DOUBLE_EQ(boxes[1].x0_px, 300);
  EXPECT_DOUBLE_EQ(boxes[1].x1_px, 1000);
  EXPECT_TRUE(PrepareGanttRow(RowOf({}), frame).empty());
}

TEST(GanttLayout, FoldingNeverHidesAnOpAPixelWide) {
  std::mt19937 rng(7);
  const double ns_per_px = 7.0;
  // Op widths in pixels: tiny, sub-pixel, exactly one pixel, wide; gaps likewise.
  const double widths_px[] = {0.01, 0.01, 0.01, 0.3, 0.99, 1.0, 5.0, 40.0};
  const double gaps_px[] = {0, 0, 0, 0.02, 0.5, 2.5, 10};
  std::vector<Event> events;
  TimeNs t = -300;
  for (int i = 0; i < 20000; ++i) {
    t += gaps_px[rng() % 7] * ns_per_px;
    const TimeNs end = t + widths_px[rng() % 8] * ns_per_px;
    events.push_back(Op(t, end));
    t = end;
  }
  const TimelineRow row = RowOf(events);
  for (const TimeNs view_start_ns : {-500.0, 0.0, 12345.0}) {
    const GanttFrame frame = Frame(view_start_ns, ns_per_px, 1000);
    const std::vector<GanttBox> boxes = PrepareGanttRow(row, frame);
    ExpectEachVisibleOpCoveredOnce(row, frame, boxes);
    std::set<int> own;
    for (const GanttBox& box : boxes) {
      if (box.event_count == 1) own.insert(box.first_event);
      if (box.event_count > 1) {
        EXPECT_GE(box.x1_px - box.x0_px, kMinOpPx - 1e-9);
      }
    }
    int checked = 0;
    for (const GanttBox& box : boxes) {
      const Event& e = row.events[static_cast<std::size_t>(box.first_event)];
      const double x0 = frame.TimeToPx(e.start_ns), x1 = frame.TimeToPx(e.end_ns);
      if (box.event_count != 1 || x1 - x0 < kMinOpPx) continue;
      EXPECT_DOUBLE_EQ(box.x0_px, std::clamp(x0, 0.0, frame.width_px));
      EXPECT_DOUBLE_EQ(box.x1_px, std::clamp(x1, 0.0, frame.width_px));
      ++checked;
    }
    EXPECT_GT(checked, 10);
    for (std::size_t i = 0; i < row.events.size(); ++i) {
      const Event& e = row.events[i];
      const bool visible = e.end_ns >= frame.view_start_ns && e.start_ns <= frame.view_end_ns();
      if (visible && frame.TimeToPx(e.end_ns) - frame.TimeToPx(e.start_ns) >= kMinOpPx) {
        EXPECT_TRUE(own.count(static_cast<int>(i))) << "op " << i << " was folded";
      }
    }
  }
}

TEST(GanttLayout, HundredThousandTinyOpsFoldIntoAtMostAPixelsWorthOfBoxes) {
  std::mt19937 rng(3);
  std::vector<Event> contiguous, scattered;
  TimeNs a = 0, b = 0;
  for (int i = 0; i < 100000; ++i) {
    contiguous.push_back(Op(a, a + 0.01));  // 0.01 px each at 1 ns per px
    a += 0.01;
    b += 0.005 * static_cast<double>(rng() % 3);  // gaps of 0, 0.005, 0.01 px
    scattered.push_back(Op(b, b + 0.002));
    b += 0.002;
  }
  for (const std::vector<Event>* events : {&contiguous, &scattered}) {
    const TimelineRow row = RowOf(*events);
    const GanttFrame frame = Frame(0, 1.0, 1000);
    const std::vector<GanttBox> boxes = PrepareGanttRow(row, frame);
    ExpectEachVisibleOpCoveredOnce(row, frame, boxes);
    EXPECT_LE(boxes.size(), 1000u);
    EXPECT_GE(boxes.size(), 100u);  // folded, but not into one smear
  }
}

TEST(GanttLayout, CursorCutsTheOpInFlightAndHidesLaterOnes) {
  const TimelineRow row = RowOf({Op(0, 100), Op(100, 200), Op(200, 300)});
  GanttFrame frame = Frame(0, 0.5, 1000);
  frame.cursor_ns = 150;
  const std::vector<GanttBox> boxes = PrepareGanttRow(row, frame);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_FALSE(boxes[0].in_flight);
  EXPECT_DOUBLE_EQ(boxes[0].x1_px, 200);
  EXPECT_TRUE(boxes[1].in_flight);
  EXPECT_DOUBLE_EQ(boxes[1].x0_px, 200);
  EXPECT_DOUBLE_EQ(boxes[1].x1_px, 300);  // drawn up to the cursor only

  frame.cursor_ns = 100;  // the second op starts exactly now: a sliver in flight
  const std::vector<GanttBox> at_start = PrepareGanttRow(row, frame);
  ASSERT_EQ(at_start.size(), 2u);
  EXPECT_FALSE(at_start[0].in_flight);
  EXPECT_TRUE(at_start[1].in_flight);
  frame.cursor_ns = -1;
  EXPECT_TRUE(PrepareGanttRow(row, frame).empty());
}

TEST(GanttLayout, ZoomKeepsTheTimeUnderTheAnchor) {
  const GanttFrame frame = Frame(1234.5, 3.7, 800);
  for (const double factor : {2.0, 0.5, 10.0, 1.0 / 3}) {
    for (const double anchor_px : {0.0, 333.0, 800.0}) {
      const GanttFrame zoomed = ZoomGantt(frame, factor, anchor_px);
      EXPECT_NEAR(zoomed.PxToTime(anchor_px), frame.PxToTime(anchor_px), 1e-9);
      EXPECT_NEAR(zoomed.ns_per_px, frame.ns_per_px / factor, 1e-12);
      EXPECT_EQ(zoomed.width_px, frame.width_px);
    }
  }
  EXPECT_EQ(ZoomGantt(frame, 0, 10).ns_per_px, frame.ns_per_px);  // nonsense is ignored
}

TEST(GanttLayout, FitShowsTheWholeRunWithAMargin) {
  const GanttFrame frame = FitGantt(5e6, 1200);
  EXPECT_GT(frame.TimeToPx(0), 0);
  EXPECT_LT(frame.TimeToPx(0), 0.05 * 1200);
  EXPECT_LT(frame.TimeToPx(5e6), 1200);
  EXPECT_GT(frame.TimeToPx(5e6), 0.95 * 1200);
  EXPECT_GT(FitGantt(0, 1200).ns_per_px, 0);  // an empty run still gives a usable view
}

TEST(GanttLayout, RulerTicksAreOneTwoFiveStepsWithUnits) {
  for (const double ns_per_px : {0.013, 1.0, 37.0, 1e4, 2.5e6}) {
    for (const TimeNs view_start_ns : {-50.0 * ns_per_px, 0.0, 777.7 * ns_per_px}) {
      const GanttFrame frame = Frame(view_start_ns, ns_per_px, 1000);
      const std::vector<RulerTick> ticks = RulerTicks(frame, 80);
      SCOPED_TRACE(std::to_string(ns_per_px) + " ns/px from " + std::to_string(view_start_ns));
      std::vector<const RulerTick*> majors;
      for (std::size_t i = 0; i < ticks.size(); ++i) {
        EXPECT_GE(ticks[i].x_px, 0);
        EXPECT_LE(ticks[i].x_px, frame.width_px);
        if (i > 0) {
          EXPECT_GT(ticks[i].t_ns, ticks[i - 1].t_ns);
        }
        if (ticks[i].major) majors.push_back(&ticks[i]);
      }
      ASSERT_GE(majors.size(), 5u);
      ASSERT_LE(majors.size(), 14u);
      const double step_ns = majors[1]->t_ns - majors[0]->t_ns;
      const double mantissa = step_ns / std::pow(10.0, std::floor(std::log10(step_ns) + 1e-9));
      EXPECT_TRUE(std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 ||
                  std::abs(mantissa - 5) < 1e-6)
          << step_ns;
      std::set<std::string> labels;
      for (std::size_t i = 0; i < majors.size(); ++i) {
        const std::string& label = majors[i]->label;
        const bool has_unit = label.ends_with(" ns") || label.ends_with(" µs") ||
                              label.ends_with(" ms") || label.ends_with(" s");
        EXPECT_TRUE(has_unit) << label;
        labels.insert(label);
        if (i > 0) {
          EXPECT_GE(majors[i]->x_px - majors[i - 1]->x_px, 80 - 1e-6);
        }
      }
      EXPECT_EQ(labels.size(), majors.size()) << "labels repeat";
    }
  }
}

TEST(GanttLayout, RulerLabelsReadLikeAHuman) {
  const std::vector<RulerTick> ticks = RulerTicks(Frame(0, 10, 1000), 80);  // 0 .. 10 µs
  std::vector<std::string> labels;
  for (const RulerTick& tick : ticks)
    if (tick.major) labels.push_back(tick.label);
  ASSERT_GE(labels.size(), 3u);
  EXPECT_EQ(labels[0], "0 µs");
  EXPECT_EQ(labels[1], "1 µs");
  EXPECT_EQ(labels[2], "2 µs");
}

TEST(GanttLayout, EventAtPxFindsOwnBoxesButNotFoldedBlocks) {
  const TimelineRow row =
      RowOf({Op(0, 100), Op(100, 100.1), Op(100.1, 100.2), Op(100.2, 100.3), Op(300, 500)});
  const GanttFrame frame = Frame(0, 1, 1000);
  const std::vector<GanttBox> boxes = PrepareGanttRow(row, frame);
  ASSERT_EQ(boxes.size(), 3u);
  EXPECT_EQ(boxes[1].event_count, 3);
  EXPECT_EQ(EventAtPx(row, boxes, 50), 0);
  EXPECT_EQ(EventAtPx(row, boxes, 100.5), -1);  // the folded block
  EXPECT_EQ(EventAtPx(row, boxes, 400), 4);
  EXPECT_EQ(EventAtPx(row, boxes, 200), -1);  // idle
  EXPECT_EQ(EventAtPx(row, boxes, 900), -1);
}

}  // namespace
}  // namespace shardlab::gui
