// `shardlab-cli sweep tp-LAYER`: the same layer at several tensor-parallel
// sizes, timing-only on the simulator, against the layer on one GPU. The
// table shows where tensor parallelism stops paying: inside one NVLink box
// the all-reduces are cheap, and the first TP group that crosses InfiniBand
// spends most of its step communicating.
//
//      N  hosts  ...  comm share  step  speedup  efficiency
//      8      1        0.19       ...     6.5      0.81
//     16      2   IB   0.80       ...     3.1      0.19   <- crosses InfiniBand
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "app/cli/commands.h"
#include "app/cli/output.h"
#include "app/cli/scenario_flags.h"
#include "app/cli/tp_args.h"
#include "engine/core/json.h"
#include "engine/scenarios/collective_scenario.h"

namespace shardlab::cli {
namespace {

/// More sizes than this is a typo, not a sweep.
constexpr std::size_t kMaxSizes = 64;

/// The tp spec's "gpt3-layer" preset (engine/scenarios/tp_scenario.cpp):
/// the seed text's GPT-3 layer over two DGX A100s, so that the default
/// 2,4,8,16 crosses InfiniBand once.
TpDefaults SweepDefaults() {
  ScenarioParams preset(ScenarioSpecOf("tp"));
  preset.ApplyPreset("gpt3-layer");
  TpDefaults d;
  d.batch = static_cast<int>(preset.Int("batch"));
  d.seq = static_cast<int>(preset.Int("seq"));
  d.hidden = static_cast<int>(preset.Int("hidden"));
  d.topology = preset.Text("topology");
  d.always_timing_only = preset.Bool("timing_only");
  return d;
}

std::vector<int> ParseTpList(const ParsedArgs& args) {
  const std::string spelling = args.Spelling("tp");
  const std::string text = args.Get("tp", "2,4,8,16");
  std::vector<int> tps;
  std::set<int> seen;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string item = text.substr(begin, comma == std::string::npos ? comma : comma - begin);
    if (item.empty()) {
      throw UsageError(spelling + ": expected a list of sizes like 2,4,8,16 (got '" + text + "')");
    }
    const int tp = static_cast<int>(ParseIntValue(spelling, item, INT_MIN, INT_MAX));
    if (!seen.insert(tp).second) {
      throw UsageError(spelling + ": " + std::to_string(tp) + " is listed twice (got '" + text +
                       "')");
    }
    tps.push_back(tp);
    if (tps.size() > kMaxSizes) {
      throw UsageError(spelling + ": more than " + std::to_string(kMaxSizes) + " sizes");
    }
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return tps;
}

std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

std::string Pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

/// A row of the table: the engine's, with its hosts and ring B at hand.
struct SweepRow {
  TpScalingRow row;
  int hosts = 1;
  Gbps ring_gbps = 0;  // slowest hop of GPUs 0..N-1, per direction; 0 for N = 1
};

/// The lines under the table that name the collapse: the best TP group in
/// one host against the first that crosses hosts.
std::vector<std::string> CollapseText(const std::vector<SweepRow>& rows) {
  const SweepRow* inside = nullptr;  // largest N within one host
  const SweepRow* across = nullptr;  // smallest N across hosts
  for (const SweepRow& r : rows) {
    if (!r.row.crosses_nodes && (inside == nullptr || r.row.tp > inside->row.tp)) inside = &r;
    if (r.row.crosses_nodes && (across == nullptr || r.row.tp < across->row.tp)) across = &r;
  }
  std::vector<std::string> lines;
  if (inside != nullptr && across != nullptr) {
    lines.push_back("Efficiency falls from " + Fixed(inside->row.efficiency, 2) + " at N = " +
                    std::to_string(inside->row.tp) + " (one host, ring at " +
                    FormatGbps(inside->ring_gbps) + " GB/s) to " +
                    Fixed(across->row.efficiency, 2) + " at N = " +
                    std::to_string(across->row.tp) + " (" + std::to_string(across->hosts) +
                    " hosts, ring at " + FormatGbps(across->ring_gbps) + " GB/s):");
    lines.push_back("communication goes from " + Fixed(100 * inside->row.metrics.comm_share, 0) +
                    "% to " + Fixed(100 * across->row.metrics.comm_share, 0) +
                    "% of the step. Megatron keeps TP inside a node for this reason.");
  } else if (!rows.empty()) {
    const SweepRow& last = rows.back();
    lines.push_back("Every TP group here fits in one host; at N = " + std::to_string(last.row.tp) +
                    " efficiency is " + Fixed(last.row.efficiency, 2) + " and communication " +
                    Fixed(100 * last.row.metrics.comm_share, 0) + "% of the step.");
  }
  return lines;
}

}  // namespace

CommandSpec TpSweepSpec() {
  const TpDefaults d = SweepDefaults();
  CommandSpec s;
  s.name = "sweep tp-LAYER";
  s.summary = "one tensor-parallel layer at several tp sizes: speedup, efficiency, comm share";
  s.usage = "sweep tp-column|tp-row|tp-mlp|tp-attention|tp-transformer [flags]";
  s.description =
      "Runs the layer (see 'run tp-mlp --help') split over each size in --tp, timing-only on\n"
      "the simulator (fp16 unless --dtype fp32), and the same layer unsplit on GPU 0. One row\n"
      "per size: hosts spanned, compute and communication time, communication share of the\n"
      "step, step time, speedup over one GPU and efficiency = speedup / N. Rows whose TP\n"
      "group spans hosts are marked IB: their all-reduces cross InfiniBand. The defaults are\n"
      "the seed text's GPT-3 layer (H 12288, 2048 tokens, batch 32) on two DGX A100s.";
  s.flags = {{"tp", 0, "LIST", "tensor-parallel sizes, comma-separated; GPUs 0..N-1 "
                               "(default: 2,4,8,16)"}};
  AddTpLayerFlags(s.flags, d);
  const std::vector<FlagSpec> own = {
      {"timing-only", 0, "", "accepted as in 'run': a sweep is always timing-only"},
      {"json", 0, "", "print one JSON object with a row per size instead of the table"},
      {"quiet", 'q', "", "no progress on stderr"},
  };
  s.flags.insert(s.flags.end(), own.begin(), own.end());
  s.examples =
      "  shardlab-cli sweep tp-mlp\n"
      "  shardlab-cli sweep tp-mlp --tp 2,4,8,16 --batch 32 --seq 2048 --hidden 12288 "
      "--topology 2x-dgx-a100-ib\n"
      "  shardlab-cli sweep tp-transformer --tp 1,2,4,8 --topology dgx-h100 --json\n";
  return s;
}

int TpSweepMain(const std::string& layer_word, std::span<const std::string> words) {
  ParsedArgs args;
  if (HelpPrinted(TpSweepSpec(), words, args)) return 0;
  const TpLayerKind kind = TpLayerFromWord("sweep", layer_word);
  const std::vector<int> tps = ParseTpList(args);
  const bool json = args.Has("json");

  TpScenario scenario;
  Topology topology;
  try {
    scenario = TpScenarioFromArgs(args, kind, /*timing_only=*/true, SweepDefaults());
    topology = LoadScenarioTopology(scenario.topology);
    // Every size is checked before any runs, so a bad one costs no waiting.
    for (const int tp : tps) {
      TpScenario s = scenario;
      s.layer.tp = tp;
      CheckTpScenario(s, topology);
    }
  } catch (const Error& e) {
    throw TpFlagError(e, args);
  }

  const TpLayerConfig& c = scenario.layer;
  std::ostream& out = std::cout;
  if (!json) {
    out << "# ShardLab sweep: tensor-parallel " << TpLayerTitle(kind) << ", "
        << TpDTypeName(c.dtype) << ", sequence parallelism " << (c.sequence_parallel ? "on" : "off")
        << ", on " << scenario.topology << " (" << topology.num_gpus() << " GPUs, "
        << topology.num_hosts() << (topology.num_hosts() == 1 ? " host" : " hosts")
        << "), timing only\n"
        << "#   T = batch " << c.batch << " x seq " << c.seq << " = " << c.tokens()
        << " tokens, hidden H " << c.hidden;
    if (c.kind != TpLayerKind::kAttention) out << ", F " << c.split_width();
    if (c.has_attention()) out << ", heads " << c.head_count();
    out << "\n";
    out.flush();
  }

  const bool progress = !json && !args.Has("quiet") && isatty(STDERR_FILENO) != 0;
  if (progress) {
    std::fprintf(stderr, "# running %zu sizes and one GPU...", tps.size());
    std::fflush(stderr);
  }
  std::vector<TpScalingRow> engine_rows;
  try {
    engine_rows = RunTpScaling(scenario, tps);
  } catch (const Error& e) {
    if (progress) std::fputs("\r\033[K", stderr);
    throw TpFlagError(e, args);
  }
  if (progress) std::fputs("\r\033[K", stderr);

  std::vector<SweepRow> rows;
  for (TpScalingRow& r : engine_rows) {
    SweepRow row;
    row.hosts = r.hosts;
    row.ring_gbps = r.ring_gbps;
    row.row = std::move(r);
    rows.push_back(std::move(row));
  }
  const TimeNs single_ns = rows.empty() ? 0 : rows.front().row.single_device_ns;
  const std::vector<std::string> collapse = CollapseText(rows);

  if (json) {
    JsonWriter w(out, /*pretty=*/true);
    w.BeginObject();
    w.Field("scenario", "tp-sweep");
    WriteTpShapeFields(w, c);
    w.Field("topology", scenario.topology);
    w.Field("backend", "sim");
    w.Field("timing_only", true);
    w.Field("single_device_us", single_ns / 1e3);
    w.Key("rows");
    w.BeginArray();
    for (const SweepRow& r : rows) {
      const TpMetrics& m = r.row.metrics;
      w.BeginObject();
      w.Field("tp", r.row.tp);
      w.Field("hosts", r.hosts);
      w.Field("crosses_nodes", r.row.crosses_nodes);
      w.Field("ring_bandwidth_gbps", r.ring_gbps);
      w.Field("compute_us", m.compute_ns / 1e3);
      w.Field("comm_us", m.comm_ns / 1e3);
      w.Field("comm_share", m.comm_share);
      w.Field("step_time_us", m.step_ns / 1e3);
      w.Field("speedup", r.row.speedup);
      w.Field("efficiency", r.row.efficiency);
      w.Field("forward_allreduces", m.forward_allreduces);
      w.Field("backward_allreduces", m.backward_allreduces);
      w.EndObject();
    }
    w.EndArray();
    w.Key("summary");
    w.BeginArray();
    for (const std::string& line : collapse) w.String(line);
    w.EndArray();
    w.EndObject();
    out << "\n";
    out.flush();
    return 0;
  }

  // Milliseconds for paper-sized layers, microseconds for small ones.
  TimeNs largest_ns = single_ns;
  for (const SweepRow& r : rows) largest_ns = std::max(largest_ns, r.row.metrics.step_ns);
  const bool in_ms = largest_ns >= 1e6;
  const char* unit = in_ms ? "ms" : "us";
  const double per_unit_ns = in_ms ? 1e6 : 1e3;
  out << "#   one GPU: step " << FormatTime(single_ns) << " (the layer unsplit on GPU 0)\n#\n"
      << "#    N  hosts  ring B (GB/s)  compute (" << unit << ")  comm (" << unit
      << ")  comm share  step (" << unit << ")  speedup  efficiency\n";
  bool any_ib = false;
  for (const SweepRow& r : rows) {
    const TpMetrics& m = r.row.metrics;
    any_ib = any_ib || r.row.crosses_nodes;
    out << "  " << Pad(std::to_string(r.row.tp), 5) << Pad(std::to_string(r.hosts), 7)
        << Pad(r.row.tp > 1 ? FormatGbps(r.ring_gbps) : "-", 15)
        << Pad(Fixed(m.compute_ns / per_unit_ns, 3), 14)
        << Pad(Fixed(m.comm_ns / per_unit_ns, 3), 11) << Pad(Fixed(m.comm_share, 3), 12)
        << Pad(Fixed(m.step_ns / per_unit_ns, 3), 11)
        << Pad(Fixed(r.row.speedup, 2), 9) << Pad(Fixed(r.row.efficiency, 2), 12)
        << (r.row.crosses_nodes ? "  IB" : "") << "\n";
  }
  out << "#\n";
  if (any_ib) {
    out << "# IB: the TP group spans hosts, so every all-reduce crosses InfiniBand "
           "(ring B is its slowest hop).\n";
  }
  for (const std::string& line : collapse) out << "# " << line << "\n";
  out.flush();
  return 0;
}

}  // namespace shardlab::cli
