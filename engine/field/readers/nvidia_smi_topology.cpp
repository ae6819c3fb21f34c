// `nvidia-smi-topology`: `nvidia-smi topo -m` text (engine/field/smi_topology.h).
#include <memory>

#include "engine/field/field_reader.h"
#include "engine/field/inspect_text.h"
#include "engine/field/smi_topology.h"

namespace shardlab {
namespace {

Inspection Inspect(const FieldFile& file) {
  auto t = std::make_shared<SmiTopology>(ParseSmiTopology(file));
  Inspection out;
  out.summary = Count(t->gpus(), "GPU") + ", " + Count(t->nics(), "NIC") + ", " + Count(t->numa_nodes(), "NUMA node") +
                ", " + Count(t->nvlinks(), "NVLink", "NVLinks") + " (GPU pairs joined by NVLink, " +
                Count(t->nvlink_lanes(), "link") + " in all)";
  std::size_t width = 6;
  for (const std::string& d : t->devices) width = std::max(width, d.size() + 2);
  std::string header = Pad("", width);
  for (const std::string& d : t->devices) header += Pad(d, width);
  while (!header.empty() && header.back() == ' ') header.pop_back();
  out.page += header + "\n";
  for (std::size_t r = 0; r < t->devices.size(); ++r) {
    std::string row = Pad(t->devices[r], width);
    for (const std::string& cell : t->matrix[r]) row += Pad(cell, width);
    const std::string numa = t->Affinity(r, "NUMA Affinity");
    if (!numa.empty()) row += "NUMA " + numa;
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out.page += row + "\n";
  }
  for (const auto& [nic, name] : t->nic_legend) out.page += nic + ": " + name + "\n";
  out.page += "(nvidia-smi names no GPU model)\n";
  out.warnings = t->warnings;
  out.json = [t](JsonWriter& json) {
    json.Field("gpus", t->gpus());
    json.Field("nics", t->nics());
    json.Field("numa_nodes", t->numa_nodes());
    json.Field("nvlinks", t->nvlinks());
    json.Field("nvlink_lanes", t->nvlink_lanes());
    json.Key("devices");
    json.BeginArray();
    for (const std::string& d : t->devices) json.String(d);
    json.EndArray();
    json.Key("matrix");
    json.BeginArray();
    for (const auto& row : t->matrix) {
      json.BeginArray();
      for (const std::string& cell : row) json.String(cell);
      json.EndArray();
    }
    json.EndArray();
    json.Key("nic_legend");
    json.BeginObject();
    for (const auto& [nic, name] : t->nic_legend) json.Field(nic, name);
    json.EndObject();
  };
  return out;
}

}  // namespace

void RegisterFieldReader_nvidia_smi_topology() {
  RegisterFieldReader({"nvidia-smi-topology", "nvidia-smi topo -m",
                       [](std::string_view head) { return LooksLikeSmiTopology(head) ? 5 : 0; }, Inspect});
}

}  // namespace shardlab
