#include "app/gui/app/app_flags.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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
#include "engine/backends/mpi/mpi_options.h"

namespace shardlab::gui {
namespace {

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
    s.flags = {
        {"scenario", 0, "KIND", "allreduce, reducescatter, allgather, broadcast, reduce, alltoall, pipeline, tp, zero, 3d or moe (default allreduce)"},
        {"algo", 0, "ALGO", "ring, tree (allreduce) or direct (alltoall); default: the kind's usual one"},
        {"ranks", 0, "N", "ranks, one per GPU (default 8; zero: the data-parallel degree N, default 4; moe: expert-parallel ranks, default 4)"},
        {"size", 0, "SIZE", "one rank's buffer: 8, 64K, 64M, 1G, 1.6GB, 4KiB (default 64M)"},
        {"topology", 0, "NAME|FILE", "topology preset or topology file (default dgx-a100)"},
        {"backend", 0, "NAME", "backend (default sim)"},
        {"ring-order", 0, "ORDER", "auto, rank or a list such as 0,3,2,1 (default auto)"},
        {"timing-only", 0, "", "skip the data: time the run without checking its result"},
        {"worker", 0, "", "collectives: run in a worker process ('shardlab-cli worker'), as real hardware does; the backend may then be one only the worker has (cuda, mpi)"},
        {"worker-fault", 0, "KIND", "for tests: the launch run's worker fails after one step (sticky-cuda, signal, kill, exit or hang); Restart worker then runs normally"},
        {"mpi-timeout", 0, "TIME", "with --backend mpi --worker: the mpi backend's bound on every wait (e.g. 2s; default 30s)"},
        {"mpi-fault", 0, "KIND", "for tests, with --backend mpi --worker: the launch run's mpi fault (kill:rank=1,op=3, exit:..., skip:rank=2,iter=1; see 'shardlab-cli run --help'); Restart worker then runs normally"},
        {"open-trace", 0, "FILE.json", "show a Chrome trace ShardLab wrote (any backend, any machine) instead of a run"},
        {"compare-trace", 0, "FILE.json", "with --open-trace: lay a second run of the same plan over it (outlines on the Gantt, summary in the metrics panel)"},
        {"schedule", 0, "NAME", "pipeline: gpipe, 1f1b, interleaved or zb-h1 (default 1f1b)"},
        {"stages", 0, "N", "pipeline: stages, one per GPU (default 4)"},
        {"microbatches", 0, "N", "pipeline: micro-batches per step (default 8)"},
        {"chunks", 0, "N", "pipeline: model chunks per stage, interleaved only (default 2)"},
        {"layers", 0, "N", "pipeline: layers of the MLP (default 8); zero: (default 4)"},
        {"model-width", 0, "N", "pipeline: features of every layer (default 256); zero: (default 64)"},
        {"batch", 0, "N", "pipeline: rows of one training step (default 64); tp: sequences B (default 2); zero: the global batch, split over the ranks (default 32)"},
        {"optimizer", 0, "NAME", "pipeline: sgd or adam (default sgd)"},
        {"layer", 0, "KIND", "tp: column, row, mlp, attention or transformer (default mlp)"},
        {"tp", 0, "N", "tp: GPUs the layer is split over (default 4); 3d: tensor-parallel degree (default 2)"},
        {"dp", 0, "N", "3d: data-parallel replicas (default 2); with --pp and --tp the grid, dp*pp*tp GPUs"},
        {"pp", 0, "N", "3d: pipeline stages (default 2)"},
        {"zero", 0, "0|1", "3d: 0 (DP all-reduce of gradients) or 1 (ZeRO-1 within each DP group) (default 0)"},
        {"experts", 0, "E", "moe: experts, divisible by --ranks (default 8)"},
        {"top-k", 0, "K", "moe: experts per token (default 2)"},
        {"tokens", 0, "T", "moe: tokens over all ranks, divisible by --ranks (default 1024)"},
        {"capacity-factor", 0, "C", "moe: capacity per expert as a multiple of the even share (default 1.25)"},
        {"skew", 0, "NAME", "moe: router (its own top-k), uniform, hot (half the tokens to expert 0) or zipf (default router)"},
        {"seq", 0, "N", "tp: tokens per sequence S; the layer sees T = B x S (default 8)"},
        {"hidden", 0, "N", "tp: hidden size H (default 32); moe: (default 128)"},
        {"ffn", 0, "N", "tp: split width F (default 0: 4H for the MLP, H for one linear); moe: each expert's inner width (default 256)"},
        {"heads", 0, "N", "tp: attention heads, attention and transformer only (default 4)"},
        {"sequence-parallel", 0, "", "tp: Megatron's sequence parallelism (each all-reduce becomes RS + AG)"},
        {"stage", 0, "N", "zero: 0 (plain data parallel), 1 (optimizer states sharded), 2 (+ gradients), 3 (+ parameters) (default 2)"},
        {"steps", 0, "N", "zero: Adam steps to train (default 2); --step moves the replay instead"},
        {"bucket", 0, "SIZE", "zero: fp16 gradient per bucket, stages 0-2: 4K, 25M (default 16K)"},
        {"no-overlap", 0, "", "zero: every gradient collective waits for the whole backward"},
        {"k", 0, "12|8", "zero: optimizer bytes per parameter in the memory formula: 12 (ZeRO paper: fp32 master, Adam m and v) or 8 (seed texts) (default 12)"},
        {"planner", 0, "", "open the 3D layout planner window (View > 3D layout planner)"},
        {"play", 0, "", "start playing the replay once the run is recorded"},
        {"step", 0, "N", "advance the replay N logical steps once the run is recorded"},
        {"speed", 0, "X", "replay speed in nanoseconds of run per second of wall time (default: the whole run in about 20 s)"},
        {"frames", 0, "N", "scripted mode: render N frames, write --screenshot/--trace, exit"},
        {"screenshot", 0, "FILE.png", "with --frames or --event-flood: save the window as PNG after the last frame"},
        {"event-flood", 0, "SECONDS", "reliability check: once the run is recorded, re-emit its events as fast as a thread can for SECONDS while drawing; print frame times, drops and memory, exit (1 if an event was lost uncounted or memory grew)"},
        {"trace", 0, "FILE.json", "write the run's Chrome trace (Perfetto) once it is recorded"},
        {"lab", 0, "DIR", "open the guided lab in DIR (e.g. labs/01-ring-allreduce) in the lab panel, resuming saved progress"},
        {"labs-dir", 0, "DIR", "the folder the lab chooser lists (default: the --lab folder's parent, else labs)"},
        {"progress-dir", 0, "DIR", "where lab progress is saved (default $XDG_DATA_HOME/shardlab/progress or ~/.local/share/shardlab/progress)"},
        {"theme", 0, "dark|light", "colour theme; light is high-contrast for projectors (default dark)"},
        {"font-scale", 0, "F", "text size factor, 0.5 to 4 (default 1; Ctrl +/- in the app)"},
        {"width", 0, "W", "window width in pixels (default 1600)"},
        {"height", 0, "H", "window height in pixels (default 1000)"},
        {"version", 0, "", "print the version"},
    };
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
    if (value != kPipelineScenario && value != kTensorParallelScenario && value != kZeroScenario &&
        value != kThreeDScenario && value != kMoeScenario) {
      relabel([&] { ParseCollectiveKind(value); });
    }
    s.scenario = value;
  } else if (name == "layer") {
    relabel([&] { ParseTpLayerKind(value); });
    s.tp_layer = value;
  } else if (name == "tp") {
    (s.is_three_d() ? s.tp3 : s.tp) = static_cast<int>(ParseIntValue(spelling, value, 1, 4096));
  } else if (name == "dp") {
    s.dp = static_cast<int>(ParseIntValue(spelling, value, 1, 4096));
  } else if (name == "pp") {
    s.pp = static_cast<int>(ParseIntValue(spelling, value, 1, 4096));
  } else if (name == "zero") {
    s.td_zero = static_cast<int>(ParseIntValue(spelling, value, 0, 1));
  } else if (name == "experts") {
    s.moe_experts = static_cast<int>(ParseIntValue(spelling, value, 1, 1 << 16));
  } else if (name == "top-k") {
    s.moe_top_k = static_cast<int>(ParseIntValue(spelling, value, 1, 1 << 16));
  } else if (name == "tokens") {
    s.moe_tokens = static_cast<int>(ParseIntValue(spelling, value, 1, 1 << 24));
  } else if (name == "capacity-factor") {
    s.moe_capacity = ParseReal(spelling, value, 1e-3, 1e6);
  } else if (name == "skew") {
    relabel([&] { ParseMoeSkew(value); });
    s.moe_skew = value;
  } else if (name == "seq") {
    s.tp_seq = static_cast<int>(ParseIntValue(spelling, value, 1, 1 << 20));
  } else if (name == "hidden") {
    (s.is_moe() ? s.moe_hidden : s.tp_hidden) = static_cast<int>(ParseIntValue(spelling, value, 1, 1 << 16));
  } else if (name == "ffn") {
    (s.is_moe() ? s.moe_ffn : s.tp_ffn) = static_cast<int>(ParseIntValue(spelling, value, 0, 1 << 18));
  } else if (name == "heads") {
    s.tp_heads = static_cast<int>(ParseIntValue(spelling, value, 1, 1 << 12));
  } else if (name == "sequence-parallel") {
    s.sequence_parallel = true;
  } else if (name == "stage") {
    s.zero_stage = static_cast<int>(ParseIntValue(spelling, value, 0, 3));
  } else if (name == "steps") {
    s.zero_steps = static_cast<int>(ParseIntValue(spelling, value, 1, 1000));
  } else if (name == "bucket") {
    relabel([&] { ParseSize(value, "bucket"); });
    s.zero_bucket = value;
  } else if (name == "no-overlap") {
    s.zero_overlap = false;
  } else if (name == "k") {
    s.zero_k = static_cast<int>(ParseIntValue(spelling, value, 8, 12));
    if (s.zero_k != 8 && s.zero_k != 12) {
      throw UsageError(spelling + ": K is 12 (the ZeRO paper) or 8 (the seed texts) (got " + value + ")");
    }
  } else if (name == "schedule") {
    relabel([&] { ParsePipelineSchedule(value); });
    s.schedule = value;
  } else if (name == "optimizer") {
    relabel([&] { ParseOptimizer(value); });
    s.optimizer = value;
  } else if (name == "stages") {
    s.stages = static_cast<int>(ParseIntValue(spelling, value, 1, 4096));
  } else if (name == "microbatches") {
    s.microbatches = static_cast<int>(ParseIntValue(spelling, value, 1, 65536));
  } else if (name == "chunks") {
    s.chunks = static_cast<int>(ParseIntValue(spelling, value, 1, 64));
  } else if (name == "layers") {
    // Shared flags: --scenario comes first in the table, so it is known here.
    (s.is_zero() ? s.zero_layers : s.layers) = static_cast<int>(ParseIntValue(spelling, value, 1, 4096));
  } else if (name == "model-width") {
    (s.is_zero() ? s.zero_width : s.width) = static_cast<int>(ParseIntValue(spelling, value, 1, 1 << 16));
  } else if (name == "batch") {
    const int batch = static_cast<int>(ParseIntValue(spelling, value, 1, 1 << 20));
    (s.is_tp() ? s.tp_batch : s.is_zero() ? s.zero_batch : s.batch) = batch;
  } else if (name == "algo") {
    relabel([&] { ParseCollectiveAlgo(value); });
    s.algo = value;
    algo_given = true;
  } else if (name == "ranks") {
    (s.is_zero() ? s.zero_ranks : s.is_moe() ? s.moe_ranks : s.ranks) = static_cast<int>(ParseIntValue(spelling, value, 1, 1 << 20));
  } else if (name == "size") {
    relabel([&] { ParseSize(value, "size"); });
    s.size = value;
  } else if (name == "topology") {
    if (value.empty()) throw UsageError(spelling + ": empty (give a preset name or a file)");
    s.topology = value;
  } else if (name == "backend") {
    s.backend = value;  // checked in ParseAppFlags: a worker may have other backends
  } else if (name == "ring-order") {
    if (value.empty()) throw UsageError(spelling + ": empty (use auto, rank or e.g. 0,3,2,1)");
    s.ring_order = value;
  } else if (name == "timing-only") {
    s.timing_only = true;
  } else if (name == "worker") {
    s.in_worker = true;
  } else if (name == "worker-fault") {
    if (value != "sticky-cuda" && value != "signal" && value != "kill" && value != "exit" && value != "hang") {
      throw UsageError(spelling + ": unknown fault '" + value + "' (use sticky-cuda, signal, kill, exit or hang)");
    }
    flags.worker_fault = value;
  } else if (name == "mpi-timeout") {
    ParseMpiTimeout(spelling, value);  // the message names the flag
    flags.mpi_timeout = value;
  } else if (name == "mpi-fault") {
    ParseMpiFault(spelling, value);
    flags.mpi_fault = value;
  } else if (name == "compare-trace") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.compare_trace_path = value;
  } else if (name == "open-trace") {
    if (value.empty()) throw UsageError(spelling + ": empty file name");
    flags.open_trace_path = value;
  } else if (name == "planner") {
    flags.planner = true;
  } else if (name == "play") {
    flags.play = true;
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
  } else if (name == "lab" || name == "labs-dir" || name == "progress-dir") {
    if (value.empty()) throw UsageError(spelling + ": empty folder name");
    (name == "lab" ? flags.lab_path : name == "labs-dir" ? flags.labs_dir : flags.progress_dir) = value;
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
    flags.width_px = static_cast<int>(ParseIntValue(spelling, value, 320, 16384));
  } else if (name == "height") {
    flags.height_px = static_cast<int>(ParseIntValue(spelling, value, 240, 16384));
  } else if (name == "version") {
    flags.version = true;
  } else if (name == "help") {
    flags.help = true;
  }
}

}  // namespace

AppFlags ParseAppFlags(std::span<const std::string> args) {
  AppFlags flags;
  const ParsedArgs parsed = ParseArgs(AppSpec(), args);
  if (parsed.help()) {
    flags.help = true;
    return flags;
  }
  bool algo_given = false;
  // In table order, so a message names the first bad flag the same way each time.
  for (const FlagSpec& flag : AppSpec().flags) {
    if (!parsed.Has(flag.name)) continue;
    Apply(flags, flag.name, parsed.Spelling(flag.name), parsed.Get(flag.name), algo_given);
  }
  if (parsed.Has("backend") && !flags.settings.in_worker) {
    CheckBackend(parsed.Spelling("backend"), flags.settings.backend);
  }
  if (flags.settings.in_worker && !flags.settings.is_collective()) {
    throw UsageError("--worker: only collectives run in a worker process so far (not " +
                     flags.settings.scenario + ")");
  }
  if (!flags.worker_fault.empty() && !flags.settings.in_worker) {
    throw UsageError("--worker-fault: needs --worker");
  }
  if ((!flags.mpi_timeout.empty() || !flags.mpi_fault.empty()) &&
      !(flags.settings.in_worker && flags.settings.backend == "mpi")) {
    throw UsageError(std::string(flags.mpi_fault.empty() ? "--mpi-timeout" : "--mpi-fault") +
                     ": needs --backend mpi --worker");
  }
  if (!algo_given && flags.settings.is_collective()) {
    flags.settings.algo = CollectiveAlgoName(DefaultAlgo(ParseCollectiveKind(flags.settings.scenario)));
  }
  if (!flags.screenshot_path.empty() && !flags.scripted() && flags.event_flood_s == 0) {
    throw UsageError("--screenshot: needs --frames N (the frame to save; e.g. --frames 120)");
  }
  if (flags.event_flood_s > 0 && flags.scripted()) {
    throw UsageError("--event-flood: runs in real time; leave out --frames");
  }
  if (!flags.compare_trace_path.empty() && flags.open_trace_path.empty()) {
    throw UsageError("--compare-trace: needs --open-trace FILE (the run it is laid over)");
  }
  return flags;
}

std::string AppHelpText() { return FormatHelp(AppSpec()); }

}  // namespace shardlab::gui
