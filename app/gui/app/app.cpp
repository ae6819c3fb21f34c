#include "app/gui/app/app.h"

#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <fstream>
#include <iostream>
#include <utility>
#include <vector>

#include "app/gui/app/fonts.h"
#include "app/gui/app/help_popups.h"
#include "app/gui/app/imgui_style.h"
#include "app/gui/app/screenshot.h"
#include "app/gui/app/shortcuts.h"
#include "app/gui/app/test_log.h"
#include "app/gui/app/trace_export.h"
#include "app/gui/gl/link_renderer.h"
#include "app/gui/i18n/glyph_set.h"
#include "app/gui/i18n/language.h"
#include "app/gui/model/panel_layout.h"
#include "app/gui/views/metrics_row.h"
#include "app/gui/views/scenario_panels.h"
#include "engine/algorithms/collective.h"
#include "engine/topology/presets.h"
#include "app/gui/model/this_machine_choice.h"

namespace shardlab::gui {
namespace {

/// Scripted frames advance the replay by this much wall time each, so a
/// screenshot shows the same moment on a fast and a slow machine.
constexpr double kScriptedFrameS = 1.0 / 60.0;
/// A scripted run that is still recording after this long is given up.
constexpr double kScriptedRecordTimeoutS = 600.0;
/// --event-flood first draws this long without a flood (the baseline).
constexpr double kFloodBaselineS = 2.0;
constexpr double kStatusSeconds = 8.0;
constexpr double kErrorStatusSeconds = 20.0;
constexpr float kFontScaleStep = 0.25f;

constexpr ImGuiWindowFlags kPanelFlags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                         ImGuiWindowFlags_NoCollapse |
                                         ImGuiWindowFlags_NoSavedSettings |
                                         ImGuiWindowFlags_NoBringToFrontOnFocus;

std::string g_glfw_error;  // the last GLFW error, for Init's message

void OnGlfwError(int code, const char* description) {
  g_glfw_error = description != nullptr ? description : "GLFW error " + std::to_string(code);
}

bool IsPreset(const std::string& name) {
  for (const PresetInfo& p : ListTopologyPresets()) {
    if (p.name == name) return true;
  }
  return false;
}

/// Letters, digits, '.', '-' and '_' survive in a default file name.
std::string FileSafe(std::string text) {
  for (char& c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_';
    if (!keep) c = '_';
  }
  return text;
}

/// A window's title in the current language with a fixed ImGui id after
/// "###", so switching the language keeps the window (and its scroll).
std::string Title(const char* text, const char* id) { return std::string(text) + "###" + id; }

bool BeginPanel(const char* name, const Rect& rect, ImGuiWindowFlags extra = 0) {
  ImGui::SetNextWindowPos(ImVec2(rect.min.x, rect.min.y));
  ImGui::SetNextWindowSize(ImVec2(std::max(rect.width(), 1.0f), std::max(rect.height(), 1.0f)));
  return ImGui::Begin(name, nullptr, kPanelFlags | extra);
}

}  // namespace

App::App(AppFlags flags) : flags_(std::move(flags)) {
  theme_ = flags_.theme;
  font_scale_ = flags_.font_scale;
  planner_open_ = flags_.planner;
  insight_.show_critical_path = flags_.critical_path;
  insight_.show_pattern = flags_.show_pattern;
  scenario_state_.edit = flags_.settings;
  const std::string order = flags_.settings.Param("ring_order");
  if (IsCollectiveScenario(flags_.settings) && order != "auto" && order != "rank") {
    scenario_state_.custom_ring_order = order;
  }
  if (!IsPreset(flags_.settings.topology) && !IsThisMachine(flags_.settings.topology)) {
    scenario_state_.topology_is_file = true;
    scenario_state_.topology_file = flags_.settings.topology;
  }
  InitLabPanel();
}

App::~App() { Shutdown(); }

bool App::Init(std::string* error) {
  glfwSetErrorCallback(OnGlfwError);
  if (glfwInit() == GLFW_FALSE) {
    *error = "cannot open a window: " + g_glfw_error +
             " (no display? run it under xvfb-run, or use shardlab-cli for headless runs)";
    return false;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  // A scripted screenshot must have exactly the size asked for.
  glfwWindowHint(GLFW_RESIZABLE, flags_.scripted() ? GLFW_FALSE : GLFW_TRUE);
  window_ = glfwCreateWindow(flags_.width_px, flags_.height_px, "ShardLab", nullptr, nullptr);
  if (window_ == nullptr) {
    *error = "cannot create a " + std::to_string(flags_.width_px) + "x" +
             std::to_string(flags_.height_px) + " window with OpenGL 3.3 core: " + g_glfw_error;
    return false;
  }
  glfwMakeContextCurrent(window_);
  // Scripted runs render as fast as they can; people get vsync.
  glfwSwapInterval(flags_.scripted() ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // panels are placed every frame; nothing to remember
  ApplyTheme(theme_);
  // Chinese needs a CJK font: without one, one line and English.
  chinese_font_ = !(flags_.cjk_font.empty() ? FindCjkFont() : flags_.cjk_font).empty();
  if (!flags_.cjk_font.empty() && !std::ifstream(flags_.cjk_font, std::ios::binary).good()) chinese_font_ = false;
  if (flags_.language == Language::kChinese && !chinese_font_) {
    std::cerr << kAppProgram << ": warning: no CJK font found for Chinese ("
              << (flags_.cjk_font.empty() ? "install fonts-wqy-microhei or fonts-noto-cjk"
                                          : "cannot read " + flags_.cjk_font)
              << "); showing English\n";
  } else {
    SetLanguage(flags_.language);
  }
  if (lab_panel_.model && lab_panel_.model->SetLanguage(LanguageCode(CurrentLanguage()))) {
    lab_panel_.model->ReloadText();  // the lab opened above, in the app's language
  }
  if (const std::string note = BuildFontAtlas(font_scale_, FontRequest()); !note.empty()) {
    std::cerr << kAppProgram << ": warning: " << note << "\n";
    SetStatus(note, false);
  }
  InstallShortcutRecorder(window_);  // before ImGui's callbacks, which chain to it
  if (!ImGui_ImplGlfw_InitForOpenGL(window_, true) || !ImGui_ImplOpenGL3_Init("#version 330 core")) {
    *error = "cannot initialise Dear ImGui's GLFW/OpenGL 3 backends";
    return false;
  }
  imgui_ready_ = true;

  link_renderer_ = std::make_unique<LinkRenderer>();
  if (std::string why; !link_renderer_->Init(&why)) {
    // The topology view falls back to plain lines: worth a note, not a stop.
    std::cerr << kAppProgram << ": warning: link shaders unavailable: " << why << "\n";
    SetStatus(Tr("Link shaders unavailable; drawing plain lines"), false);
  }
  return true;
}

void App::Shutdown() {
  session_.Cancel();
  if (imgui_ready_) {
    if (link_renderer_) link_renderer_->Shutdown();
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    imgui_ready_ = false;
  }
  link_renderer_.reset();
  if (ImGui::GetCurrentContext() != nullptr) ImGui::DestroyContext();
  if (window_ != nullptr) {
    glfwDestroyWindow(window_);
    window_ = nullptr;
  }
  glfwTerminate();
}

int App::Run() {
  session_.SetWorkerFault(flags_.worker_fault);
  session_.SetWorkerMpiOptions(flags_.mpi_timeout, flags_.mpi_fault);
  // The traces are read before a window opens: a broken file is one line
  // about the file, whether or not a display answers.
  bool trace_opened = false;
  std::string trace_error;
  if (!flags_.open_trace_path.empty()) {
    std::string message;
    if (!OpenTrace(flags_.open_trace_path, &message)) {
      trace_error = message;
    } else {
      trace_opened = true;
      if (!flags_.compare_trace_path.empty() && !session_.OpenCompareTrace(flags_.compare_trace_path, &message)) {
        trace_error = message;
      }
    }
    if (!trace_error.empty()) {
      std::cerr << kAppProgram << ": error: " << trace_error << "\n";
      if (flags_.scripted()) return 1;
    }
  }
  std::string error;
  if (!Init(&error)) {
    std::cerr << kAppProgram << ": error: " << error << "\n";
    Shutdown();
    return 1;
  }
  if (!flags_.test_log_path.empty()) {
    if (!test_log::Open(flags_.test_log_path)) {
      std::cerr << kAppProgram << ": error: --test-log: cannot write " << flags_.test_log_path << "\n";
      Shutdown();
      return 1;
    }
    int w = 0, h = 0;
    glfwGetWindowSize(window_, &w, &h);
    test_log::Line("ready " + std::to_string(w) + " " + std::to_string(h));
  }
  if (!flags_.open_trace_path.empty()) {
    // Said again now that the window has its language (the file was read before).
    if (!trace_error.empty()) SetStatus(trace_error, true);
    else if (trace_opened) SetStatus(Format(Tr("Opened trace %s"), flags_.open_trace_path.c_str()), false);
    if (!trace_opened) StartRun(flags_.settings);  // interactive: the usual launch run instead
  } else if (!StartLabRunIfAsked()) {
    StartRun(flags_.settings);  // --lab: the step's run first
  }

  int counted_frames = 0;
  double last_s = glfwGetTime();
  const double started_s = last_s;
  while (!quit_ && glfwWindowShouldClose(window_) == GLFW_FALSE) {
    glfwPollEvents();
    const double now_s = glfwGetTime();
    double dt_s = now_s - last_s;
    last_s = now_s;
    if (flags_.event_flood_s > 0) {
      if (StepEventFlood(now_s)) {
        if (!flags_.screenshot_path.empty()) {
          pending_screenshot_ = flags_.screenshot_path;
          screenshot_delay_frames_ = 0;
          Frame(dt_s);
        }
        break;
      }
      const double frame_start_s = glfwGetTime();
      Frame(dt_s);
      const double frame_end_s = glfwGetTime();
      if (session_.flooding()) {
        flood_meter_.AddFrame((frame_end_s - frame_start_s) * 1000.0, last_poll_ms_);
        flood_meter_.MaybeSample(frame_end_s);
      } else if (baseline_started_s_ >= 0) {
        flood_meter_.AddBaselineFrame((frame_end_s - frame_start_s) * 1000.0);
      }
      continue;
    }
    if (flags_.scripted()) {
      // Count frames (and move the replay) only once the run is recorded.
      const bool recorded = session_.state() != SessionState::kRunning;
      if (!recorded && now_s - started_s > kScriptedRecordTimeoutS) {
        std::cerr << kAppProgram << ": error: the run was still recording after "
                  << kScriptedRecordTimeoutS << " s; giving up\n";
        exit_code_ = 1;
        break;
      }
      dt_s = recorded ? kScriptedFrameS : 0.0;
      if (recorded) ++counted_frames;
      if (counted_frames == flags_.frames && !flags_.screenshot_path.empty()) {
        pending_screenshot_ = flags_.screenshot_path;
        screenshot_delay_frames_ = 0;
      }
    }
    Frame(dt_s);
    if (flags_.scripted() && counted_frames >= flags_.frames) break;
  }
  if (flags_.glyph_check) {
    // The last frame's characters; a box drawn in any earlier frame fails it too.
    std::cout << GlyphCheckLine(glyph_count_) << "\n" << std::flush;
    if (glyph_fallbacks_seen_ > 0) {
      std::cerr << kAppProgram << ": error: " << glyph_fallbacks_seen_
                << " characters were drawn as the missing-glyph box (all frames together)\n";
      if (exit_code_ == 0) exit_code_ = 1;
    }
  }
  Shutdown();
  return exit_code_;
}

bool App::StepEventFlood(double now_s) {
  if (flood_started_s_ < 0) {
    if (session_.state() == SessionState::kRunning) {
      if (now_s < kScriptedRecordTimeoutS) return false;  // GLFW's clock starts at Init
      std::cerr << kAppProgram << ": error: the launch run was still recording after "
                << kScriptedRecordTimeoutS << " s; giving up\n";
      exit_code_ = 1;
      return true;
    }
    // First the same frames without a flood, for comparison in one run.
    if (session_.state() == SessionState::kDone && baseline_started_s_ < 0) {
      baseline_started_s_ = now_s;
      return false;
    }
    if (session_.state() == SessionState::kDone && now_s - baseline_started_s_ < kFloodBaselineS)
      return false;
    std::string why = session_.error();
    const std::size_t run_events = session_.store().event_count();  // the flood clears the store
    if (session_.state() != SessionState::kDone || !session_.StartEventFlood(&why)) {
      std::cerr << kAppProgram << ": error: --event-flood: " << why << "\n";
      exit_code_ = 1;
      return true;
    }
    flood_started_s_ = now_s;
    std::cout << "event flood: " << flags_.event_flood_s << " s, re-emitting the "
              << run_events << " events of " << session_.Title() << "\n"
              << std::flush;
    return false;
  }
  if (now_s - flood_started_s_ < flags_.event_flood_s) return false;
  session_.StopEventFlood();
  // The store window and its row vectors may legitimately double once more.
  const FloodCounters counters = session_.flood_counters();
  const FloodReport report =
      FormatFloodReport(flags_.event_flood_s, counters, flood_meter_, 2 * counters.window_bytes);
  std::cout << report.text << std::flush;
  exit_code_ = report.ok ? 0 : 1;
  return true;
}

void App::Frame(double dt_s) {
  if (font_reload_pending_) {
    // Between frames: the old atlas texture is not in use.
    if (const std::string note = ReloadFonts(font_scale_, FontRequest()); !note.empty()) SetStatus(note, false);
    font_reload_pending_ = false;
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  if (!pending_screenshot_.empty() && screenshot_delay_frames_ == 0) {
    // The frame being saved shows no hover tooltip, wherever the pointer is
    // (under Xvfb it rests in the middle of the window).
    ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  }
  ImGui::NewFrame();

  StartLabRunIfAsked();
  const double poll_start_s = glfwGetTime();
  session_.Poll();
  last_poll_ms_ = (glfwGetTime() - poll_start_s) * 1000.0;
  insight_.Refresh(session_);
  // Escape clears the selection (a popup or a field takes it first).
  if (!insight_.selection().empty() && !ImGui::GetIO().WantTextInput &&
      !ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId) &&
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    insight_.Clear();
  }
  SyncClock();
  HandleShortcuts();
  clock_.Advance(dt_s);

  const Theme& theme = GetTheme(theme_);
  LinkRenderer* links = link_renderer_ && link_renderer_->ready() ? link_renderer_.get() : nullptr;
  ViewContext ctx{session_, clock_, theme, links, glfwGetTime(), &panel_states_, &insight_};

  MenuBarInfo menu;
  menu.theme = theme_;
  menu.font_scale = font_scale_;
  menu.planner_open = planner_open_;
  menu.can_export_trace = session_.plan() != nullptr && session_.store().event_count() > 0;
  menu.can_compare = session_.plan() != nullptr && session_.state() == SessionState::kDone;
  menu.lab_panel_open = lab_panel_visible_;
  menu.language = CurrentLanguage();
  menu.chinese_font = chinese_font_;
  if (glfwGetTime() < status_until_s_) {
    menu.status = status_;
    menu.status_color = status_error_ ? theme.error : theme.text_dim;
  } else if (session_.flooding() || session_.dropped_events() > 0) {
    // Lost events are never silent: the views are missing them.
    const FloodCounters flood = session_.flood_counters();
    menu.status = session_.flooding()
                      ? Format(Tr("event flood: %s produced, %s drawn, %s dropped (queue full)"),
                               Grouped(static_cast<std::int64_t>(flood.attempted)).c_str(),
                               Grouped(static_cast<std::int64_t>(flood.ingested)).c_str(),
                               Grouped(static_cast<std::int64_t>(flood.dropped)).c_str())
                      : Format(Tr("%s events dropped (the event queue was full)"),
                               Grouped(static_cast<std::int64_t>(session_.dropped_events())).c_str());
    menu.status_color = session_.dropped_events() > 0 ? theme.error : theme.text_dim;
  }
  HandleMenu(DrawMenuBar(menu));
  DrawPanels(ctx);
  if (planner_open_) {
    // A floating window over the panels: planning is a side trip.
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x * 0.18f, io.DisplaySize.y * 0.08f), ImGuiCond_Once);
    ImGui::SetNextWindowSize(ImVec2(io.DisplaySize.x * 0.64f, io.DisplaySize.y * 0.8f), ImGuiCond_Once);
    if (ImGui::Begin(Title(Tr("3D layout planner (analytic, as shardlab-cli plan)"), "planner").c_str(), &planner_open_)) {
      ScenarioSettings settings = scenario_state_.edit;
      if (DrawPlannerPanel(theme, planner_state_, &settings)) {
        scenario_state_.edit = settings;
        planner_open_ = false;
        if (session_.Check(settings).empty()) StartRun(settings);
      }
    }
    ImGui::End();
  }
  DrawHelpPopups();
  if (open_trace_dialog_.Draw(theme)) {
    std::string message;
    if (OpenTrace(open_trace_dialog_.path(), &message)) {
      open_trace_dialog_.Opened(open_trace_dialog_.path());
    } else {
      open_trace_dialog_.Failed(message);
    }
  }
  if (compare_trace_dialog_.Draw(theme)) {
    std::string message;
    if (session_.OpenCompareTrace(compare_trace_dialog_.path(), &message)) {
      compare_trace_dialog_.Opened(compare_trace_dialog_.path());
      SetStatus(Format(Tr("Comparing with %s"), compare_trace_dialog_.path().c_str()), false);
    } else {
      compare_trace_dialog_.Failed(message);
    }
  }
  if (export_dialog_.Draw(theme)) {
    if (export_dialog_.kind() == ExportKind::kScreenshot) {
      // Next frame: the dialog is gone from the picture by then.
      pending_screenshot_ = export_dialog_.path();
      screenshot_delay_frames_ = 1;
    } else if (const std::string failed = WriteSessionTrace(session_, export_dialog_.path());
               !failed.empty()) {
      SetStatus(failed, true);
    } else {
      SetStatus(Format(Tr("Saved trace %s (open it in ui.perfetto.dev)"), export_dialog_.path().c_str()), false);
    }
  }
  TestLogFrame();
  ImGui::Render();
  if (flags_.glyph_check) {
    glyph_count_ = CountGlyphs(*ImGui::GetDrawData());
    glyph_fallbacks_seen_ += glyph_count_.fell_back;
  }

  int fb_w = 0;
  int fb_h = 0;
  glfwGetFramebufferSize(window_, &fb_w, &fb_h);
  glViewport(0, 0, fb_w, fb_h);
  const ImVec4 bg = ImGui::ColorConvertU32ToFloat4(theme.background);
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  CaptureIfPending();
  glfwSwapBuffers(window_);
}

void App::DrawPanels(ViewContext& ctx) {
  const ImGuiIO& io = ImGui::GetIO();
  const ImGuiStyle& style = ImGui::GetStyle();
  // The scenario's own views (its spec names them: scenario_panels.h) set
  // the metrics column's share and the panel beside the timeline.
  const ScenarioPanel* metrics = PanelOf(session_.run_scenario(), PanelSlot::kMetrics);
  const ScenarioPanel* beside = PanelOf(session_.run_scenario(), PanelSlot::kBeside);
  const float metrics_share = metrics != nullptr ? metrics->share : kCollectiveMetricsShare;
  const float lab_w = LabPanelWidth();  // the lab panel stands at the right, beside the views
  PanelLayout layout = ComputePanelLayout(io.DisplaySize.x - lab_w, io.DisplaySize.y, MenuBarHeightPx(ImGui::GetFontSize()),
                                          metrics_share, beside != nullptr ? beside->share : 0.0f);
  // Big classroom text needs a taller transport bar than the layout's;
  // at normal size it fits and the layout stays exactly as computed.
  const float transport_need = ImGui::GetFrameHeight() + 2.0f * style.WindowPadding.y;
  if (layout.transport.height() < transport_need) {
    layout.transport.max.y = std::min(layout.transport.min.y + transport_need, layout.topology.max.y - 1);
    layout.topology.min.y = layout.transport.max.y;
  }

  EnforceLabLocks();
  if (BeginPanel(Title(Tr("Scenario"), "scenario").c_str(), layout.scenario)) {
    if (DrawScenarioPanel(ctx, scenario_state_)) StartRun(scenario_state_.edit);
    if (std::exchange(scenario_state_.restart_worker, false)) StartRun(scenario_state_.last_run);
  }
  ImGui::End();
  if (BeginPanel("###transport", layout.transport,
                 ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar)) {
    DrawTransportBar(ctx, transport_state_);
  }
  ImGui::End();
  if (BeginPanel(Title(Tr("Machine: GPUs, switches and links"), "topology").c_str(), layout.topology,
                 ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    DrawTopologyView(ctx, topology_state_);
  }
  ImGui::End();
  if (!insight_.selection().empty()) {
    // The details of the selection float over the machine's right side.
    Rect details = layout.topology;
    const float w = std::clamp(details.width() * 0.42f, std::min(details.width(), 22.0f * ImGui::GetFontSize()),
                               40.0f * ImGui::GetFontSize());
    details.min.x = details.max.x - w;
    details.min.y += ImGui::GetTextLineHeightWithSpacing() * 3.0f;
    details.max.y -= ImGui::GetTextLineHeightWithSpacing() * 2.0f;
    const std::string title = Title(insight_.selection().op != kNoOp ? Tr("Details: the selected op")
                                                                     : Tr("Details: the selected link"),
                                    "details");
    // Not a BeginPanel: ImGui puts a window that never comes to the front
    // behind the others, and this one floats over the machine.
    ImGui::SetNextWindowPos(ImVec2(details.min.x, details.min.y));
    ImGui::SetNextWindowSize(ImVec2(std::max(details.width(), 1.0f), std::max(details.height(), 1.0f)));
    ImGui::SetNextWindowBgAlpha(1.0f);
    if (ImGui::Begin(title.c_str(), nullptr, kPanelFlags & ~ImGuiWindowFlags_NoBringToFrontOnFocus)) DrawDetailsPanel(ctx);
    ImGui::End();
  }
  if (BeginPanel(Title(Tr("Metrics"), "metrics").c_str(), layout.metrics)) DrawMetricsPanel(ctx);
  ImGui::End();
  if (layout.buffers.height() >= 1.0f) {
    if (BeginPanel(Title(Tr("Buffers: whose parts each chunk holds"), "buffers").c_str(), layout.buffers)) {
      DrawBufferView(ctx);
    }
    ImGui::End();
  }
  if (layout.weights.width() >= 1.0f && beside != nullptr) {
    if (BeginPanel(Title(beside->title(), beside->name).c_str(), layout.weights,
                   ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
      beside->draw(ctx, nullptr);
    }
    ImGui::End();
  }
  if (BeginPanel(Title(Tr("Timeline: one row per GPU and lane"), "gantt").c_str(), layout.gantt,
                 ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    DrawGanttView(ctx, gantt_state_);
  }
  ImGui::End();
  if (lab_w > 0) DrawLabColumn(ctx, lab_w);
}

void App::HandleMenu(MenuAction action) {
  switch (action) {
    case MenuAction::kNone: break;
    case MenuAction::kOpenTrace: open_trace_dialog_.Open(); break;
    case MenuAction::kOpenCompareTrace: compare_trace_dialog_.Open(); break;
    case MenuAction::kExportScreenshot:
      export_dialog_.Open(ExportKind::kScreenshot, DefaultExportName(ExportKind::kScreenshot));
      break;
    case MenuAction::kExportTrace:
      export_dialog_.Open(ExportKind::kTrace, DefaultExportName(ExportKind::kTrace));
      break;
    case MenuAction::kQuit: quit_ = true; break;
    case MenuAction::kThemeDark: ApplyTheme(ThemeKind::kDark); break;
    case MenuAction::kThemeLight: ApplyTheme(ThemeKind::kLight); break;
    case MenuAction::kFontBigger: SetFontScale(font_scale_ + kFontScaleStep); break;
    case MenuAction::kFontSmaller: SetFontScale(font_scale_ - kFontScaleStep); break;
    case MenuAction::kFontReset: SetFontScale(1.0f); break;
    case MenuAction::kShowLabs: ShowLabChooser(); break;
    case MenuAction::kHideLabPanel: lab_panel_visible_ = false; break;
    case MenuAction::kShowShortcuts: OpenHelpPopup(HelpPopup::kShortcuts); break;
    case MenuAction::kShowAbout: OpenHelpPopup(HelpPopup::kAbout); break;
    case MenuAction::kTogglePlanner: planner_open_ = !planner_open_; break;
    case MenuAction::kLanguageEnglish: SetAppLanguage(Language::kEnglish); break;
    case MenuAction::kLanguageChinese: SetAppLanguage(Language::kChinese); break;
  }
}

void App::HandleShortcuts() {
  for (const Shortcut shortcut : TakeShortcuts()) {
    switch (shortcut) {
      case Shortcut::kPlayPause: clock_.playing() ? clock_.Pause() : clock_.Play(); break;
      case Shortcut::kStep: clock_.Step(); break;
      case Shortcut::kStepBack: clock_.StepBack(); break;
      case Shortcut::kReset: clock_.Reset(); break;
      case Shortcut::kFontBigger: SetFontScale(font_scale_ + kFontScaleStep); break;
      case Shortcut::kFontSmaller: SetFontScale(font_scale_ - kFontScaleStep); break;
      case Shortcut::kFontReset: SetFontScale(1.0f); break;
      case Shortcut::kQuit: quit_ = true; break;
    }
  }
}

void App::ResetReplay() {
  clock_ = ReplayClock{};
  synced_events_ = 0;
  synced_end_ns_ = -1;
  run_finished_ = false;
  ++runs_started_;
}

bool App::OpenTrace(const std::string& path, std::string* message) {
  if (!session_.OpenTrace(path, message)) return false;
  ResetReplay();
  auto_speed_ = AutoReplaySpeed(session_.expected_ns(), session_.num_steps());
  clock_.set_speed(auto_speed_);
  SetStatus(Format(Tr("Opened trace %s"), path.c_str()), false);
  return true;
}

void App::StartRun(const ScenarioSettings& settings) {
  scenario_state_.last_run = settings;
  ResetReplay();
  if (test_log::IsOpen()) test_log::Line("run-start " + TestLogParams(settings));
  session_.Start(settings);  // a rejected run shows its error in the panels
  session_.SetWorkerFault("");  // --worker-fault fails the launch run only: Restart then works
  session_.SetWorkerMpiOptions(flags_.mpi_timeout, "");  // so does --mpi-fault
  if (session_.plan() != nullptr) {
    // Until the run is recorded, the formula's time stands in for its end,
    // so Play during recording already moves at a readable pace.
    auto_speed_ = AutoReplaySpeed(session_.expected_ns(), session_.num_steps());
    clock_.set_speed(auto_speed_);
  }
}

void App::SyncClock() {
  const TimelineStore& store = session_.store();
  if (store.event_count() != synced_events_ || session_.replay_end_ns() != synced_end_ns_) {
    synced_events_ = store.event_count();
    synced_end_ns_ = session_.replay_end_ns();
    std::vector<TimeNs> step_end_ns;
    step_end_ns.reserve(static_cast<std::size_t>(store.steps_seen()));
    TimeNs previous = 0;
    for (int k = 0; k < store.steps_seen(); ++k) {
      const TimeNs end = store.StepEndNs(k);
      previous = end >= 0 ? end : previous;  // a step without events ends with the one before
      step_end_ns.push_back(previous);
    }
    clock_.SetSteps(std::move(step_end_ns), session_.replay_end_ns());
  }
  if (run_finished_ || runs_started_ == 0 || session_.state() == SessionState::kRunning) return;
  run_finished_ = true;
  if (test_log::IsOpen()) {
    test_log::Line("run-end " + session_.run_scenario() + " " +
                   (session_.state() == SessionState::kDone ? "done " : "failed ") +
                   std::to_string(store.event_count()));
  }

  const bool first = runs_started_ == 1;
  if (session_.state() != SessionState::kDone) {
    if (first && flags_.scripted()) {
      std::cerr << kAppProgram << ": error: " << session_.error() << "\n";
      exit_code_ = 1;
    }
    return;
  }
  // A speed the user chose survives; the automatic one follows the real run.
  if (clock_.speed() == auto_speed_) {
    auto_speed_ = AutoReplaySpeed(session_.replay_end_ns(), clock_.num_steps());
    clock_.set_speed(auto_speed_);
  }
  if (!first) return;
  if (flags_.speed_ns_per_s > 0) clock_.set_speed(flags_.speed_ns_per_s);
  for (int i = 0; i < flags_.step; ++i) {
    if (!clock_.Step()) break;
  }
  if (flags_.play) clock_.Play();
  if (std::string message; !ApplyStartupSelection(&message)) {
    std::cerr << kAppProgram << ": error: " << message << "\n";
    if (flags_.scripted()) exit_code_ = 1;
    SetStatus(message, true);
  }
  if (!flags_.trace_path.empty()) {
    if (const std::string failed = WriteSessionTrace(session_, flags_.trace_path); !failed.empty()) {
      SetStatus(failed, true);
      if (flags_.scripted()) {
        std::cerr << kAppProgram << ": error: " << failed << "\n";
        exit_code_ = 1;
      }
    } else {
      SetStatus(Format(Tr("Saved trace %s"), flags_.trace_path.c_str()), false);
    }
  }
}

void App::SetStatus(const std::string& text, bool error) {
  status_ = text;
  status_error_ = error;
  const double now_s = window_ != nullptr ? glfwGetTime() : 0.0;  // before the window: its clock starts at 0
  status_until_s_ = now_s + (error ? kErrorStatusSeconds : kStatusSeconds);
}

void App::ApplyTheme(ThemeKind kind) {
  theme_ = kind;
  ApplyImGuiStyle(kind);
}

void App::SetFontScale(float scale) {
  const float clamped = std::clamp(scale, kMinFontScale, kMaxFontScale);
  if (clamped == font_scale_) return;
  font_scale_ = clamped;
  font_reload_pending_ = true;  // the atlas may only change between frames
}

void App::SetAppLanguage(Language language) {
  if (language == CurrentLanguage()) return;
  if (language == Language::kChinese && !chinese_font_) {
    SetStatus(Tr("No CJK font for Chinese: install fonts-wqy-microhei or fonts-noto-cjk"), true);
    return;
  }
  SetLanguage(language);
  font_reload_pending_ = true;  // the atlas bakes the new language's characters between frames
  if (lab_panel_.model) {
    lab_panel_.model->SetLanguage(LanguageCode(language));
    lab_panel_.model->ReloadText();  // the lab's own text, from its loader
    lab_panel_.rows_stale = true;
  }
}

CjkRequest App::FontRequest() const {
  CjkRequest request;
  request.font_path = flags_.cjk_font;
  if (!chinese_font_) return request;
  if (CurrentLanguage() == Language::kChinese) {
    request.codepoints = ChineseCodepoints(LabTexts(lab_panel_.model ? lab_panel_.model->labs_dir() : "labs",
                                                    flags_.lab_path));
  } else {
    // English bakes only View > Language's "简体中文".
    AddCodepoints(LanguageName(Language::kChinese), &request.codepoints);
  }
  return request;
}

void App::CaptureIfPending() {
  if (pending_screenshot_.empty()) return;
  if (screenshot_delay_frames_ > 0) {
    --screenshot_delay_frames_;
    return;
  }
  int fb_w = 0;
  int fb_h = 0;
  glfwGetFramebufferSize(window_, &fb_w, &fb_h);
  const std::string path = std::exchange(pending_screenshot_, std::string());
  if (const std::string failed = SaveFramebufferPng(path, fb_w, fb_h); !failed.empty()) {
    SetStatus(failed, true);
    if (flags_.scripted()) {
      std::cerr << kAppProgram << ": error: " << failed << "\n";
      exit_code_ = 1;
    }
    return;
  }
  SetStatus(Format(Tr("Saved screenshot %s"), path.c_str()), false);
  test_log::Line("screenshot " + path);
}

std::string App::DefaultExportName(ExportKind kind) const {
  const ScenarioSettings& s = scenario_state_.last_run;
  std::string topology = s.topology;
  const std::size_t slash = topology.find_last_of('/');
  if (slash != std::string::npos) topology = topology.substr(slash + 1);
  const std::size_t dot = topology.rfind('.');
  if (dot != std::string::npos && dot > 0) topology = topology.substr(0, dot);
  // The scenario and its first few fields as the panel shows them, a count
  // of GPUs as "8gpu": "shardlab-allreduce-ring-8gpu-64M-dgx-a100".
  std::string stem = "shardlab-" + s.scenario;
  constexpr std::size_t kNamedFields = 3;
  std::size_t named = 0;
  for (const PanelField& f : PanelFields(s, 0)) {
    if (named++ == kNamedFields) break;
    stem += "-" + f.value + (f.unit == "GPUs" ? "gpu" : "");
  }
  stem += "-" + topology;
  return FileSafe(stem) + (kind == ExportKind::kScreenshot ? ".png" : ".json");
}

bool App::ApplyStartupSelection(std::string* message) {
  const Plan* plan = session_.plan();
  const Topology* topology = session_.topology();
  if (plan == nullptr || topology == nullptr) return true;
  if (flags_.select_op >= 0) {
    if (static_cast<std::size_t>(flags_.select_op) >= plan->ops.size()) {
      *message = "--select-op: the run has ops 0-" + std::to_string(plan->ops.size() - 1) + " (got " +
                 std::to_string(flags_.select_op) + ")";
      return false;
    }
    insight_.SelectOp(flags_.select_op);
  }
  if (!flags_.select_link.empty()) {
    // A node by name, or a GPU by its rank.
    auto node_of = [&](const std::string& word) {
      const int named = topology->FindNode(word);
      if (named >= 0) return named;
      if (word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return -1;
      const int rank = std::stoi(word);
      return rank < topology->num_gpus() ? topology->gpus[static_cast<std::size_t>(rank)] : -1;
    };
    const std::string& text = flags_.select_link;
    for (std::size_t dash = text.find('-'); dash != std::string::npos; dash = text.find('-', dash + 1)) {
      const int a = node_of(text.substr(0, dash));
      const int b = node_of(text.substr(dash + 1));
      if (a < 0 || b < 0) continue;
      for (std::size_t i = 0; i < topology->links.size(); ++i) {
        const Link& l = topology->links[i];
        if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) {
          insight_.SelectLink(static_cast<int>(i));
          return true;
        }
      }
    }
    *message = "--select-link: no link '" + text + "' in " + topology->name;
    return false;
  }
  return true;
}

}  // namespace shardlab::gui
