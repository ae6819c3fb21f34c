// AppFlags: the desktop app's command line.
//
//   shardlab [--scenario allreduce|...|pipeline|tp|zero|3d|moe]
//            [a flag per parameter of the scenario, from its spec: --ranks 8
//             --size 64M --stages 4 --tp 4 --zero-stage 3 ... in any order]
//            [--backend sim] [--worker [--worker-fault KIND]]  (collectives: run in `shardlab-cli worker`)
//            [--open-trace FILE.json]           (show a recorded trace instead of a run)
//            [--play] [--step N] [--speed X]
//            [--critical-path] [--select-op N] [--select-link A-B] [--show-pattern]
//            [--frames N --screenshot out.png] [--trace out.json] [--test-log FILE]
//            [--lab labs/01-ring-allreduce] [--labs-dir DIR] [--progress-dir DIR]
//            [--lang zh-CN|en] [--cjk-font FILE] [--glyph-check]
//            [--theme dark|light] [--font-scale F] [--window-width W --window-height H]
//
// The scenario's flags are the specs' parameters (engine/scenarios/): the
// same names, defaults, ranges and old spellings as `shardlab-cli run`; a
// flag of a parameter the chosen scenario lacks is an error, an old name
// a notice.
// Every value is checked here, before a window opens, so a bad flag costs
// one line on stderr and exit code 2 (as shardlab-cli does), never a window
// that flashes and dies. Whether the scenario as a whole makes sense (16
// ranks on an 8-GPU machine) is Session::Check's call; main() asks it too.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "app/gui/app/theme.h"
#include "app/gui/i18n/language.h"
#include "app/gui/model/session.h"

namespace shardlab::gui {

inline constexpr const char* kAppProgram = "shardlab";

struct AppFlags {
  ScenarioSettings settings;        // the run started at launch
  bool play = false;                // start playing once the first run is recorded
  int step = 0;                     // steps to advance once the first run is recorded
  double speed_ns_per_s = 0;        // replay speed; 0 = automatic (see transport bar)
  int frames = 0;                   // > 0: scripted mode, exit after this many frames
  std::string screenshot_path;      // PNG written after the last scripted frame (or the flood)
  double event_flood_s = 0;         // > 0: flood the event stream this long, report, exit
  std::string trace_path;           // Chrome trace of the first run
  std::string test_log_path;        // tests: what the app did with each input (test_log.h)
  std::string open_trace_path;      // a trace to show instead of the launch run
  std::string compare_trace_path;   // with open_trace_path: a second run laid over it
  std::string worker_fault;         // tests: --inject-fault for every worker run
  std::string mpi_timeout;          // --mpi-timeout of mpi worker runs ("" = the backend's default)
  std::string mpi_fault;            // tests: --mpi-fault of the launch run's mpi worker
  std::string lab_path;              // --lab: open this lab at start, resuming its progress
  std::string labs_dir;              // --labs-dir: the chooser's folder ("" = the lab's parent, or labs)
  std::string progress_dir;          // --progress-dir ("" = DefaultLabProgressDir())
  Language language = Language::kEnglish;  // ParseAppFlags: from the locale unless --lang
  std::string cjk_font;             // --cjk-font ("" = the system's, kCjkFontPaths)
  bool glyph_check = false;         // count fallback glyphs in the last scripted frame
  ThemeKind theme = ThemeKind::kDark;
  float font_scale = 1.0f;
  int width_px = 1600;
  int height_px = 1000;
  bool planner = false;             // open the 3D layout planner window
  // "Why is it slow?" at start-up, once the run is recorded (for screenshots):
  bool critical_path = false;       // outline the critical path in the timeline
  int select_op = -1;               // select this op (details, lit route and chunk)
  std::string select_link;          // select the link "A-B" (node names or GPU ranks): its transfers
  bool show_pattern = false;        // draw the run's communication pattern on the machine
  bool help = false;
  bool version = false;
  /// One line each for an old spelling used, as shardlab-cli words it
  /// ("shardlab: --stage is now --zero-stage; the old spelling goes in the
  /// next release"); main() prints them on stderr.
  std::vector<std::string> notices;

  /// Scripted runs never wait for a person: they render, save and exit.
  bool scripted() const { return frames > 0; }
};

/// Parses the words after the program name. Throws shardlab::Error
/// (kInvalidInput) with a message naming the flag as the user spelled it:
/// "--ranks: must be at least 1 (got '0')", "unknown flag --rank (did you
/// mean --ranks?)".
AppFlags ParseAppFlags(std::span<const std::string> args);

/// The text `shardlab --help` prints.
std::string AppHelpText();

}  // namespace shardlab::gui
