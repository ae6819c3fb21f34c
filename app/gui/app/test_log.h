// The test log (--test-log FILE): what the app did with a person's input,
// one line each, and where the widgets stand that a test clicks. With it a
// test drives the real window with X input events (xdotool) and judges by
// what the app says, knowing nothing of its insides
// (tests/gui/real_input_test.cpp). Without --test-log every call here does
// nothing.
//
//   ready W H                        the window is up, W x H pixels
//   item NAME X0 Y0 X1 Y1 STATE      a marked widget appeared, moved or changed
//                                    state (window pixels; STATE: hidden =
//                                    scrolled or clipped out of its panel,
//                                    clipped = cut by its panel's edge,
//                                    shown, hovered by the pointer, active =
//                                    held down), so a test presses only once
//                                    the app sees the pointer there
//   gone NAME                        a marked widget is no longer drawn
//   scenario NAME                    the scenario panel's scenario changed
//   edit SCENARIO PARAM=VALUE ...    the panel's settings changed (all its parameters)
//   run-start SCENARIO PARAM=VALUE ...   a run began, with its parameters
//   run-end SCENARIO done|failed EVENTS  it was recorded (EVENTS: the timeline's)
//   clock STEPS PLAYING              the replay shows another step, or (0/1)
//                                    began or stopped playing
//   select-op N | select-none        the op the details follow
//   lab-open ID / lab-step N         a lab opened, its step shown (0 = first)
//   lab-grade QUESTION STATUS        an answer was checked: correct, wrong, ...
//   sync N                           F11 was seen: every line before it is
//                                    from this frame or an earlier one
//   screenshot PATH                  F12 saved the window there
//
// Marks are names a view gives its last drawn widget (MarkItem("run")):
// "scenario-combo", "scenario-choice allreduce" ("... cli-only" for one the
// app lists but does not run), "field timing_only",
// "run", "play", "step", "gantt-timeline", "gantt-cursor", "menu Labs", ...
// Each item line ends in the widget's state: hidden (not drawn in its
// window), disabled (drawn greyed: a click does nothing), clipped (its centre
// cut by its panel's edge), shown, hovered or active.
#pragma once

#include <string>

namespace shardlab::gui::test_log {

/// Opens FILE for the log (truncating it). Returns false when it cannot.
bool Open(const std::string& path);
bool IsOpen();
/// Appends one line (and flushes, so a test reading the file sees it).
void Line(const std::string& text);

/// Names the last ImGui item for the log (its rectangle this frame).
void MarkItem(const std::string& name);
/// The same for a rectangle a view drew itself (screen pixels) in the
/// current window (hidden, clipped, shown or hovered).
void MarkRect(const std::string& name, float x0, float y0, float x1, float y1);
/// After each frame: an `item` line for each mark new or moved, `gone` for
/// each one not drawn this frame.
void EndFrame();

}  // namespace shardlab::gui::test_log
