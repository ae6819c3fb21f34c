// App: the desktop app's window and frame loop.
//
//   Run ─► open GLFW window, GL 3.3 core context, ImGui (fonts, theme)
//       ─► start the launch scenario (ring all-reduce on a DGX A100 unless
//          flags say otherwise), so a newcomer sees a run at once
//       ─► each frame: Poll the session, sync the replay clock with the
//          recorded steps, keys, menu, one fixed window per PanelLayout
//          region, popups, render, optional screenshot, swap
//
// Scripted mode (--frames N): frames start counting once the run is
// recorded, the clock advances a fixed 1/60 s per frame (so screenshots do
// not depend on machine speed), and after the N-th frame the app writes
// --screenshot and --trace and returns. Interactive mode never exits on an
// error: it says what happened and stays usable.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "app/gui/app/app_flags.h"
#include "app/gui/app/export_dialog.h"
#include "app/gui/app/fonts.h"
#include "app/gui/app/glyph_check.h"
#include "app/gui/app/menu_bar.h"
#include "app/gui/app/open_trace_dialog.h"
#include "app/gui/model/replay_clock.h"
#include "app/gui/model/session.h"
#include "app/gui/views/lab_panel.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/scenario_panels.h"
#include "app/gui/views/views.h"

struct GLFWwindow;

namespace shardlab::gui {

class App {
 public:
  explicit App(AppFlags flags);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  /// Runs until the window closes or the scripted frames are done. Returns
  /// the exit code: 0, or 1 when the window cannot open or, in scripted
  /// mode, the run or an export failed (the reason went to stderr).
  int Run();

 private:
  bool Init(std::string* error);
  void Shutdown();
  /// One frame; `dt_s` is the wall time the replay advances by.
  void Frame(double dt_s);
  void DrawPanels(ViewContext& ctx);
  void HandleMenu(MenuAction action);
  void HandleShortcuts();
  /// Starts a run of `settings` and resets the replay for it.
  void StartRun(const ScenarioSettings& settings);
  /// Shows the trace at `path`; false (and the reason in *message) when it
  /// cannot be read, leaving the current run on screen.
  bool OpenTrace(const std::string& path, std::string* message);
  /// Resets the replay for whatever the session now shows.
  void ResetReplay();
  /// Copies the store's step ends into the clock; on the first frame a
  /// run is done, applies auto speed and the launch flags.
  void SyncClock();
  /// --event-flood: starts the flood once the launch run is recorded and
  /// ends it after its seconds, printing the report; true when the app
  /// should save its last frame and exit.
  bool StepEventFlood(double now_s);
  void SetStatus(const std::string& text, bool error);
  void ApplyTheme(ThemeKind kind);
  void SetFontScale(float scale);
  /// View > Language: switches every panel at the next frame; Chinese
  /// without a CJK font stays English and says so.
  void SetAppLanguage(Language language);
  /// The characters the atlas bakes from the CJK font for the current language.
  CjkRequest FontRequest() const;
  /// Writes the pending screenshot from the frame just rendered.
  void CaptureIfPending();
  std::string DefaultExportName(ExportKind kind) const;

  // The lab panel (lab_app.cpp).
  /// Makes the panel's model from the flags; --lab opens that lab.
  void InitLabPanel();
  void ShowLabChooser();
  /// Pixels the lab panel takes at the window's right edge; 0 when hidden.
  float LabPanelWidth() const;
  void DrawLabColumn(ViewContext& ctx, float width);
  /// Starts the run the lab panel asked for (a step or a variant) in the
  /// scenario panel and the session; false when it asked for none.
  bool StartLabRunIfAsked();
  /// Puts back the scenario fields the lab step locks, saying so.
  void EnforceLabLocks();
  /// --select-op / --select-link once the first run is recorded; false (and a
  /// message) when the run has no such op or link.
  bool ApplyStartupSelection(std::string* message);
  // --test-log (test_log.h, test_log_app.cpp): what changed this frame, said once.
  void TestLogFrame();
  static std::string TestLogParams(const ScenarioSettings& settings);

  AppFlags flags_;
  GLFWwindow* window_ = nullptr;
  bool imgui_ready_ = false;
  std::unique_ptr<LinkRenderer> link_renderer_;

  Session session_;
  ReplayClock clock_;
  ThemeKind theme_ = ThemeKind::kDark;
  float font_scale_ = 1.0f;
  bool font_reload_pending_ = false;
  bool chinese_font_ = false;         // a CJK font was found at start-up
  GlyphCount glyph_count_;            // --glyph-check: the last frame's
  int glyph_fallbacks_seen_ = 0;      // --glyph-check: fell back in any counted frame

  ScenarioPanelState scenario_state_;
  TransportBarState transport_state_;
  TopologyViewState topology_state_;
  GanttViewState gantt_state_;
  ScenarioPanelStates panel_states_;  // the scenario views' (scenario_panels.h)
  RunInsight insight_;                // critical path, selection, pattern: shared by the views
  PlannerPanelState planner_state_;
  bool planner_open_ = false;
  ExportDialog export_dialog_;
  OpenTraceDialog open_trace_dialog_;
  OpenTraceDialog compare_trace_dialog_{TraceDialogPurpose::kCompare};
  LabPanelState lab_panel_;
  bool lab_panel_visible_ = false;

  // Bookkeeping of the current run.
  std::size_t synced_events_ = 0;     // store size the clock was last synced to
  TimeNs synced_end_ns_ = -1;         // replay end it was synced to (a compared run may end later)
  bool run_finished_ = false;         // SyncClock saw it done
  double auto_speed_ = 0;             // the speed set automatically (a user change wins)
  int runs_started_ = 0;              // the first run gets the launch flags

  std::string pending_screenshot_;    // written after the next rendered frame
  int screenshot_delay_frames_ = 0;   // lets a closing popup leave the picture
  std::string status_;
  bool status_error_ = false;
  double status_until_s_ = 0;

  int exit_code_ = 0;
  FloodMeter flood_meter_;            // --event-flood: frame times and memory
  double flood_started_s_ = -1;       // when the flood began; -1 before
  double baseline_started_s_ = -1;    // when the frames without a flood began
  double last_poll_ms_ = 0;           // Session::Poll's share of the last frame
  bool quit_ = false;
  struct TestLogSeen {                // --test-log: what the log last said
    std::string scenario;
    ScenarioSettings edit;
    bool edit_logged = false;
    int steps = -1, playing = -1;
    long long op = -2;
    std::string lab;
    int lab_step = -1;
    std::map<std::string, int> grades;  // question id -> LabAnswerStatus
    int shots = 0;
    int syncs = 0;
  } test_seen_;
};

}  // namespace shardlab::gui
