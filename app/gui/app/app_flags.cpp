#include "app/gui/app/app_flags.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "app/common/args.h"
#include "engine/algorithms/collective.h"
#include "engine/algorithms/pipeline_schedule.h"
#include "engine/model/mlp.h"
#include "engine/model/moe_layer.h"
#include "engine/model/tp_layer.h"
#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/run/backend.h"
#include "app/gui/model/this_machine_choice.h"
#include "app/gui/model/scenario_fields.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab::gui {
namespace {

bool IsCollectiveSpec(const ScenarioSpec& spec) { return spec.name == kCollectiveSpec; }

/// "allreduce, reducescatter, ..." : the collective spec's kinds.
std::string CollectiveKinds() {
  const ScenarioSpec* collective = FindScenario(kCollectiveSpec);
  const ParamSpec* kind = collective != nullptr ? collective->FindParam(kCollectiveKindParam) : nullptr;
  return kind != nullptr ? JoinChoices(kind->choices) : "";
}

/// "pipeline, tp, zero, 3d, moe, ...": every registered scenario but the collectives.
std::string OtherScenarios() {
  std::string names;
  for (const ScenarioSpec& spec : Scenarios()) {
    if (!IsCollectiveSpec(spec)) names += (names.empty() ? "" : ", ") + spec.name;
  }
  return names;
}

/// "scenario tp", "the collective allreduce".
std::string ScenarioWords(const std::string& app_scenario) {
  const ScenarioSpec* spec = FindScenario(app_scenario);
  return spec != nullptr && !IsCollectiveSpec(*spec) ? "scenario " + app_scenario
                                                      : "the collective " + app_scenario;
}

/// One flag of a scenario parameter, shared by every spec that has a
/// parameter of that name. Spelled as shardlab-cli spells it: the name
/// with '-' for '_', a bool that defaults to true as --no-NAME, old names
/// (ParamSpec::old_names) accepted with the CLI's notice.
struct ScenarioFlag {
  std::string name;          // "zero-stage", "no-overlap"
  std::string param;         // the spec's name: "zero_stage"
  char short_name = 0;
  std::string value_name;    // "N"; "" for a switch
  std::string switch_value;  // a switch's value: "true", or "false" for --no-NAME
  std::string help;
  std::vector<std::string> old_names;  // "stage", "zero"; "model-width" (the app's own)
};

std::string Dashed(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

/// Every scenario parameter's flag, from the specs.
const std::vector<ScenarioFlag>& ScenarioFlags() {
  static const std::vector<ScenarioFlag> all = [] {
    std::vector<ScenarioFlag> flags;
    for (const ScenarioSpec& spec : Scenarios()) {
      for (const ParamSpec& p : spec.params) {
        if (IsCollectiveSpec(spec) && p.name == kCollectiveKindParam) continue;  // --scenario
        const bool negated = p.type == ParamType::kBool && p.default_text == "true";
        ScenarioFlag flag;
        flag.param = p.name;
        flag.name = (negated ? "no-" : "") + Dashed(p.name);
        flag.value_name = ParamValueName(p);
        flag.short_name = p.short_flag;
        if (p.type == ParamType::kBool) flag.switch_value = negated ? "false" : "true";
        for (const std::string& old : p.old_names) flag.old_names.push_back((negated ? "no-" : "") + Dashed(old));
        const std::string said = spec.name + ": " + p.help + " " + ParamDefaultText(p);
        const auto same =
            std::find_if(flags.begin(), flags.end(), [&](const ScenarioFlag& f) { return f.name == flag.name; });
        if (same == flags.end()) {
          flag.help = said;
          flags.push_back(std::move(flag));
          continue;
        }
        if (same->help.find(said) == std::string::npos) same->help += "; " + said;
        if (same->short_name != flag.short_name) same->short_name = 0;  // specs disagree: none
        for (const std::string& old : flag.old_names) {
          if (std::find(same->old_names.begin(), same->old_names.end(), old) == same->old_names.end()) {
            same->old_names.push_back(old);
          }
        }
      }
    }
    // A short flag two flags claim belongs to neither.
    for (ScenarioFlag& f : flags) {
      if (f.short_name == 0) continue;
      const auto users = std::count_if(flags.begin(), flags.end(),
                                       [&](const ScenarioFlag& g) { return g.short_name == f.short_name; });
      if (users > 1) {
        const char taken = f.short_name;
        for (ScenarioFlag& g : flags) {
          if (g.short_name == taken) g.short_name = 0;
        }
      }
    }
    // The app's own earlier spelling of the model's width.
    for (ScenarioFlag& f : flags) {
      if (f.name == "width") f.old_names.push_back("model-width");
    }
    return flags;
  }();
  return all;
}

const FlagSpec* FindFlag(const std::vector<FlagSpec>& flags, const std::string& name) {
  for (const FlagSpec& f : flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool IsScenarioFlag(const std::string& name) {
  for (const ScenarioFlag& f : ScenarioFlags()) {
    if (f.name == name) return true;
  }
  return false;
}

/// "its flags: --stages, --microbatches, ..." for a message.
std::string FlagsOf(const ScenarioSpec& spec) {
  std::string flags;
  for (const ParamSpec& p : spec.params) {
    if (IsCollectiveSpec(spec) && p.name == kCollectiveKindParam) continue;
    const std::string flag =
        p.type == ParamType::kBool && p.default_text == "true" ? "--no-" + Dashed(p.name) : p.Flag();
    flags += (flags.empty() ? "its flags: " : ", ") + flag;
  }
  return flags;
}

/// The app's flags; one table drives parsing, the "did you mean" hint and
/// --help (the parser is shardlab-cli's, app/common/args.h).
const CommandSpec& AppSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.program = kAppProgram;
    s.usage = "[flags]";
    s.description =
        "The ShardLab desktop app: pick a collective, a machine and a size, then step\n"
        "through the run and watch which GPU sends which chunk over which link; or\n"
        "train a small MLP across pipeline stages and watch the schedule's bubble; or\n"
        "split one transformer layer over GPUs (Megatron tensor parallelism) and see\n"
        "which GPU holds which block of each weight and when the all-reduces run; or\n"
        "train with data parallelism and ZeRO stages 1-3 and watch each GPU's memory\n"
        "by kind (parameters, gradients, optimizer states) shrink stage by stage.\n"
        "Without flags it opens on ring all-reduce over 8 GPUs of a DGX A100.\n"
        "\n"
        "Keys: Space play/pause, Right step, Left step back, R reset, Ctrl +/- text size.";
    s.examples =
        "  shardlab --ranks 8 --size 64M --topology dgx1-v100 --step 3 --frames 60 "
        "--screenshot out.png\n"
        "      (a scripted screenshot, for slides and tests)\n"
        "  shardlab --scenario pipeline --schedule 1f1b --stages 4 --microbatches 8\n"
        "      (train the small MLP across 4 pipeline stages and watch the bubble)\n"
        "  shardlab --scenario tp --layer mlp --tp 4 --batch 2 --seq 8 --hidden 32\n"
        "      (Megatron's MLP over 4 GPUs: A split by columns, B by rows, one\n"
        "       all-reduce forward and one backward)\n"
        "  shardlab --scenario tp --layer transformer --tp 4 --heads 4 --sequence-parallel\n"
        "      (a whole layer; with sequence parallelism each all-reduce becomes a\n"
        "       reduce-scatter and an all-gather)\n"
        "  shardlab --scenario zero --stage 3 --ranks 8 --layers 4 --model-width 64 --batch 32\n"
        "           --steps 2 --bucket 4K --no-overlap\n"
        "      (ZeRO-3 over 8 GPUs: each keeps 1/8 of every model state; every layer is\n"
        "       all-gathered before its forward and its backward)\n"
        "  shardlab --scenario 3d --dp 2 --pp 2 --tp 2 --microbatches 4\n"
        "      (8 GPUs in a DP x PP x TP grid; the topology and Gantt group by coordinate)\n"
        "  shardlab --scenario moe --ranks 4 --experts 8 --skew hot\n"
        "      (one MoE layer; the hot expert's GPU is the straggler)\n"
        "\n"
        "Exit codes: 0 success, 1 a failed run or export in scripted mode, 2 bad flags.\n";
    // The app's own flags; each scenario parameter's flag is added below
    // from the specs, so its default, range and help are the spec's.
    s.flags = {
        {"scenario", 0, "KIND", "a collective (" + CollectiveKinds() + ") or a scenario (" + OtherScenarios() +
                                    ") (default allreduce)"},
        {"backend", 0, "NAME", "backend (default sim)"},
        {"warmup", 0, "N", "untimed runs before the timed ones, as the CLI's -w (default: 1 on cuda, else 0)"},
        {"iters", 0, "N", "timed runs, as the CLI's -n: the metrics show their average and best, the timeline the last (default: 1)"},
        {"worker", 0, "", "collectives: run in a worker process ('shardlab-cli worker'), as real hardware does; the backend may then be one only the worker has (cuda, mpi)"},
        {"worker-fault", 0, "KIND", "for tests: the launch run's worker fails after one step (sticky-cuda, signal, kill, exit or hang); Restart worker then runs normally"},
        {"mpi-timeout", 0, "TIME", "with --backend mpi --worker: the mpi backend's bound on every wait (e.g. 2s; default 30s)"},
        {"mpi-fault", 0, "KIND", "for tests, with --backend mpi --worker: the launch run's mpi fault (kill:rank=1,op=3, exit:..., skip:rank=2,iter=1; see 'shardlab-cli run --help'); Restart worker then runs normally"},
        {"device-profile", 0, "FILE", "with --topology this and no GPU here: the GPU to model, a device profile 'shardlab-cli calibrate' wrote (e.g. tests/data/traces/h200.toml); ranks beyond its GPUs are virtual devices sharing its HBM"},
        {"open-trace", 0, "FILE.json", "show a Chrome trace ShardLab wrote (any backend, any machine) instead of a run"},
        {"compare-trace", 0, "FILE.json", "with --open-trace: lay a second run of the same plan over it (outlines on the Gantt, summary in the metrics panel)"},
        {"planner", 0, "", "open the 3D layout planner window (View > 3D layout planner)"},
        {"play", 0, "", "start playing the replay once the run is recorded"},
        {"critical-path", 0, "", "outline the critical path (the chain of ops that sets the run's end) in the timeline"},
        {"select-op", 0, "N", "once the run is recorded, select op N: its details, its route lit on the machine, its chunk in the buffers"},
        {"select-link", 0, "A-B", "once the run is recorded, select the link between nodes A and B (names such as gpu2-nvswitch, or GPU ranks 2-3): the transfers that crossed it"},
        {"show-pattern", 0, "", "draw the run's communication pattern (ring, trees, stages, groups) over the machine's links"},
        {"step", 0, "N", "advance the replay N logical steps once the run is recorded"},
        {"speed", 0, "X", "replay speed in nanoseconds of run per second of wall time (default: the whole run in about 20 s)"},
        {"frames", 0, "N", "scripted mode: render N frames, write --screenshot/--trace, exit"},
        {"screenshot", 0, "FILE.png", "with --frames or --event-flood: save the window as PNG after the last frame"},
        {"event-flood", 0, "SECONDS", "reliability check: once the run is recorded, re-emit its events as fast as a thread can for SECONDS while drawing; print frame times, drops and memory, exit (1 if an event was lost uncounted or memory grew)"},
        {"trace", 0, "FILE.json", "write the run's Chrome trace (Perfetto) once it is recorded"},
        {"test-log", 0, "FILE", "for tests: write what the app did with each input (scenario chosen, run started and recorded, step, op selected, lab answer graded) and where the widgets stand, one line each; F12 then saves the window next to FILE"},
        {"lab", 0, "DIR", "open the guided lab in DIR (e.g. labs/01-ring-allreduce) in the lab panel, resuming saved progress"},
        {"labs-dir", 0, "DIR", "the folder the lab chooser lists (default: the --lab folder's parent, else labs)"},
        {"progress-dir", 0, "DIR", "where lab progress is saved (default $XDG_DATA_HOME/shardlab/progress or ~/.local/share/shardlab/progress)"},
        {"lang", 0, "zh-CN|en", "the app's language: menus, panels, tooltips and messages (default: from the locale, LC_ALL, LC_MESSAGES or LANG: zh... is zh-CN, else en; View > Language in the app)"},
        {"cjk-font", 0, "FILE", "the font for Chinese text (default: the first of WenQuanYi Micro Hei, Noto Sans CJK; from fonts-wqy-microhei or fonts-noto-cjk)"},
        {"glyph-check", 0, "", "with --frames: count the characters the last frame drew from the font atlas and those that fell back to the missing-glyph box; print one line, exit 1 if any fell back"},
        {"theme", 0, "dark|light", "colour theme; light is high-contrast for projectors (default dark)"},
        {"font-scale", 0, "F", "text size factor, 0.5 to 4 (default 1; Ctrl +/- in the app)"},
        {"window-width", 0, "W", "window width in pixels (default 1600; --width is the model's)"},
        {"window-height", 0, "H", "window height in pixels (default 1000)", {"height"}},
        {"version", 0, "", "print the version"},
    };
    for (const ScenarioFlag& flag : ScenarioFlags()) {
      if (FindFlag(s.flags, flag.name) != nullptr) continue;
      s.flags.push_back(FlagSpec{flag.name, flag.short_name, flag.value_name, flag.help, flag.old_names});
    }
    return s;
  }();
  return spec;
}

double ParseReal(const std::string& flag, const std::string& text, double min, double max) {
  // strtod accepts "inf" and "nan": reject anything that is not finite.
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    throw UsageError(flag + ": expected a number (got '" + text + "')");
  }
  if (value < min || value > max) {
    std::ostringstream range;
    range << flag << ": must be between " << min << " and " << max << " (got " << text << ")";
    throw UsageError(range.str());
  }
  return value;
}

void CheckBackend(const std::string& flag, const std::string& name) {
  std::string known;
  for (const BackendInfo& b : ListBackends()) {
    if (b.traits.needs_worker) continue;
    if (b.name == name) return;
    known += (known.empty() ? "" : ", ") + b.name;
  }
  if (FindBackend(name)) {
    throw UsageError(flag + ": backend '" + name + "' runs only in a worker process here (add --worker)");
  }
  throw UsageError(flag + ": unknown backend '" + name + "' (available: " + known + ")");
}

/// Applies one of the app's own flags (not a scenario parameter).
void Apply(AppFlags& flags, const std::string& name, const std::string& spelling, const std::string& value) {
  ScenarioSettings& s = flags.settings;
  if (name == "scenario") {
    if (FindScenario(value) == nullptr || value == kCollectiveSpec) {
      try {
        ParseCollectiveKind(value);
      } catch (const Error& e) {
        throw UsageError(spelling + ": '" + value + "' is neither a collective (" + CollectiveKinds() +
                         ") nor a scenario (" + OtherScenarios() + ")");
      }
    }
    s.scenario = value;
  } else if (name == "backend") {
    s.backend = value;  // checked in ParseAppFlags: a worker may have other backends
  } else if (name == "worker") {
    s.in_worker = true;
  } else if (name == "worker-fault") {
    if (value != "sticky-cuda" && value != "signal" && value != "kill" && value != "exit" && value != "hang") {
      throw UsageError(spelling + ": unknown fault '" + value + "' (use sticky-cuda, signal, kill, exit or hang)");
    }
    flags.worker_fault = value;
  } else if (name == "mpi-timeout") {
    CheckBackendWorkerFlag(name, spelling, value);  // the message names the flag
    flags.mpi_timeout = value;
  } else if (name == "mpi-fault") {
    CheckBackendWorkerFlag(name, spelling, value);
    flags.mpi_fault = value;
  } else if (name == "compare-trace") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.compare_trace_path = value;
  } else if (name == "device-profile") {
    if (value.empty()) throw UsageError(spelling + ": missing value");
    s.device_profile = value;
  } else if (name == "open-trace") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.open_trace_path = value;
  } else if (name == "planner") {
    flags.planner = true;
  } else if (name == "play") {
    flags.play = true;
  } else if (name == "critical-path") {
    flags.critical_path = true;
  } else if (name == "select-op") {
    flags.select_op = static_cast<int>(ParseIntValue(spelling, value, 0, 1 << 30));
  } else if (name == "select-link") {
    if (value.find('-') == std::string::npos || value.front() == '-' || value.back() == '-') {
      throw UsageError(spelling + ": expected A-B, two node names or GPU ranks (got '" + value + "')");
    }
    flags.select_link = value;
  } else if (name == "show-pattern") {
    flags.show_pattern = true;
  } else if (name == "step") {
    flags.step = static_cast<int>(ParseIntValue(spelling, value, 0, 1 << 24));
  } else if (name == "speed") {
    flags.speed_ns_per_s = ParseReal(spelling, value, 1e-3, 1e15);
  } else if (name == "frames") {
    flags.frames = static_cast<int>(ParseIntValue(spelling, value, 1, 1'000'000));
  } else if (name == "event-flood") {
    flags.event_flood_s = ParseReal(spelling, value, 0.1, 3600);
  } else if (name == "screenshot") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.screenshot_path = value;
  } else if (name == "trace") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.trace_path = value;
  } else if (name == "test-log") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.test_log_path = value;
  } else if (name == "lab" || name == "labs-dir" || name == "progress-dir") {
    if (value.empty()) throw UsageError(spelling + ": empty folder name");
    (name == "lab" ? flags.lab_path : name == "labs-dir" ? flags.labs_dir : flags.progress_dir) = value;
  } else if (name == "lang") {
    const std::optional<Language> language = ParseLanguage(value);
    if (!language) throw UsageError(spelling + ": unknown language '" + value + "' (use zh-CN or en)");
    flags.language = *language;
  } else if (name == "cjk-font") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.cjk_font = value;
  } else if (name == "glyph-check") {
    flags.glyph_check = true;
  } else if (name == "theme") {
    if (value == "dark") {
      flags.theme = ThemeKind::kDark;
    } else if (value == "light") {
      flags.theme = ThemeKind::kLight;
    } else {
      throw UsageError(spelling + ": unknown theme '" + value + "' (use dark or light)");
    }
  } else if (name == "font-scale") {
    flags.font_scale = static_cast<float>(ParseReal(spelling, value, 0.5, 4.0));
  } else if (name == "window-width") {
    flags.width_px = static_cast<int>(ParseIntValue(spelling, value, 320, 16384));
  } else if (name == "window-height") {
    flags.height_px = static_cast<int>(ParseIntValue(spelling, value, 240, 16384));
  } else if (name == "version") {
    flags.version = true;
  } else if (name == "help") {
    flags.help = true;
  }
}

/// Applies the scenario parameters' flags once the scenario is known, so
/// their order on the command line does not matter (`--tp 4 --scenario
/// tp` is `--scenario tp --tp 4`).
void ApplyScenarioFlags(AppFlags& flags, const ParsedArgs& parsed) {
  ScenarioSettings& s = flags.settings;
  const ScenarioSpec* spec = SpecOf(s.scenario);
  if (spec == nullptr) return;  // --scenario said why
  for (const ScenarioFlag& flag : ScenarioFlags()) {
    if (!parsed.Has(flag.name)) continue;
    const std::string spelling = parsed.Spelling(flag.name);
    const ParamSpec* param = spec->FindParam(flag.param);
    if (param == nullptr || (IsCollectiveSpec(*spec) && param->name == kCollectiveKindParam)) {
      std::string message = spelling + ": not a parameter of " + ScenarioWords(s.scenario) + " (" +
                            FlagsOf(*spec) + ")";
      if (spelling == "--width") message += "; the window's width is --window-width";
      throw UsageError(message);
    }
    const std::string value = flag.value_name.empty() ? flag.switch_value : parsed.Get(flag.name);
    if (const std::string problem = CheckParamValue(*param, value); !problem.empty()) {
      throw UsageError(spelling + ": " + problem);
    }
    SetParamText(&s, *spec, *param, CanonicalParamValue(*param, value));
  }
}

/// ParseAppFlags without the notices' bookkeeping.
void ParseInto(AppFlags& flags, std::span<const std::string> args, std::ostringstream& notices) {
  const ParsedArgs parsed = ParseArgs(AppSpec(), args, &notices);
  if (parsed.help()) {
    flags.help = true;
    return;
  }
  // The app's own flags in table order (a message names the first bad flag
  // the same way each time), then the scenario's, for the scenario given.
  for (const FlagSpec& flag : AppSpec().flags) {
    if (!parsed.Has(flag.name) || IsScenarioFlag(flag.name)) continue;
    Apply(flags, flag.name, parsed.Spelling(flag.name), parsed.Get(flag.name));
  }
  const std::string scenario = flags.settings.scenario;
  const bool in_worker = flags.settings.in_worker;
  const std::string backend = flags.settings.backend;
  const std::string device_profile = flags.settings.device_profile;
  flags.settings = DefaultSettings(scenario);
  flags.settings.in_worker = in_worker;
  flags.settings.backend = backend;
  flags.settings.device_profile = device_profile;
  ApplyScenarioFlags(flags, parsed);
  // Warm-up and timed runs, as the CLI's -w/-n (run_iterations.h): any
  // scenario, any backend, in the worker process too.
  if (parsed.Has("warmup")) {
    flags.settings.warmup =
        static_cast<int>(ParseIntValue(parsed.Spelling("warmup"), parsed.Get("warmup"), 0, 1000000));
  }
  if (parsed.Has("iters")) {
    flags.settings.iters =
        static_cast<int>(ParseIntValue(parsed.Spelling("iters"), parsed.Get("iters"), 1, 1000000));
  }
  if (parsed.Has("device-profile") && !IsThisMachine(flags.settings.topology)) {
    throw UsageError(parsed.Spelling("device-profile") + ": only with --topology this (the machine it models)");
  }
  if (parsed.Has("backend") && !flags.settings.in_worker) {
    CheckBackend(parsed.Spelling("backend"), flags.settings.backend);
  }
  if (flags.settings.in_worker && !IsCollectiveScenario(flags.settings)) {
    throw UsageError("--worker: only collectives run in a worker process so far (not " +
                     flags.settings.scenario + ")");
  }
  if (!flags.worker_fault.empty() && !flags.settings.in_worker) {
    throw UsageError("--worker-fault: needs --worker");
  }
  // The mpi backend's own flags go to its worker (BackendTraits::worker_flags).
  const char* mpi_flag = !flags.mpi_fault.empty() ? "mpi-fault" : !flags.mpi_timeout.empty() ? "mpi-timeout" : nullptr;
  if (mpi_flag != nullptr &&
      !(flags.settings.in_worker && BackendTraitsOrDefault(flags.settings.backend).TakesWorkerFlag(mpi_flag))) {
    throw UsageError(std::string("--") + mpi_flag + ": needs --backend mpi --worker");
  }
  if (!flags.screenshot_path.empty() && !flags.scripted() && flags.event_flood_s == 0) {
    throw UsageError("--screenshot: needs --frames N (the frame to save; e.g. --frames 120)");
  }
  if (flags.glyph_check && !flags.scripted()) {
    throw UsageError("--glyph-check: needs --frames N (it counts the last frame's characters)");
  }
  if (flags.event_flood_s > 0 && flags.scripted()) {
    throw UsageError("--event-flood: runs in real time; leave out --frames");
  }
  if (!flags.compare_trace_path.empty() && flags.open_trace_path.empty()) {
    throw UsageError("--compare-trace: needs --open-trace FILE (the run it is laid over)");
  }
}

}  // namespace

AppFlags ParseAppFlags(std::span<const std::string> args) {
  AppFlags flags;
  flags.language = LanguageFromEnvironment();  // --lang wins
  std::ostringstream notices;  // old spellings, in shardlab-cli's words
  try {
    ParseInto(flags, args, notices);
  } catch (const Error&) {
    std::cerr << notices.str();  // as the CLI: the notice, then the error
    throw;
  }
  std::istringstream lines(notices.str());
  for (std::string line; std::getline(lines, line);) flags.notices.push_back(line);
  return flags;
}

std::string AppHelpText() { return FormatHelp(AppSpec()); }

}  // namespace shardlab::gui
