// Built-in topologies with the figures the seed texts teach (per direction).
#pragma once

#include <string>
#include <vector>

#include "engine/topology/topology.h"

namespace shardlab {

struct PresetInfo {
  std::string name;
  std::string description;
};

/// Every preset name with a one-line description, for `topo --list`.
std::vector<PresetInfo> ListTopologyPresets();

/// Builds a preset by name: "dgx-a100", "dgx1-v100", "2x-dgx-a100-ib", and
/// the parametric "<N>x-dgx-a100-ib" / "<N>x-dgx-h100-ib" clusters (IB) and
/// "<N>x-dgx-h100-superpod" (NVLink Switch domains of 32 boxes). Throws
/// shardlab::Error listing the known names when `name` is unknown.
Topology MakeTopologyPreset(const std::string& name);

/// A preset name, or else a path to a topology file.
Topology LoadTopology(const std::string& preset_or_path);

/// N GPUs in a ring of point-to-point links of `gbps` and `latency_ns`
/// (for tests of the cost formulas).
Topology MakeUniformRing(int gpus, Gbps gbps, TimeNs latency_ns);

/// N GPUs on one shared bus of `gbps` (every transfer crosses it).
Topology MakeSharedBus(int gpus, Gbps gbps, TimeNs latency_ns);

/// Figures of a known GPU model by short name ("A100") or full name
/// ("A100-SXM4-80GB"), ignoring case; nullptr when unknown.
const DeviceSpec* FindGpuModel(const std::string& name);

/// The short names FindGpuModel knows, for error messages and help.
std::vector<std::string> KnownGpuModelNames();

/// Latency of one traversal of a link of `kind` between nodes of kinds `a`
/// and `b`, as the presets use it (and topology files default to).
TimeNs DefaultLinkLatencyNs(LinkKind kind, NodeKind a, NodeKind b);

}  // namespace shardlab
