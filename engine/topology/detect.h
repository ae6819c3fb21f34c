// Detection of the real machine: `shardlab-cli topo --detect`.
//
//   CUDA runtime (device names, PCI bus ids, peer access, P2P rank)
//   NVML when libnvidia-ml.so.1 loads (NVLink state and remote end, PCIe)
//        │  probe (engine/backends/cuda/device_query.cpp; registered by
//        ▼  RegisterCudaBackend, so the engine itself never links CUDA)
//   DetectedMachine ──► BuildDetectedTopology ──► Topology, printed as the presets
//
// What the graph can and cannot know: NVLinks are exact when NVML reports
// them (GPU to GPU, or to an NVSwitch); without NVML, or for GPUs without
// NVLink, each GPU hangs off one CPU node through PCIe of the generation
// and width NVML reports (gen4 x16 when unknown) — PCIe switches and the
// CPU sockets between them are not discovered.
#pragma once

#include <string>
#include <vector>

#include "engine/topology/topology.h"

namespace shardlab {

struct DetectedGpu {
  std::string name;           // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;     // "0000:3B:00.0"
  Bytes memory_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  int pcie_gen = 0, pcie_width = 0;  // 0: unknown
  /// One entry per active NVLink: the remote end's PCI bus id (a GPU), or
  /// "nvswitch".
  std::vector<std::string> nvlink_remotes;
};

struct DetectedMachine {
  std::vector<DetectedGpu> gpus;
  std::vector<std::vector<int>> peer_access;  // [a][b]: 1 when a can access b
  std::vector<std::vector<int>> p2p_rank;     // cudaDevP2PAttrPerformanceRank (0 best)
  bool nvml = false;
  std::string notes;          // what could not be read, for the printout
};

/// The topology of a detected machine (validated). Pure: testable without a GPU.
Topology BuildDetectedTopology(const DetectedMachine& machine);

/// Peer access and P2P rank as a matrix, and the notes.
std::string FormatDetectedMachine(const DetectedMachine& machine);

/// "0000:3b:00.0" and "00000000:3B:00.0" name the same device: a canonical
/// "dddd:bb:dd.f" (lower case, four-digit domain); the text unchanged when
/// it is not a bus id.
std::string CanonicalPciBusId(const std::string& bus_id);

using MachineProbe = DetectedMachine (*)();
/// Installs the probe (the CUDA backend does, when linked).
void SetMachineProbe(MachineProbe probe);
/// Runs the probe; throws Error (kRuntime) "no CUDA device: ..." without a
/// GPU or without a CUDA build.
DetectedMachine DetectMachine();

/// The machine a run uses: `--topology` as given (a preset or a file), or,
/// when none is given, the one the backend stands for. Real hardware
/// (`real_hardware`: `--backend cuda`) runs on the GPUs it finds: the
/// detected machine, one rank per GPU, so that a 4-GPU workstation runs 4
/// ranks rather than the default preset's 8 as virtual devices. Virtual
/// ranks happen only when a topology with more GPUs is asked for. The
/// simulator keeps the preset dgx-a100.
struct TopologyChoice {
  Topology topology;
  std::string name;        // for reports: the preset, the file, or "this machine (detected)"
  bool detected = false;   // true when it is the detected machine
};

/// Throws what DetectMachine throws when real hardware has no device.
TopologyChoice ChooseTopology(const std::string& given, bool real_hardware);

inline constexpr const char* kDefaultSimTopology = "dgx-a100";
inline constexpr const char* kDetectedTopologyName = "this machine (detected)";

}  // namespace shardlab
