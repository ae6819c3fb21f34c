// NCCL's topology XML, as NCCL reads it (NCCL_TOPO_FILE) and writes it
// (NCCL_TOPO_DUMP_FILE), parsed into what it says about the machine.
//
//   <system version="1">
//     <cpu numaid="0" affinity=".." arch="x86_64" vendor="AuthenticAMD" familyid=".." modelid="..">
//       <pci busid="ffff:ff:01.0" class="0x060400" link_speed="16 GT/s" link_width="16">   a bridge
//         <pci busid="0001:00:00.0" class="0x030200" ...>                                   a GPU
//           <gpu dev="0" sm="80" rank="0" gdr="1">
//             <nvlink target="0002:00:00.0" count="12" tclass="0x030200"/>              (tclass 0x068000: NVSwitch)
//           </gpu>
//         </pci>
//         <pci busid="0101:00:00.0" class="0x020700" .../>                                 a NIC, class code only
//       </pci>
//       <nic><net name="mlx5_0" dev="0" speed="100000" port="1" gdr="1" .../></nic>          (speed in Mb/s)
//     </cpu>
//   </system>
//
// What is assumed: a GPU is a <gpu> element or a <pci> of class 0x03xxxx
// (vendor files give only class codes: no model, SM or NVLink); a NIC is a
// <net> element, or a <pci> of class 0x02xxxx with no <net> inside (0x0207:
// InfiniBand, 0x0200: Ethernet); a NUMA node is a <cpu>. `link_speed` comes
// as "16 GT/s", "16.0 GT/s PCIe", "32 GT/s PCIe/s" or "" and is kept as
// written (its number in GT/s beside it). Unknown elements are warned about
// and skipped; <pci> nesting deeper than kMaxXmlDepth is refused.
#pragma once

#include <string>
#include <vector>

#include "engine/field/field_file.h"

namespace shardlab {

struct NcclTopoNvlink {
  std::string target;  // the peer's busid (a GPU, or an NVSwitch such as "fffffff:ff:ff.0")
  int count = 0;       // NVLinks bonded to that peer
  std::string tclass;  // the peer's PCI class: 0x030200 GPU, 0x068000 NVSwitch, ...
  bool to_nvswitch() const { return tclass == "0x068000"; }
};

struct NcclTopoGpu {
  std::string busid;  // of its <pci>
  int numa = -1;      // the numaid of its <cpu>
  int dev = -1;       // <gpu dev>: -1 when the file gives only the PCI class
  int sm = 0;         // compute capability x 10 (80 = A100, 90 = H100, 100 = B200); 0: not given
  int rank = -1;
  int gdr = -1;       // GPUDirect RDMA: 1, 0, or -1 not given
  double pcie_gts = 0;  // link_speed's number (GT/s); 0 when not given
  int pcie_width = 0;
  std::vector<NcclTopoNvlink> nvlinks;
  int line = 0;
};

struct NcclTopoNic {
  std::string name;   // <net name> ("mlx5_0", "eth0"); "" for a class-code-only <pci>
  std::string busid;  // of the <pci> it is in; "" when its <nic> sits under the <cpu>
  int numa = -1;
  int dev = -1;
  double speed_mbps = 0;  // <net speed>, Mb/s; 0 when not given
  int port = -1;
  int gdr = -1;
  std::string pci_class;  // 0x020700 InfiniBand, 0x020000 Ethernet; "" when not given
  int line = 0;
};

struct NcclTopoCpu {
  int numaid = -1;
  std::string arch, vendor, affinity;
  int familyid = -1, modelid = -1;
  int line = 0;
};

struct NcclTopoBridge {
  std::string busid, pci_class;
  int numa = -1;
  int depth = 0;  // 1: directly under a <cpu>
  int line = 0;
};

struct NcclTopology {
  std::string source;
  int version = 0;
  std::vector<NcclTopoCpu> cpus;
  std::vector<NcclTopoGpu> gpus;  // in file order
  std::vector<NcclTopoNic> nics;
  std::vector<NcclTopoBridge> bridges;  // <pci> that are neither GPU nor NIC (switches, host bridges)
  std::vector<std::string> warnings;    // "file:line: ..."

  int numa_nodes() const;
  /// <nvlink> elements (one per GPU and peer).
  int nvlinks() const;
  /// NVLinks in all: the sum of their counts.
  int nvlink_lanes() const;
};

/// Parses the text of `file`; throws Error "file:line[:column]: what".
NcclTopology ParseNcclTopologyXml(const FieldFile& file);

/// Whether `head` (a text's first bytes) is an NCCL topology: its root element is <system>.
bool LooksLikeNcclTopologyXml(std::string_view head);

}  // namespace shardlab
