// The overlay of two runs of one plan on the Gantt (prepare half): both
// runs' bars of an op on the same row, hover text with both times and the
// error, the metrics panel's summary equal to `shardlab-cli compare`, and a
// trace of another plan refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "app/gui/model/compare_overlay.h"
#include "app/gui/model/scenario_fields.h"
#include "app/gui/model/session.h"
#include "engine/core/json_parse.h"
#include "engine/io/trace_reader.h"
#include "tests/common/run_program.h"

namespace shardlab::gui {
namespace {

using test_util::Describe;
using test_util::ProgramResult;
using test_util::RunProgram;
using test_util::TempDir;

const std::string kCli = SHARDLAB_CLI_PATH;
const std::string kRing = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200-ring8-64M-warm.json";
const std::string kPipe = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200-1f1b.json";
const std::string kProfile = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200.toml";

// The model's run of the recorded plan: one H200 holding 8 virtual ranks.
std::string ModelTrace(const TempDir& dir) {
  const std::string path = (dir.path() / "model.json").string();
  const ProgramResult r = RunProgram(kCli, {"run", "allreduce", "--ranks", "8", "--size", "64M", "--topology", "this",
                                            "--device-profile", kProfile, "--timing-only", "--trace", path},
                                     dir.path());
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  return path;
}

TEST(CompareOverlay, BothRunsBarsOfOneOpAreOnTheSameRowLinkedById) {
  TempDir dir;
  const LoadedTrace measured = ReadChromeTraceFile(kRing);
  const LoadedTrace model = ReadChromeTraceFile(ModelTrace(dir));
  const CompareOverlay overlay(RunFromTrace(measured), RunFromTrace(model), measured.original_op, "model.json");
  TimelineStore store;
  store.Add(measured.events);
  const GanttFrame frame = FitGantt(std::max(store.end_ns(), model.events.back().end_ns * 2), 1000.0);
  std::size_t outlines = 0;
  for (const TimelineRow& row : store.rows()) {
    const std::vector<OverlayBox> boxes = PrepareOverlayRow(row, overlay, frame);
    EXPECT_EQ(boxes.size(), row.events.size());  // every op has its outline, on this row
    for (const OverlayBox& box : boxes) {
      const Event& shown = row.events[static_cast<std::size_t>(box.event_index)];
      const std::int32_t id = measured.original_op[static_cast<std::size_t>(shown.op)];
      // The model's op of that id: same rank and lane as the row; its time is the outline's.
      const auto it = std::find(model.original_op.begin(), model.original_op.end(), id);
      ASSERT_NE(it, model.original_op.end());
      const Event& other = model.events[static_cast<std::size_t>(it - model.original_op.begin())];
      EXPECT_EQ(other.rank, row.rank);
      EXPECT_EQ(other.lane, row.lane);
      EXPECT_NEAR(box.x0_px, frame.TimeToPx(other.start_ns), 1e-9);
      EXPECT_NEAR(box.x1_px, std::max(frame.TimeToPx(other.end_ns), box.x0_px + 1.0), 1e-9);
      const double expected_shade =
          std::min(1.0, std::fabs(std::log2(other.duration_ns() / shown.duration_ns())) / 2.0);
      EXPECT_NEAR(box.shade, expected_shade, 1e-12);
      ++outlines;
    }
  }
  EXPECT_EQ(outlines, 224u);
  double model_end = 0;
  for (const Event& e : model.events) model_end = std::max(model_end, e.end_ns);
  EXPECT_DOUBLE_EQ(overlay.added_end_ns(), model_end);
}

TEST(CompareOverlay, HoverTextCarriesBothTimesAndTheError) {
  TempDir dir;
  const LoadedTrace measured = ReadChromeTraceFile(kRing);
  const LoadedTrace model = ReadChromeTraceFile(ModelTrace(dir));
  const CompareOverlay overlay(RunFromTrace(measured), RunFromTrace(model), measured.original_op, "model.json");
  // The shown event of op 5, and the model's.
  const std::size_t a = static_cast<std::size_t>(
      std::find(measured.original_op.begin(), measured.original_op.end(), 5) - measured.original_op.begin());
  const std::size_t b = static_cast<std::size_t>(
      std::find(model.original_op.begin(), model.original_op.end(), 5) - model.original_op.begin());
  const TimeNs a_ns = measured.events[a].duration_ns(), b_ns = model.events[b].duration_ns();
  const std::string text = overlay.HoverText(measured.events[a].op);
  char error[32];
  std::snprintf(error, sizeof error, "error %+.0f%%", 100.0 * (b_ns - a_ns) / a_ns);
  EXPECT_NE(text.find("op 5 "), std::string::npos) << text;
  EXPECT_NE(text.find("cuda-event) " + FormatTime(a_ns)), std::string::npos) << text;
  EXPECT_NE(text.find("simulated) " + FormatTime(b_ns)), std::string::npos) << text;
  EXPECT_NE(text.find(error), std::string::npos) << text << " / " << error;
  EXPECT_EQ(overlay.HoverText(100000), "");
}

/// The metrics panel's lines of `overlay` against `shardlab-cli compare
/// FIRST SECOND --json`: the same rows, names and times, and the same
/// explanation.
void ExpectSummaryIsTheCli(const CompareOverlay& overlay, const std::string& first, const std::string& second,
                           const TempDir& dir) {
  const ProgramResult cli = RunProgram(kCli, {"compare", first, second, "--json"}, dir.path());
  ASSERT_EQ(cli.exit_code, 0) << Describe(cli);
  JsonParser parser(cli.out, "stdout");
  const JsonValue doc = parser.ParseValue();
  const std::vector<SummaryLine> lines = OverlaySummary(overlay.comparison());
  std::vector<const JsonValue*> rows = {doc.Find("run")};
  for (const JsonValue& p : doc.Find("phases")->items) rows.push_back(&p);
  for (const char* key : {"communication", "compute", "idle"}) rows.push_back(doc.Find("totals")->Find(key));
  ASSERT_EQ(lines.size(), rows.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].name, rows[i]->Find("name")->string);
    EXPECT_NEAR(lines[i].a_ns / 1000.0, rows[i]->Find("a_us")->number, 1e-6 * std::max(1.0, lines[i].a_ns / 1000.0));
    EXPECT_NEAR(lines[i].b_ns / 1000.0, rows[i]->Find("b_us")->number, 1e-6 * std::max(1.0, lines[i].b_ns / 1000.0));
    EXPECT_NEAR(lines[i].ratio, lines[i].a_ns > 0 ? lines[i].b_ns / lines[i].a_ns : 0.0, 1e-12);
  }
  EXPECT_EQ(overlay.comparison().explanation, doc.Find("explanation")->string);
}

TEST(CompareOverlay, TheSummaryHasTheNumbersOfTheCompareCommand) {
  TempDir dir;
  const std::string model_path = ModelTrace(dir);
  Session session;
  std::string message;
  ASSERT_TRUE(session.OpenTrace(kRing, &message)) << message;
  ASSERT_TRUE(session.OpenCompareTrace(model_path, &message)) << message;
  ASSERT_NE(session.compare(), nullptr);
  ExpectSummaryIsTheCli(*session.compare(), kRing, model_path, dir);
}

// The measurement is the reference in every front end: the model's trace on
// screen with the measured one added still compares A = measured, as
// `shardlab-cli compare` does in either order of its files; the solid bars
// stay the run shown, and the panel says which of them is A.
TEST(CompareOverlay, TheMeasuredRunIsAWhicheverIsShownAsInTheCli) {
  TempDir dir;
  const std::string model_path = ModelTrace(dir);
  const LoadedTrace measured = ReadChromeTraceFile(kRing);
  const LoadedTrace model = ReadChromeTraceFile(model_path);
  ASSERT_EQ(measured.clock, "cuda-event");
  ASSERT_EQ(model.clock, "simulated");
  for (const bool model_shown : {false, true}) {
    SCOPED_TRACE(model_shown ? "model shown, measured added" : "measured shown, model added");
    Session session;
    std::string message;
    ASSERT_TRUE(session.OpenTrace(model_shown ? model_path : kRing, &message)) << message;
    ASSERT_TRUE(session.OpenCompareTrace(model_shown ? kRing : model_path, &message)) << message;
    ASSERT_NE(session.compare(), nullptr);
    const CompareOverlay& overlay = *session.compare();
    EXPECT_EQ(overlay.shown_is_a(), !model_shown);
    EXPECT_EQ(overlay.comparison().a_label, "cuda (cuda-event)");
    EXPECT_EQ(overlay.comparison().b_label, "sim (simulated)");
    EXPECT_EQ(overlay.shown_label(), model_shown ? "sim (simulated)" : "cuda (cuda-event)");
    EXPECT_EQ(overlay.added_label(), model_shown ? "cuda (cuda-event)" : "sim (simulated)");
    // The run's span: A the measured trace's, B the model's, computed here from the events.
    TimeNs measured_end = 0, model_end = 0;
    for (const Event& e : measured.events) measured_end = std::max(measured_end, e.end_ns);
    for (const Event& e : model.events) model_end = std::max(model_end, e.end_ns);
    TimeNs measured_start = measured_end, model_start = model_end;
    for (const Event& e : measured.events) measured_start = std::min(measured_start, e.start_ns);
    for (const Event& e : model.events) model_start = std::min(model_start, e.start_ns);
    EXPECT_NEAR(overlay.comparison().run.a_ns, measured_end - measured_start, 1e-6);
    EXPECT_NEAR(overlay.comparison().run.b_ns, model_end - model_start, 1e-6);
    EXPECT_LT(overlay.comparison().run.ratio(), 1.0);  // the model is faster than the H200 measured
    // Both orders of the CLI's files give these numbers.
    ExpectSummaryIsTheCli(overlay, kRing, model_path, dir);
    ExpectSummaryIsTheCli(overlay, model_path, kRing, dir);
    // Hover on a shown bar: A's time first, the error (B - A) / A with A measured.
    const LoadedTrace& shown = model_shown ? model : measured;
    const std::size_t at = static_cast<std::size_t>(
        std::find(shown.original_op.begin(), shown.original_op.end(), 5) - shown.original_op.begin());
    const std::size_t a = static_cast<std::size_t>(
        std::find(measured.original_op.begin(), measured.original_op.end(), 5) - measured.original_op.begin());
    const std::size_t b = static_cast<std::size_t>(
        std::find(model.original_op.begin(), model.original_op.end(), 5) - model.original_op.begin());
    const TimeNs a_ns = measured.events[a].duration_ns(), b_ns = model.events[b].duration_ns();
    char expected[128];
    std::snprintf(expected, sizeof expected, "error %+.0f%%", 100.0 * (b_ns - a_ns) / a_ns);
    const std::string text = overlay.HoverText(shown.events[at].op);
    const std::string a_part = "cuda (cuda-event) " + FormatTime(a_ns);
    const std::string b_part = "sim (simulated) " + FormatTime(b_ns);
    ASSERT_NE(text.find(a_part), std::string::npos) << text;
    ASSERT_NE(text.find(b_part), std::string::npos) << text;
    EXPECT_LT(text.find(a_part), text.find(b_part)) << text;
    EXPECT_NE(text.find(expected), std::string::npos) << text << " / " << expected;
  }
}

// The replay cursor reveals both runs alike, as it reveals an opened trace
// alone: before it moves nothing of either run shows (the bars and the
// outlines), and at any time t exactly the ops that started by t, each cut at t.
TEST(CompareOverlay, TheOutlinesFollowTheReplayCursorAsTheBarsDo) {
  TempDir dir;
  const LoadedTrace measured = ReadChromeTraceFile(kRing);
  const LoadedTrace model = ReadChromeTraceFile(ModelTrace(dir));
  const CompareOverlay overlay(RunFromTrace(measured), RunFromTrace(model), measured.original_op, "model.json");
  TimelineStore store;
  store.Add(measured.events);
  const TimeNs end = std::max(store.end_ns(), overlay.added_end_ns());
  std::map<std::int32_t, const Event*> model_op;  // the model's event of each op id
  for (std::size_t i = 0; i < model.events.size(); ++i) model_op[model.original_op[i]] = &model.events[i];
  TimeNs first_start = end;
  for (const Event& e : model.events) first_start = std::min(first_start, e.start_ns);
  for (const double share : {0.0, 0.1, 0.37, 0.5, 0.9, 1.0}) {
    GanttFrame frame = FitGantt(end, 1200.0);
    // Just before the model's first op at 0; a share of the longer run after.
    frame.cursor_ns = share == 0.0 ? first_start - 1.0 : share * end;
    SCOPED_TRACE("cursor " + FormatTime(frame.cursor_ns));
    std::size_t outlines = 0, started = 0, bars = 0, bar_events_started = 0;
    for (const TimelineRow& row : store.rows()) {
      for (const OverlayBox& box : PrepareOverlayRow(row, overlay, frame)) {
        const Event& shown = row.events[static_cast<std::size_t>(box.event_index)];
        const Event& other = *model_op.at(measured.original_op[static_cast<std::size_t>(shown.op)]);
        ASSERT_LE(other.start_ns, frame.cursor_ns);
        EXPECT_NEAR(box.x0_px, frame.TimeToPx(other.start_ns), 1e-9);
        const double cut = frame.TimeToPx(std::min(other.end_ns, frame.cursor_ns));
        EXPECT_NEAR(box.x1_px, std::max(cut, box.x0_px + 1.0), 1e-9);
        EXPECT_EQ(box.in_flight, other.end_ns > frame.cursor_ns);
        ++outlines;
      }
      for (const Event& e : row.events) {
        started += model_op.at(measured.original_op[static_cast<std::size_t>(e.op)])->start_ns <= frame.cursor_ns;
        bar_events_started += e.start_ns <= frame.cursor_ns;
      }
      for (const GanttBox& box : PrepareGanttRow(row, frame)) bars += static_cast<std::size_t>(box.event_count);
    }
    EXPECT_EQ(outlines, started);  // every model op that started by the cursor, and no other
    EXPECT_EQ(bars, bar_events_started);  // the bars' rule, for the same cursor
    if (share == 0.0) {
      EXPECT_EQ(outlines, 0u);
      EXPECT_EQ(bars, 0u);
    }
    if (share == 1.0) {
      EXPECT_EQ(outlines, measured.events.size());
    }
  }
  // A run laid over itself: outline and bar of each op cover the same pixels at any cursor.
  const CompareOverlay same(RunFromTrace(measured), RunFromTrace(measured), measured.original_op, "itself");
  GanttFrame frame = FitGantt(store.end_ns(), 1200.0);
  frame.cursor_ns = 0.4 * store.end_ns();
  for (const TimelineRow& row : store.rows()) {
    std::size_t revealed = 0;
    for (const GanttBox& box : PrepareGanttRow(row, frame)) {
      if (box.event_count != 1 || box.x1_px - box.x0_px < 2.0 * kMinOpPx) continue;  // a box never widened
      ++revealed;
      bool found = false;
      for (const OverlayBox& o : PrepareOverlayRow(row, same, frame)) {
        if (o.event_index != box.first_event) continue;
        found = true;
        EXPECT_NEAR(o.x0_px, box.x0_px, 1e-9);
        EXPECT_NEAR(o.x1_px, box.x1_px, 1e-9);
        EXPECT_EQ(o.in_flight, box.in_flight);
      }
      EXPECT_TRUE(found) << "a bar without its outline on " << row.rank;
    }
    EXPECT_LE(revealed, PrepareOverlayRow(row, same, frame).size());
  }
}

// The app's replay covers both runs: the cursor reaches the later run's end.
TEST(CompareOverlay, TheReplayEndsWithTheLaterOfTheTwoRuns) {
  TempDir dir;
  const std::string model_path = ModelTrace(dir);
  Session session;
  std::string message;
  ASSERT_TRUE(session.OpenTrace(model_path, &message)) << message;
  const TimeNs model_end = session.store().end_ns();
  EXPECT_EQ(session.replay_end_ns(), model_end);  // a trace alone: its own end
  ASSERT_TRUE(session.OpenCompareTrace(kRing, &message)) << message;
  TimeNs measured_end = 0;
  for (const Event& e : ReadChromeTraceFile(kRing).events) measured_end = std::max(measured_end, e.end_ns);
  ASSERT_GT(measured_end, model_end);  // the H200 took longer than the model says
  EXPECT_EQ(session.replay_end_ns(), measured_end);
}

TEST(CompareOverlay, ATraceOfAnotherPlanIsRefusedWithTheReason) {
  Session session;
  std::string message;
  EXPECT_FALSE(session.OpenCompareTrace(kRing, &message));  // nothing shown yet
  EXPECT_NE(message.find("nothing to compare with"), std::string::npos) << message;
  ASSERT_TRUE(session.OpenTrace(kRing, &message)) << message;
  EXPECT_FALSE(session.OpenCompareTrace(kPipe, &message));
  EXPECT_NE(message.find("not runs of one plan: op 0: A has send of 8 MiB on rank 0"), std::string::npos) << message;
  EXPECT_EQ(session.compare(), nullptr);
  EXPECT_NE(session.trace(), nullptr);  // the trace shown stays
}

// The trace-compare scenario in the app: the shipped trace on screen with the
// model of its machine laid over it, the numbers those of `shardlab-cli run
// trace-compare` (the lab's grader reads the same scenario).
ScenarioSettings TraceCompareSettings(const std::string& plan_settings) {
  ScenarioSettings s = DefaultSettings("trace-compare");
  const ScenarioSpec& spec = *SpecOf("trace-compare");
  SetParamText(&s, spec, *spec.FindParam("model_issue"), "graph");
  SetParamText(&s, spec, *spec.FindParam("plan_settings"), plan_settings);
  return s;
}

TEST(CompareOverlay, TheTraceCompareScenarioShowsTheTraceWithItsModelOverIt) {
  TempDir dir;
  const ProgramResult cli = RunProgram(kCli, {"run", "trace-compare", "--model-issue", "graph"}, dir.path());
  ASSERT_EQ(cli.exit_code, 0) << Describe(cli);
  // "measured_us = 631.808 us": six significant digits.
  const auto value = [&](const std::string& name) {
    const std::size_t at = cli.out.find("\n" + name + " = ");
    EXPECT_NE(at, std::string::npos) << name << " in " << cli.out.substr(0, 2000);
    return at == std::string::npos ? -1.0 : std::stod(cli.out.substr(at + name.size() + 4));
  };

  Session session;
  ASSERT_TRUE(session.Start(TraceCompareSettings("collective size=64M"))) << session.error();
  EXPECT_EQ(session.state(), SessionState::kDone);
  ASSERT_NE(session.trace(), nullptr);
  ASSERT_NE(session.compare(), nullptr);
  EXPECT_EQ(session.store().event_count(), session.trace()->events.size());
  const Comparison& c = session.compare()->comparison();
  EXPECT_NEAR(c.run.a_ns / 1e3, value("measured_us"), 1e-5 * c.run.a_ns / 1e3);
  EXPECT_NEAR(c.run.b_ns / 1e3, value("model_us"), 1e-5 * c.run.b_ns / 1e3);
  EXPECT_EQ(static_cast<double>(c.run.ops), value("ops"));
  EXPECT_NE(session.compare()->added_source().find("the model of 1 NVIDIA H200"), std::string::npos)
      << session.compare()->added_source();
}

TEST(CompareOverlay, TheTraceCompareScenarioRefusesSettingsOfAnotherPlan) {
  Session session;
  EXPECT_FALSE(session.Start(TraceCompareSettings("pipeline stages=4")));
  EXPECT_NE(session.error().find("not runs of one plan"), std::string::npos) << session.error();
  EXPECT_EQ(session.trace(), nullptr);
  EXPECT_EQ(session.compare(), nullptr);
  EXPECT_EQ(session.Check(TraceCompareSettings("pipeline nonsense=3")).find("plan_settings:"), 0u)
      << session.Check(TraceCompareSettings("pipeline nonsense=3"));
}

}  // namespace
}  // namespace shardlab::gui
