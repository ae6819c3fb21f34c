// `shardlab-cli topo`: the built-in presets, one topology printed like
// `nvidia-smi topo -m`, and the ring order ShardLab would choose on it.
#include <algorithm>
#include <iostream>
#include <numeric>

#include "app/cli/commands.h"
#include "app/cli/output.h"
#include "engine/topology/detect.h"
#include "engine/topology/presets.h"
#include "engine/topology/ring_order.h"
#include "engine/topology/topology_file.h"
#include "engine/topology/topology_print.h"

namespace shardlab::cli {
namespace {

void PrintPresetList(std::ostream& out) {
  const std::vector<PresetInfo> presets = ListTopologyPresets();
  std::size_t width = 0;
  for (const PresetInfo& p : presets) width = std::max(width, p.name.size());
  out << "# Topology presets (bandwidths are per direction; use with --topology NAME)\n";
  for (const PresetInfo& p : presets) {
    out << "  " << p.name << std::string(width - p.name.size() + 2, ' ') << p.description << "\n";
  }
  out << "#\n"
      << "# Also: <N>x-dgx-a100-ib and <N>x-dgx-h100-ib (N boxes over InfiniBand),\n"
      << "# <N>x-dgx-h100-superpod (N DGX H100 on the NVLink Switch System), and any\n"
      << "# topology file ('shardlab-cli topo --preset dgx-a100 --toml' prints one to start\n"
      << "# from; see assets/topologies/example-workstation.toml).\n";
}

std::string JoinRanks(const std::vector<int>& order) {
  std::string text;
  for (std::size_t i = 0; i < order.size(); ++i) text += (i ? " " : "") + std::to_string(order[i]);
  return text;
}

/// The ring a collective would use on the first `ranks` GPUs, beside rank order.
void PrintRingChoice(std::ostream& out, const Topology& topology, int ranks) {
  if (ranks < 2) return;
  const std::vector<int> chosen = ChooseRingOrder(topology, ranks);
  std::vector<int> by_rank(static_cast<std::size_t>(ranks));
  std::iota(by_rank.begin(), by_rank.end(), 0);
  const Gbps chosen_gbps = RingBottleneckGbps(topology, chosen);
  const Gbps rank_gbps = RingBottleneckGbps(topology, by_rank);
  out << "\nRing over " << ranks << " GPUs:\n"
      << "  --ring-order auto   " << JoinRanks(chosen) << "   slowest hop "
      << FormatGbps(chosen_gbps) << " GB/s per direction\n"
      << "  --ring-order rank   " << JoinRanks(by_rank) << "   slowest hop "
      << FormatGbps(rank_gbps) << " GB/s per direction\n";
}

}  // namespace

CommandSpec TopoSpec() {
  CommandSpec s;
  s.name = "topo";
  s.summary = "list topology presets, or print one with its links and ring order";
  s.usage = "topo [--list | --preset NAME | --topology NAME|FILE] [flags]";
  s.description =
      "Prints a topology as nvidia-smi topo -m does: the GPU-by-GPU matrix of connection\n"
      "kinds, the legend, and every link with its per-direction bandwidth and latency;\n"
      "then the ring that --ring-order auto chooses beside the ring in rank order.\n"
      "With no flags it lists the presets.";
  s.flags = {
      {"list", 'l', "", "list the presets"},
      {"preset", 'p', "NAME", "print a preset"},
      {"topology", 0, "NAME|FILE", "print a preset or a topology file"},
      {"ranks", 0, "N", "GPUs in the ring shown at the end (default: all)"},
      {"toml", 0, "", "print the topology in the topology-file format instead"},
      {"detect", 0, "", "detect this machine's GPUs and links (CUDA runtime, NVML when "
                        "present) and print them as a topology"},
  };
  s.max_positionals = 1;
  s.examples =
      "  shardlab-cli topo --list\n"
      "  shardlab-cli topo --preset dgx1-v100\n"
      "  shardlab-cli topo --topology my-box.toml\n"
      "  shardlab-cli topo --preset dgx-a100 --toml > my-box.toml\n"
      "  shardlab-cli topo --detect --toml > this-machine.toml\n";
  return s;
}

int TopoMain(const ParsedArgs& args) {
  int sources = args.Has("list") + args.Has("preset") + args.Has("topology") +
                args.Has("detect") + (args.positionals().empty() ? 0 : 1);
  if (sources > 1) throw UsageError("topo: give one of --list, --preset, --topology or --detect");
  if (sources == 0 || args.Has("list")) {
    if (args.Has("toml") || args.Has("ranks")) {
      throw UsageError("topo: --toml and --ranks need a topology (--preset or --topology)");
    }
    PrintPresetList(std::cout);
    return 0;
  }

  Topology topology;
  DetectedMachine detected;
  if (args.Has("detect")) {
    detected = DetectMachine();
    topology = BuildDetectedTopology(detected);
  } else if (args.Has("preset")) {
    topology = MakeTopologyPreset(args.Get("preset"));
  } else {
    const std::string name =
        args.Has("topology") ? args.Get("topology") : args.positionals().front();
    topology = LoadTopology(name);
  }
  const int gpus = topology.num_gpus();
  int ranks = gpus;
  if (args.Has("ranks")) {
    ranks = static_cast<int>(ParseIntValue(args.Spelling("ranks"), args.Get("ranks"), 1, 1 << 20));
    if (ranks > gpus) {
      throw UsageError(args.Spelling("ranks") + ": " + std::to_string(ranks) +
                       " ranks but the topology has only " + std::to_string(gpus) + " GPUs");
    }
  }

  if (args.Has("toml")) {
    std::cout << WriteTopologyText(topology);
    return 0;
  }
  if (args.Has("detect")) std::cout << FormatDetectedMachine(detected) << "\n";
  std::cout << FormatTopology(topology);
  PrintRingChoice(std::cout, topology, ranks);
  return 0;
}

}  // namespace shardlab::cli
