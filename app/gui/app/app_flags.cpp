#include "app/gui/app/app_flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/run/backend.h"

namespace shardlab::gui {
namespace {

struct FlagInfo {
  const char* name;        // without dashes
  const char* value_name;  // nullptr: a switch
  const char* help;
};

// One table drives parsing, the "did you mean" hint and --help.
constexpr FlagInfo kFlags[] = {
    {"scenario", "KIND", "collective: allreduce, reducescatter, allgather, broadcast, reduce, alltoall (default allreduce)"},
    {"algo", "ALGO", "ring, tree (allreduce) or direct (alltoall); default: the kind's usual one"},
    {"ranks", "N", "ranks, one per GPU (default 8)"},
    {"size", "SIZE", "one rank's buffer: 8, 64K, 64M, 1G, 1.6GB, 4KiB (default 64M)"},
    {"topology", "NAME|FILE", "topology preset or topology file (default dgx-a100)"},
    {"backend", "NAME", "backend (default sim)"},
    {"ring-order", "ORDER", "auto, rank or a list such as 0,3,2,1 (default auto)"},
    {"timing-only", nullptr, "skip the data: time the run without checking its result"},
    {"play", nullptr, "start playing the replay once the run is recorded"},
    {"step", "N", "advance the replay N logical steps once the run is recorded"},
    {"speed", "X", "replay speed in nanoseconds of run per second of wall time (default: the whole run in about 20 s)"},
    {"frames", "N", "scripted mode: render N frames, write --screenshot/--trace, exit"},
    {"screenshot", "FILE.png", "with --frames: save the window as PNG after the last frame"},
    {"trace", "FILE.json", "write the run's Chrome trace (Perfetto) once it is recorded"},
    {"theme", "dark|light", "colour theme; light is high-contrast for projectors (default dark)"},
    {"font-scale", "F", "text size factor, 0.5 to 4 (default 1; Ctrl +/- in the app)"},
    {"width", "W", "window width in pixels (default 1600)"},
    {"height", "H", "window height in pixels (default 1000)"},
    {"version", nullptr, "print the version"},
    {"help", nullptr, "print this help"},
};

Error UsageError(const std::string& message) { return Error(message, ErrorKind::kInvalidInput); }

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

const FlagInfo* FindFlag(std::string_view name) {
  for (const FlagInfo& f : kFlags) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

Error UnknownFlag(const std::string& word) {
  std::string_view bare = word;
  while (!bare.empty() && bare.front() == '-') bare.remove_prefix(1);
  bare = bare.substr(0, bare.find('='));
  const FlagInfo* best = nullptr;
  std::size_t best_distance = 3;  // a typo, not a different word
  for (const FlagInfo& f : kFlags) {
    const std::size_t d = EditDistance(bare, f.name);
    if (d < best_distance) {
      best = &f;
      best_distance = d;
    }
  }
  if (word.rfind("-", 0) != 0) {
    return UsageError("unexpected argument '" + word + "' (see '" + kAppProgram + " --help')");
  }
  if (best != nullptr) {
    return UsageError("unknown flag " + word + " (did you mean --" + best->name + "?)");
  }
  return UsageError("unknown flag " + word + " (see '" + kAppProgram + " --help')");
}

long long ParseInt(const std::string& flag, const std::string& text, long long min, long long max) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(flag + ": expected a whole number (got '" + text + "')");
  }
  if (value < min) {
    throw UsageError(flag + ": must be at least " + std::to_string(min) + " (got " + text + ")");
  }
  if (value > max) {
    throw UsageError(flag + ": must be at most " + std::to_string(max) + " (got " + text + ")");
  }
  return value;
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
    if (b.name == name) return;
    known += (known.empty() ? "" : ", ") + b.name;
  }
  throw UsageError(flag + ": unknown backend '" + name + "' (available: " + known + ")");
}

/// Applies one flag's value to `flags`.
void Apply(AppFlags& flags, const std::string& name, const std::string& spelling,
           const std::string& value, bool& algo_given) {
  ScenarioSettings& s = flags.settings;
  // Engine parsers name the field ("size: ..."); say the flag instead.
  const auto relabel = [&](auto&& parse) {
    try {
      parse();
    } catch (const Error& e) {
      std::string message = e.what();
      const std::size_t colon = message.find(": ");
      if (colon != std::string::npos && colon < 12) message = message.substr(colon + 2);
      throw UsageError(spelling + ": " + message);
    }
  };
  if (name == "scenario") {
    relabel([&] { ParseCollectiveKind(value); });
    s.scenario = value;
  } else if (name == "algo") {
    relabel([&] { ParseCollectiveAlgo(value); });
    s.algo = value;
    algo_given = true;
  } else if (name == "ranks") {
    s.ranks = static_cast<int>(ParseInt(spelling, value, 1, 1 << 20));
  } else if (name == "size") {
    relabel([&] { ParseSize(value, "size"); });
    s.size = value;
  } else if (name == "topology") {
    if (value.empty()) throw UsageError(spelling + ": empty (give a preset name or a file)");
    s.topology = value;
  } else if (name == "backend") {
    CheckBackend(spelling, value);
    s.backend = value;
  } else if (name == "ring-order") {
    if (value.empty()) throw UsageError(spelling + ": empty (use auto, rank or e.g. 0,3,2,1)");
    s.ring_order = value;
  } else if (name == "timing-only") {
    s.timing_only = true;
  } else if (name == "play") {
    flags.play = true;
  } else if (name == "step") {
    flags.step = static_cast<int>(ParseInt(spelling, value, 0, 1 << 24));
  } else if (name == "speed") {
    flags.speed_ns_per_s = ParseReal(spelling, value, 1e-3, 1e15);
  } else if (name == "frames") {
    flags.frames = static_cast<int>(ParseInt(spelling, value, 1, 1'000'000));
  } else if (name == "screenshot") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.screenshot_path = value;
  } else if (name == "trace") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.trace_path = value;
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
  } else if (name == "width") {
    flags.width_px = static_cast<int>(ParseInt(spelling, value, 320, 16384));
  } else if (name == "height") {
    flags.height_px = static_cast<int>(ParseInt(spelling, value, 240, 16384));
  } else if (name == "version") {
    flags.version = true;
  } else if (name == "help") {
    flags.help = true;
  }
}

}  // namespace

AppFlags ParseAppFlags(std::span<const std::string> args) {
  AppFlags flags;
  // --help wins over everything else on the line, even over bad flags.
  for (const std::string& word : args) {
    if (word == "--help" || word == "-h") {
      flags.help = true;
      return flags;
    }
  }
  bool algo_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word.rfind("--", 0) != 0 || word.size() == 2) throw UnknownFlag(word);
    const std::size_t eq = word.find('=');
    const std::string name = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const std::string spelling = "--" + name;
    const FlagInfo* flag = FindFlag(name);
    if (flag == nullptr) throw UnknownFlag(word);
    std::string value;
    if (flag->value_name == nullptr) {
      if (eq != std::string::npos) throw UsageError(spelling + ": takes no value");
    } else if (eq != std::string::npos) {
      value = word.substr(eq + 1);
    } else {
      // "--frames -1" is a value (and then a range error), "--frames --play" is not.
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
        throw UsageError(spelling + ": missing value (" + flag->value_name + ")");
      }
      value = args[++i];
    }
    Apply(flags, name, spelling, value, algo_given);
  }
  if (!algo_given) {
    flags.settings.algo = CollectiveAlgoName(DefaultAlgo(ParseCollectiveKind(flags.settings.scenario)));
  }
  if (!flags.screenshot_path.empty() && !flags.scripted()) {
    throw UsageError("--screenshot: needs --frames N (the frame to save; e.g. --frames 120)");
  }
  return flags;
}

std::string AppHelpText() {
  std::ostringstream out;
  out << "Usage: " << kAppProgram << " [flags]\n"
      << "\n"
      << "The ShardLab desktop app: pick a collective, a machine and a size, then step\n"
      << "through the run and watch which GPU sends which chunk over which link.\n"
      << "Without flags it opens on ring all-reduce over 8 GPUs of a DGX A100.\n"
      << "\n"
      << "Flags:\n";
  std::size_t width = 0;
  std::vector<std::string> lefts;
  for (const FlagInfo& f : kFlags) {
    std::string left = std::string("--") + f.name;
    if (f.value_name != nullptr) left += std::string(" ") + f.value_name;
    width = std::max(width, left.size());
    lefts.push_back(std::move(left));
  }
  for (std::size_t i = 0; i < lefts.size(); ++i) {
    out << "  " << lefts[i] << std::string(width - lefts[i].size() + 2, ' ') << kFlags[i].help
        << "\n";
  }
  out << "\n"
      << "Keys: Space play/pause, Right step, Left step back, R reset, Ctrl +/- text size.\n"
      << "\n"
      << "Scripted screenshot (for slides and tests):\n"
      << "  " << kAppProgram
      << " --ranks 8 --size 64M --topology dgx1-v100 --step 3 --frames 60 --screenshot out.png\n"
      << "\n"
      << "Exit codes: 0 success, 1 a failed run or export in scripted mode, 2 bad flags.\n";
  return out.str();
}

}  // namespace shardlab::gui
