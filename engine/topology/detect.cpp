#include "engine/topology/detect.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <map>

#include "engine/core/error.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

std::atomic<MachineProbe> g_probe{nullptr};

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The preset figures of a detected GPU: the longest known model name inside
// the device name, else the model of the same compute capability.
DeviceSpec FiguresOf(const DetectedGpu& gpu) {
  const std::string name = Lower(gpu.name);
  const DeviceSpec* best = nullptr;
  std::size_t best_len = 0;
  for (const std::string& known : KnownGpuModelNames()) {
    const std::string k = Lower(known);
    if (k.size() > best_len && name.find(k) != std::string::npos) {
      best = FindGpuModel(known);
      best_len = k.size();
    }
  }
  std::string note;
  if (best == nullptr) {
    const int cc = gpu.cc_major * 10 + gpu.cc_minor;
    const char* like = cc >= 100 ? "B200" : cc >= 90 ? "H100" : cc >= 89 ? "RTX-4090"
                     : cc >= 86 ? "RTX-A6000" : cc >= 80 ? "A100" : cc >= 70 ? "V100" : "P100";
    best = FindGpuModel(like);
    note = std::string(" (figures of ") + like + "; run calibrate for this GPU's)";
  }
  DeviceSpec spec = best != nullptr ? *best : DeviceSpec{};
  spec.model = gpu.name + note;
  if (gpu.memory_bytes > 0) spec.memory_bytes = gpu.memory_bytes;
  return spec;
}

struct NvLinkGen {
  LinkKind kind;
  Gbps per_link_gbps;  // per direction
};

NvLinkGen NvLinkOf(const DetectedGpu& gpu) {
  switch (gpu.cc_major) {
    case 6: return {LinkKind::kNvLink1, 20};
    case 7: return {LinkKind::kNvLink2, 25};
    case 8: return {LinkKind::kNvLink3, 25};
    case 9: return {LinkKind::kNvLink4, 25};
    default: return gpu.cc_major >= 10 ? NvLinkGen{LinkKind::kNvLink5, 50}
                                       : NvLinkGen{LinkKind::kNvLink2, 25};
  }
}

// Per direction, nominal: 8 GT/s (gen3) with 128b/130b coding is 0.985 GB/s a lane.
Gbps PcieGbps(int gen, int width) {
  const double lane = gen >= 5 ? 3.938 : gen == 4 ? 1.969 : gen == 3 ? 0.985 : 0.5;
  return lane * width;
}

LinkKind PcieKind(int gen) {
  return gen >= 5 ? LinkKind::kPcie5 : gen == 4 ? LinkKind::kPcie4 : LinkKind::kPcie3;
}

}  // namespace

std::string CanonicalPciBusId(const std::string& bus_id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4)
    return bus_id;
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain & 0xffffu, bus, device, function);
  return out;
}

Topology BuildDetectedTopology(const DetectedMachine& machine) {
  if (machine.gpus.empty()) throw Error("no CUDA device: the machine has no GPU", ErrorKind::kRuntime);
  Topology t;
  const std::string model = machine.gpus.front().name;
  t.name = "detected";
  t.description = std::to_string(machine.gpus.size()) + " x " + model + " (this machine)";
  std::map<std::string, int> by_bus;
  for (std::size_t g = 0; g < machine.gpus.size(); ++g) {
    Node node;
    node.name = "gpu" + std::to_string(g);
    node.kind = NodeKind::kGpu;
    node.device = FiguresOf(machine.gpus[g]);
    t.gpus.push_back(static_cast<std::int32_t>(t.nodes.size()));
    by_bus[CanonicalPciBusId(machine.gpus[g].pci_bus_id)] = static_cast<int>(t.nodes.size());
    t.nodes.push_back(node);
  }
  Node cpu;
  cpu.name = "cpu0";
  cpu.kind = NodeKind::kCpu;
  const int cpu_id = static_cast<int>(t.nodes.size());
  t.nodes.push_back(cpu);
  for (std::size_t g = 0; g < machine.gpus.size(); ++g) {
    const DetectedGpu& gpu = machine.gpus[g];
    const int gen = gpu.pcie_gen > 0 ? gpu.pcie_gen : 4;
    const int width = gpu.pcie_width > 0 ? gpu.pcie_width : 16;
    Link link;
    link.a = t.gpus[g];
    link.b = cpu_id;
    link.kind = PcieKind(gen);
    link.gbps = PcieGbps(gen, width);
    link.lanes = width;
    link.latency_ns = DefaultLinkLatencyNs(link.kind, NodeKind::kGpu, NodeKind::kCpu);
    t.links.push_back(link);
  }
  // NVLinks: count links per remote end; a GPU pair is counted from its
  // lower-numbered side.
  int switch_id = -1;
  for (std::size_t g = 0; g < machine.gpus.size(); ++g) {
    const DetectedGpu& gpu = machine.gpus[g];
    std::map<int, int> count;  // remote node -> links
    for (const std::string& remote : gpu.nvlink_remotes) {
      if (remote == "nvswitch") {
        if (switch_id < 0) {
          Node sw;
          sw.name = "nvswitch";
          sw.kind = NodeKind::kNvSwitch;
          switch_id = static_cast<int>(t.nodes.size());
          t.nodes.push_back(sw);
        }
        ++count[switch_id];
        continue;
      }
      const auto it = by_bus.find(CanonicalPciBusId(remote));
      if (it == by_bus.end() || it->second <= t.gpus[g]) continue;  // not ours, or counted
      ++count[it->second];
    }
    const NvLinkGen gen = NvLinkOf(gpu);
    for (const auto& [remote, links] : count) {
      Link link;
      link.a = t.gpus[g];
      link.b = remote;
      link.kind = gen.kind;
      link.lanes = links;
      link.gbps = gen.per_link_gbps * links;
      link.latency_ns = DefaultLinkLatencyNs(gen.kind, NodeKind::kGpu, t.nodes[remote].kind);
      t.links.push_back(link);
    }
  }
  ValidateTopology(t);
  return t;
}

std::string FormatDetectedMachine(const DetectedMachine& m) {
  std::string out = "# Detected " + std::to_string(m.gpus.size()) + " GPU" +
                    (m.gpus.size() == 1 ? "" : "s") + " (CUDA runtime" +
                    (m.nvml ? " + NVML" : "; NVML not available: NVLinks not read") + ")\n";
  for (std::size_t g = 0; g < m.gpus.size(); ++g) {
    const DetectedGpu& gpu = m.gpus[g];
    out += "  GPU" + std::to_string(g) + "  " + gpu.name + "  bus " + gpu.pci_bus_id + "  sm_" +
           std::to_string(gpu.cc_major) + std::to_string(gpu.cc_minor);
    if (gpu.pcie_gen > 0)
      out += "  PCIe gen" + std::to_string(gpu.pcie_gen) + " x" + std::to_string(gpu.pcie_width);
    if (m.nvml) out += "  NVLinks " + std::to_string(gpu.nvlink_remotes.size());
    out += "\n";
  }
  if (m.gpus.size() > 1) {
    out += "\nPeer access (P2P performance rank; 0 is best, - none):\n      ";
    for (std::size_t b = 0; b < m.gpus.size(); ++b) out += " GPU" + std::to_string(b);
    out += "\n";
    for (std::size_t a = 0; a < m.gpus.size(); ++a) {
      out += "  GPU" + std::to_string(a);
      for (std::size_t b = 0; b < m.gpus.size(); ++b) {
        std::string cell = a == b ? "X"
                           : m.peer_access[a][b] ? std::to_string(m.p2p_rank[a][b])
                                                 : "-";
        out += std::string(5 - std::min<std::size_t>(cell.size(), 4), ' ') + cell;
      }
      out += "\n";
    }
  }
  if (!m.notes.empty()) out += "\nNotes: " + m.notes + "\n";
  return out;
}

void SetMachineProbe(MachineProbe probe) { g_probe.store(probe); }

DetectedMachine DetectMachine() {
  const MachineProbe probe = g_probe.load();
  if (probe == nullptr)
    throw Error("no CUDA device: this build has no CUDA backend (configure with the CUDA "
                "toolkit installed, SHARDLAB_WITH_CUDA=ON)",
                ErrorKind::kRuntime);
  return probe();
}

TopologyChoice ChooseTopology(const std::string& given, bool real_hardware) {
  TopologyChoice choice;
  if (!given.empty() || !real_hardware) {
    choice.name = given.empty() ? kDefaultSimTopology : given;
    choice.topology = LoadTopology(choice.name);
    return choice;
  }
  choice.topology = BuildDetectedTopology(DetectMachine());
  choice.name = kDetectedTopologyName;
  choice.detected = true;
  return choice;
}

}  // namespace shardlab
