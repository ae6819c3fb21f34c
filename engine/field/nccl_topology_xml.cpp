#include "engine/field/nccl_topology_xml.h"

#include <cstdlib>
#include <set>

#include "engine/core/error.h"
#include "engine/field/xml_document.h"

namespace shardlab {
namespace {

bool ClassIs(const std::string& pci_class, const char* prefix) {
  return pci_class.rfind(prefix, 0) == 0;  // "0x0302..." starts with "0x03"
}

/// "16 GT/s", "16.0 GT/s PCIe", "32 GT/s PCIe/s": the number; 0 for "".
double GtPerSecond(const char* text) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end == text ? 0 : value;
}

class Walker {
 public:
  Walker(const XmlDocument& xml, NcclTopology& out) : xml_(xml), out_(out) {}

  void System(const pugi::xml_node& system) {
    out_.version = XmlInt(xml_, system, "version", 0);
    for (const pugi::xml_node& child : system.children()) {
      if (child.type() != pugi::node_element) continue;
      const std::string name = child.name();
      if (name == "cpu") {
        Cpu(child);
      } else {
        Unfamiliar(child, "system");
      }
    }
  }

 private:
  void Unfamiliar(const pugi::xml_node& node, const char* parent) {
    out_.warnings.push_back(xml_.At(node) + "unfamiliar element <" + node.name() + "> in <" + parent +
                            "> (skipped)");
  }

  void Cpu(const pugi::xml_node& cpu) {
    NcclTopoCpu c;
    c.numaid = XmlInt(xml_, cpu, "numaid", -1);
    c.arch = cpu.attribute("arch").value();
    c.vendor = cpu.attribute("vendor").value();
    c.affinity = cpu.attribute("affinity").value();
    c.familyid = XmlInt(xml_, cpu, "familyid", -1);
    c.modelid = XmlInt(xml_, cpu, "modelid", -1);
    c.line = xml_.LineOf(cpu);
    out_.cpus.push_back(c);
    for (const pugi::xml_node& child : cpu.children()) {
      if (child.type() != pugi::node_element) continue;
      const std::string name = child.name();
      if (name == "pci") {
        Pci(child, c.numaid, 1);
      } else if (name == "nic") {
        Nic(child, c.numaid, "", "");
      } else {
        Unfamiliar(child, "cpu");
      }
    }
  }

  void Pci(const pugi::xml_node& pci, int numa, int depth) {
    if (depth > kMaxXmlDepth) {
      throw Error(xml_.At(pci) + "<pci> nested deeper than " + std::to_string(kMaxXmlDepth) +
                  " levels");
    }
    const std::string busid = pci.attribute("busid").value();
    const std::string pci_class = pci.attribute("class").value();
    pugi::xml_node gpu = pci.child("gpu");
    const bool is_gpu = gpu || ClassIs(pci_class, "0x03");
    const bool is_nic = !is_gpu && (pci.child("nic") || ClassIs(pci_class, "0x02"));
    if (is_gpu) {
      NcclTopoGpu g;
      g.busid = busid;
      g.numa = numa;
      g.pcie_gts = GtPerSecond(pci.attribute("link_speed").value());
      g.pcie_width = XmlInt(xml_, pci, "link_width", 0);
      g.line = xml_.LineOf(pci);
      if (gpu) {
        g.dev = XmlInt(xml_, gpu, "dev", -1);
        g.sm = XmlInt(xml_, gpu, "sm", 0);
        g.rank = XmlInt(xml_, gpu, "rank", -1);
        g.gdr = XmlInt(xml_, gpu, "gdr", -1);
        for (const pugi::xml_node& link : gpu.children()) {
          if (link.type() != pugi::node_element) continue;
          if (std::string(link.name()) != "nvlink") {
            // NCCL 2.19+ writes <c2c> for Grace's chip-to-chip link.
            if (std::string(link.name()) != "c2c") Unfamiliar(link, "gpu");
            continue;
          }
          NcclTopoNvlink n;
          n.target = link.attribute("target").value();
          n.count = XmlInt(xml_, link, "count", 1);
          n.tclass = link.attribute("tclass").value();
          g.nvlinks.push_back(n);
        }
      }
      out_.gpus.push_back(g);
    } else if (!is_nic) {
      out_.bridges.push_back({busid, pci_class, numa, depth, xml_.LineOf(pci)});
    }
    bool nets_inside = false;
    for (const pugi::xml_node& child : pci.children()) {
      if (child.type() != pugi::node_element) continue;
      const std::string name = child.name();
      if (name == "pci") {
        Pci(child, numa, depth + 1);
      } else if (name == "nic") {
        nets_inside = Nic(child, numa, busid, pci_class) || nets_inside;
      } else if (name == "gpu" && is_gpu) {
        continue;  // read above
      } else if (name == "pcilink") {
        continue;  // NCCL 2.12+: a link to a peer PCI switch, no device of its own
      } else {
        Unfamiliar(child, "pci");
      }
    }
    if (is_nic && !nets_inside) {  // a vendor file's class code: the NIC without its <net>
      NcclTopoNic n;
      n.busid = busid;
      n.numa = numa;
      n.pci_class = pci_class;
      n.line = xml_.LineOf(pci);
      out_.nics.push_back(n);
    }
  }

  /// Reads the <net> of a <nic>; true when it had any.
  bool Nic(const pugi::xml_node& nic, int numa, const std::string& busid, const std::string& pci_class) {
    bool any = false;
    for (const pugi::xml_node& net : nic.children()) {
      if (net.type() != pugi::node_element) continue;
      if (std::string(net.name()) != "net") {
        Unfamiliar(net, "nic");
        continue;
      }
      NcclTopoNic n;
      n.name = net.attribute("name").value();
      n.busid = busid;
      n.numa = numa;
      n.dev = XmlInt(xml_, net, "dev", -1);
      n.speed_mbps = XmlDouble(xml_, net, "speed", 0);
      n.port = XmlInt(xml_, net, "port", -1);
      n.gdr = XmlInt(xml_, net, "gdr", -1);
      n.pci_class = pci_class;
      n.line = xml_.LineOf(net);
      out_.nics.push_back(n);
      any = true;
    }
    return any;
  }

  const XmlDocument& xml_;
  NcclTopology& out_;
};

}  // namespace

int NcclTopology::numa_nodes() const {
  std::set<int> ids;
  for (const NcclTopoCpu& c : cpus) ids.insert(c.numaid);
  return static_cast<int>(ids.size());
}

int NcclTopology::nvlinks() const {
  int n = 0;
  for (const NcclTopoGpu& g : gpus) n += static_cast<int>(g.nvlinks.size());
  return n;
}

int NcclTopology::nvlink_lanes() const {
  int n = 0;
  for (const NcclTopoGpu& g : gpus)
    for (const NcclTopoNvlink& l : g.nvlinks) n += l.count;
  return n;
}

bool LooksLikeNcclTopologyXml(std::string_view head) { return XmlRootName(head) == "system"; }

NcclTopology ParseNcclTopologyXml(const FieldFile& file) {
  const XmlDocument xml(file);
  const pugi::xml_node system = xml.root();
  if (std::string(system.name()) != "system") {
    throw Error(xml.At(system) + "the root element is <" + system.name() +
                ">, not NCCL's <system>");
  }
  NcclTopology topology;
  topology.source = file.path;
  Walker(xml, topology).System(system);
  if (topology.cpus.empty()) throw Error(xml.At(system) + "<system> holds no <cpu>");
  return topology;
}

}  // namespace shardlab
