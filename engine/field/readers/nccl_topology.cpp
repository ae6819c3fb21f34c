// `nccl-topology`: NCCL's topology XML (engine/field/nccl_topology_xml.h).
#include <memory>

#include "engine/field/field_reader.h"
#include "engine/field/inspect_text.h"
#include "engine/field/nccl_topology_xml.h"

namespace shardlab {
namespace {

std::string NicKind(const NcclTopoNic& n) {
  if (n.pci_class.rfind("0x0207", 0) == 0) return "InfiniBand";
  if (n.pci_class.rfind("0x0200", 0) == 0) return "Ethernet";
  return "";
}

std::string GpuLine(const NcclTopoGpu& g) {
  std::string line = "GPU " + Pad(g.dev >= 0 ? std::to_string(g.dev) : "-", 3) + Pad(g.busid, 16);
  if (g.sm > 0) line += "sm " + Pad(std::to_string(g.sm), 5);
  if (g.rank >= 0) line += "rank " + Pad(std::to_string(g.rank), 4);
  if (g.pcie_gts > 0) line += "PCIe " + Number(g.pcie_gts) + " GT/s x" + std::to_string(g.pcie_width) + "  ";
  for (const NcclTopoNvlink& l : g.nvlinks) {
    const std::string peer = l.to_nvswitch() ? "NVSwitch" : l.target == g.busid ? "its own busid (as written)" : l.target;
    line += "NVLink x" + std::to_string(l.count) + " to " + peer + "  ";
  }
  if (g.dev < 0) line += "(PCI class only: no model, SM or NVLink given)";
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

std::string NicLine(const NcclTopoNic& n) {
  std::string line = "NIC " + Pad(n.name.empty() ? "-" : n.name, 10) + Pad(n.busid.empty() ? "(on the CPU)" : n.busid, 16);
  if (n.speed_mbps > 0) line += Number(n.speed_mbps / 1000) + " Gb/s  ";
  if (n.port >= 0) line += "port " + std::to_string(n.port) + "  ";
  if (n.gdr >= 0) line += std::string("GPUDirect RDMA ") + (n.gdr ? "yes" : "no") + "  ";
  if (!NicKind(n).empty()) line += NicKind(n) + " (class " + n.pci_class + ")";
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

Inspection Inspect(const FieldFile& file) {
  auto t = std::make_shared<NcclTopology>(ParseNcclTopologyXml(file));
  Inspection out;
  out.summary = Count(static_cast<long>(t->gpus.size()), "GPU") + ", " + Count(static_cast<long>(t->nics.size()), "NIC") +
                ", " + Count(t->numa_nodes(), "NUMA node") + ", " + Count(t->nvlinks(), "NVLink");
  for (const NcclTopoCpu& cpu : t->cpus) {
    out.page += "NUMA node " + std::to_string(cpu.numaid) + ": " + cpu.arch + " " + cpu.vendor + "\n";
    for (const NcclTopoGpu& g : t->gpus)
      if (g.numa == cpu.numaid) out.page += "  " + GpuLine(g) + "\n";
    for (const NcclTopoNic& n : t->nics)
      if (n.numa == cpu.numaid) out.page += "  " + NicLine(n) + "\n";
  }
  out.warnings = t->warnings;
  out.json = [t](JsonWriter& json) {
    json.Field("gpus", static_cast<int>(t->gpus.size()));
    json.Field("nics", static_cast<int>(t->nics.size()));
    json.Field("numa_nodes", t->numa_nodes());
    json.Field("nvlinks", t->nvlinks());
    json.Field("nvlink_lanes", t->nvlink_lanes());
    json.Key("gpu_list");
    json.BeginArray();
    for (const NcclTopoGpu& g : t->gpus) {
      json.BeginObject();
      json.Field("busid", g.busid);
      json.Field("numa", g.numa);
      json.Field("dev", g.dev);
      json.Field("sm", g.sm);
      json.Field("rank", g.rank);
      json.Key("nvlinks");
      json.BeginArray();
      for (const NcclTopoNvlink& l : g.nvlinks) {
        json.BeginObject();
        json.Field("target", l.target);
        json.Field("count", l.count);
        json.Field("tclass", l.tclass);
        json.EndObject();
      }
      json.EndArray();
      json.EndObject();
    }
    json.EndArray();
    json.Key("nic_list");
    json.BeginArray();
    for (const NcclTopoNic& n : t->nics) {
      json.BeginObject();
      json.Field("name", n.name);
      json.Field("busid", n.busid);
      json.Field("numa", n.numa);
      json.Field("speed_gbps", n.speed_mbps / 1000);
      json.Field("gdr", n.gdr);
      json.EndObject();
    }
    json.EndArray();
  };
  return out;
}

}  // namespace

void RegisterFieldReader_nccl_topology() {
  RegisterFieldReader({"nccl-topology", "NCCL topology XML (NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE)",
                       [](std::string_view head) { return LooksLikeNcclTopologyXml(head) ? 10 : 0; }, Inspect});
}

}  // namespace shardlab
