// Built-in topologies. Every bandwidth is GB/s per direction (10^9 B/s);
// every latency is one traversal of one link.
//
// Link figures (per x16 PCIe link, per NVLink link):
//
//   NVLink1  20 GB/s   P100: 4 links        (the seed text's "20 GB/s bidirectional"
//   NVLink2  25 GB/s   V100: 6 links         per link is really per direction)
//   NVLink3  25 GB/s   A100: 12 links = 300 GB/s to the NVSwitch fabric
//   NVLink4  25 GB/s   H100: 18 links = 450 GB/s
//   NVLink5  50 GB/s   B200: 18 links = 900 GB/s
//   PCIe3 x16  13 GB/s  (15.75 raw after 128b/130b; ~13 measured for large copies)
//   PCIe4 x16  26 GB/s, PCIe5 x16  52 GB/s (same ~83% efficiency)
//   InfiniBand EDR 100 Gb/s = 12.5, HDR 200 Gb/s = 25, NDR 400 Gb/s = 50 GB/s
//
// The seed texts' "600 GB/s" (A100) and "900 GB/s" (H100) are both directions
// added; a ring sends one way per link, so a GPU's egress is half that. Their
// "any two A100s get 2x25 = 50 GB/s" misreads NVSwitch: with NVSwitch each GPU
// reaches every other with its full NVLink bandwidth, which is why every
// NVSwitch box here is one logical switch node that does not limit traffic.
//
// Latencies (chosen, not measured here): a GPU-to-GPU NVLink route costs
// 0.7 us end to end, direct or through the NVSwitch (0.35 us per GPU-switch
// link), close to what NCCL's low-latency protocol sees; a PCIe hop 0.5 us
// (GPU-switch-GPU = 1 us); a CPU-CPU link 0.4 us; a NIC-to-IB-switch link
// 1 us, so GPU -> NIC -> switch -> NIC -> GPU is about 4 us.
//
// DGX-1 hybrid cube-mesh (V100; nvidia-smi topo -m on a DGX-1V). NV2 pairs
// are two bonded links (50 GB/s); P100 has single links on the same
// 4+4 pattern minus the doubles (4 links per GPU, 20 GB/s each):
//
//        0   1   2   3   4   5   6   7
//    0   X  NV1 NV1 NV2 NV2  -   -   -        quad 0-3    quad 4-7
//    1  NV1  X  NV2 NV1  -  NV2  -   -        0 ─ 1       4 ─ 5
//    2  NV1 NV2  X  NV2  -   -  NV1  -        │ ╳ │       │ ╳ │
//    3  NV2 NV1 NV2  X   -   -   -  NV1       2 ─ 3       6 ─ 7
//    4  NV2  -   -   -   X  NV1 NV1 NV2       and i ─ i+4 between the quads
//    5   -  NV2  -   -  NV1  X  NV2 NV1
//    6   -   -  NV1  -  NV1 NV2  X  NV2       "-": no NVLink; the route crosses
//    7   -   -   -  NV1 NV2 NV1 NV2  X        PCIe, the CPUs and QPI (SYS)
//
// PCIe: two GPUs per PCIe switch, two switches per CPU, as on the real
// machines (DGX-1, DGX A100/H100, HGX B200; DGX-2 likewise with 8 switches).
#include "engine/topology/presets.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/toml.h"
#include "engine/topology/topology_file.h"

namespace shardlab {
namespace {

constexpr Gbps kNvLink1Gbps = 20;  // per link, per direction
constexpr Gbps kNvLink234Gbps = 25;
constexpr Gbps kNvLink5Gbps = 50;
constexpr Gbps kPcie3Gbps = 13;  // x16, effective
constexpr Gbps kPcie4Gbps = 26;
constexpr Gbps kPcie5Gbps = 52;
constexpr Gbps kEdrGbps = 12.5;  // 100 Gb/s
constexpr Gbps kHdrGbps = 25;    // 200 Gb/s
constexpr Gbps kNdrGbps = 50;    // 400 Gb/s
// A link that never limits: the shared-bus model puts the limit on the bus node.
constexpr Gbps kUnlimitedGbps = 1e6;
constexpr int kMaxClusterBoxes = 128;

constexpr Bytes kGiB = Bytes{1} << 30;

struct KnownGpu {
  const char* short_name;
  DeviceSpec spec;
};

// Dense figures from NVIDIA's datasheets (fp16 = tensor cores without sparsity;
// P100 has none, so its fp16 is twice fp32). Memory in GiB, as GPU makers
// count "80 GB".
const std::vector<KnownGpu>& KnownGpus() {
  static const std::vector<KnownGpu> gpus = {
      {"P100", {"P100-SXM2-16GB", 10.6, 21.2, 732, 16 * kGiB}},
      {"V100", {"V100-SXM2-32GB", 15.7, 125, 900, 32 * kGiB}},
      {"V100-SXM3", {"V100-SXM3-32GB", 16.4, 130, 900, 32 * kGiB}},
      {"V100-PCIE", {"V100-PCIE-32GB", 14, 112, 900, 32 * kGiB}},
      {"A100", {"A100-SXM4-80GB", 19.5, 312, 2039, 80 * kGiB}},
      {"A100-40GB", {"A100-SXM4-40GB", 19.5, 312, 1555, 40 * kGiB}},
      {"A100-PCIE", {"A100-PCIE-80GB", 19.5, 312, 1935, 80 * kGiB}},
      {"H100", {"H100-SXM5-80GB", 67, 989, 3350, 80 * kGiB}},
      {"H200", {"H200-SXM-141GB", 67, 989, 4800, 141 * kGiB}},
      // HGX B200 datasheet totals divided by 8 GPUs.
      {"B200", {"B200-SXM-180GB", 75, 2250, 7700, 180 * kGiB}},
      {"RTX-A6000", {"RTX-A6000", 38.7, 154.8, 768, 48 * kGiB}},
      {"RTX-4090", {"RTX-4090", 82.6, 165.2, 1008, 24 * kGiB}},
  };
  return gpus;
}

const DeviceSpec& Gpu(const char* short_name) {
  const DeviceSpec* spec = FindGpuModel(short_name);
  if (spec == nullptr) throw Error(std::string("internal: unknown GPU model ") + short_name);
  return *spec;
}

bool EqualsIgnoringCase(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Adds nodes and links, naming GPUs gpu0, gpu1, ... in rank order.
class Builder {
 public:
  Builder(std::string name, std::string description) {
    topology_.name = std::move(name);
    topology_.description = std::move(description);
  }

  int AddGpu(int host, const DeviceSpec& spec) {
    const int id = AddNode("gpu" + std::to_string(topology_.gpus.size()), NodeKind::kGpu, host);
    topology_.nodes.back().device = spec;
    topology_.gpus.push_back(id);
    return id;
  }

  int AddNode(std::string name, NodeKind kind, int host, Gbps forward_gbps = 0) {
    Node node;
    node.name = std::move(name);
    node.kind = kind;
    node.host = host;
    node.forward_gbps = forward_gbps;
    topology_.nodes.push_back(std::move(node));
    return static_cast<int>(topology_.nodes.size()) - 1;
  }

  // `lanes` bonded links of `gbps_per_lane` each, with the default latency.
  void Connect(int a, int b, LinkKind kind, Gbps gbps_per_lane, int lanes = 1) {
    ConnectWithLatency(a, b, kind, gbps_per_lane * lanes, lanes,
                       DefaultLinkLatencyNs(kind, topology_.nodes[static_cast<std::size_t>(a)].kind,
                                            topology_.nodes[static_cast<std::size_t>(b)].kind));
  }

  void ConnectWithLatency(int a, int b, LinkKind kind, Gbps gbps, int lanes, TimeNs latency_ns) {
    Link link;
    link.a = a;
    link.b = b;
    link.kind = kind;
    link.gbps = gbps;
    link.lanes = lanes;
    link.latency_ns = latency_ns;
    topology_.links.push_back(link);
  }

  int FindNode(const std::string& name) const { return topology_.FindNode(name); }

  void SetOwnNic(int gpu, int nic) { topology_.nodes[static_cast<std::size_t>(gpu)].nic = nic; }

  Topology Finish() {
    ValidateTopology(topology_);
    return std::move(topology_);
  }

 private:
  Topology topology_;
};

// One server with an NVSwitch fabric (DGX-2, DGX A100, DGX H100, HGX B200).
struct SwitchBox {
  const char* gpu_model;
  int gpus;  // 8 or 16
  LinkKind nvlink;
  Gbps nvlink_lane_gbps;
  int nvlink_lanes;  // per GPU, all into the fabric
  LinkKind pcie;
  Gbps pcie_gbps;
  int nics_per_pcie_switch;  // two GPUs share each PCIe switch
  Gbps nic_gbps;
  Gbps cpu_link_gbps;  // between the two sockets
};

// SXM boxes NVIDIA ships: figures from their datasheets.
const SwitchBox kDgx2 = {.gpu_model = "V100-SXM3",
                         .gpus = 16,
                         .nvlink = LinkKind::kNvLink2,
                         .nvlink_lane_gbps = kNvLink234Gbps,
                         .nvlink_lanes = 6,
                         .pcie = LinkKind::kPcie3,
                         .pcie_gbps = kPcie3Gbps,
                         .nics_per_pcie_switch = 1,
                         .nic_gbps = kEdrGbps,
                         .cpu_link_gbps = 62.4};  // 3 UPI x 10.4 GT/s x 2 B (Xeon 8168)
const SwitchBox kDgxA100 = {.gpu_model = "A100",
                            .gpus = 8,
                            .nvlink = LinkKind::kNvLink3,
                            .nvlink_lane_gbps = kNvLink234Gbps,
                            .nvlink_lanes = 12,
                            .pcie = LinkKind::kPcie4,
                            .pcie_gbps = kPcie4Gbps,
                            .nics_per_pcie_switch = 2,
                            .nic_gbps = kHdrGbps,
                            .cpu_link_gbps = 144};  // 4 xGMI x16 at 18 GT/s (EPYC 7742)
const SwitchBox kDgxH100 = {.gpu_model = "H100",
                            .gpus = 8,
                            .nvlink = LinkKind::kNvLink4,
                            .nvlink_lane_gbps = kNvLink234Gbps,
                            .nvlink_lanes = 18,
                            .pcie = LinkKind::kPcie5,
                            .pcie_gbps = kPcie5Gbps,
                            .nics_per_pcie_switch = 2,
                            .nic_gbps = kNdrGbps,
                            .cpu_link_gbps = 128};  // 4 UPI x 16 GT/s x 2 B (Xeon 8480C)
const SwitchBox kHgxB200 = {.gpu_model = "B200",
                            .gpus = 8,
                            .nvlink = LinkKind::kNvLink5,
                            .nvlink_lane_gbps = kNvLink5Gbps,
                            .nvlink_lanes = 18,
                            .pcie = LinkKind::kPcie5,
                            .pcie_gbps = kPcie5Gbps,
                            .nics_per_pcie_switch = 2,
                            .nic_gbps = kNdrGbps,
                            .cpu_link_gbps = 160};  // 4 UPI x 20 GT/s x 2 B (Xeon 8570)

// Adds one box; returns its NICs' node ids. `prefix` keeps names unique in
// clusters ("h3.cpu0"); GPUs are always named by global rank.
std::vector<int> AddSwitchBox(Builder& builder, const SwitchBox& box, int host,
                              const std::string& prefix) {
  const DeviceSpec& spec = Gpu(box.gpu_model);
  std::vector<int> gpus;
  for (int i = 0; i < box.gpus; ++i) gpus.push_back(builder.AddGpu(host, spec));
  const int nvswitch = builder.AddNode(prefix + "nvswitch", NodeKind::kNvSwitch, host);
  for (const int gpu : gpus)
    builder.Connect(gpu, nvswitch, box.nvlink, box.nvlink_lane_gbps, box.nvlink_lanes);

  const int cpu0 = builder.AddNode(prefix + "cpu0", NodeKind::kCpu, host);
  const int cpu1 = builder.AddNode(prefix + "cpu1", NodeKind::kCpu, host);
  builder.Connect(cpu0, cpu1, LinkKind::kUpi, box.cpu_link_gbps);
  const int switches = box.gpus / 2;
  std::vector<int> nics;
  for (int s = 0; s < switches; ++s) {
    const int pcie =
        builder.AddNode(prefix + "pcie" + std::to_string(s), NodeKind::kPcieSwitch, host);
    builder.Connect(pcie, s < switches / 2 ? cpu0 : cpu1, box.pcie, box.pcie_gbps);
    builder.Connect(gpus[static_cast<std::size_t>(2 * s)], pcie, box.pcie, box.pcie_gbps);
    builder.Connect(gpus[static_cast<std::size_t>(2 * s + 1)], pcie, box.pcie, box.pcie_gbps);
    for (int k = 0; k < box.nics_per_pcie_switch; ++k) {
      const int index = s * box.nics_per_pcie_switch + k;
      const int nic = builder.AddNode(prefix + "nic" + std::to_string(index), NodeKind::kNic, host);
      builder.Connect(nic, pcie, box.pcie, box.pcie_gbps);
      nics.push_back(nic);
    }
    // Each GPU's own NIC (its rail) is the one beside it on its PCIe switch:
    // GPU 2s+k gets NIC 2s+k with two NICs per switch; with one, both share it.
    for (int k = 0; k < 2; ++k) {
      const int nic = nics[nics.size() - static_cast<std::size_t>(box.nics_per_pcie_switch) +
                           static_cast<std::size_t>(k % box.nics_per_pcie_switch)];
      builder.SetOwnNic(gpus[static_cast<std::size_t>(2 * s + k)], nic);
    }
  }
  return nics;
}

Topology MakeSwitchBox(const std::string& name, const std::string& description,
                       const SwitchBox& box) {
  Builder builder(name, description);
  AddSwitchBox(builder, box, 0, "");
  return builder.Finish();
}

// `boxes` servers; NIC i of every box is cabled into one IB switch node.
// That node stands for a non-blocking (1:1) fat tree: leaf switches per
// rail and spines above them give every NIC pair a full NIC's bandwidth,
// which one switch node of unlimited forwarding gives too. What the
// collapse loses is only the two extra switch traversals of a cross-leaf
// path (a few hundred ns, far below a collective's bandwidth term); a
// tapered fabric would need real leaf and spine nodes.
void AddIbFabric(Builder& builder, const std::vector<int>& nics, Gbps nic_gbps) {
  // The fabric sits outside every box; by convention it carries host 0.
  const int fabric = builder.AddNode("ib-switch", NodeKind::kNetSwitch, 0);
  for (const int nic : nics) builder.Connect(nic, fabric, LinkKind::kInfiniBand, nic_gbps);
}

// "h3." built in place: see FileError.
std::string HostPrefix(int host) {
  std::string prefix = std::to_string(host);
  prefix.insert(0, 1, 'h');
  prefix += '.';
  return prefix;
}

std::string IbText(const SwitchBox& box) {
  return box.nic_gbps == kNdrGbps ? "NDR 400" : "HDR 200";
}

Topology MakeCluster(const std::string& name, const SwitchBox& box, int boxes, const char* what) {
  Builder builder(name, std::to_string(boxes) + " x " + what + " (" +
                            std::to_string(boxes * box.gpus) + " GPUs), one " + IbText(box) +
                            " Gb/s IB NIC per GPU into a non-blocking fat tree (one switch node)");
  std::vector<int> nics;
  for (int host = 0; host < boxes; ++host) {
    const std::vector<int> box_nics = AddSwitchBox(builder, box, host, HostPrefix(host));
    nics.insert(nics.end(), box_nics.begin(), box_nics.end());
  }
  AddIbFabric(builder, nics, box.nic_gbps);
  return builder.Finish();
}

// DGX H100 SuperPOD with the NVLink Switch System: each box's NVSwitch
// fabric (here its one "nvswitch" node) has 72 NVLink4 ports out of the box
// (18 OSFP cages x 4 links) into external NVLink Switches; up to 32 boxes
// (256 GPUs) form one NVLink domain. Inside a domain every GPU pair gets a
// GPU's whole 18 x 25 = 450 GB/s per direction, but the box's uplink is
// 72 x 25 = 1,800 GB/s against its GPUs' 8 x 450 = 3,600: a 2:1 taper, so
// eight GPUs all sending out of the box get 225 GB/s each. Every box keeps
// its eight NDR NICs on the IB fabric, which joins the domains.
//
//   GPU ─18 x NVLink4─ nvswitch ─72 x NVLink4 (1.8 TB/s)─ nvlink-switch<d>
//                         │                                  (per domain)
//                       NICs ─NDR 50 GB/s─ ib-switch (all domains)
constexpr int kSuperPodDomainBoxes = 32;
constexpr int kSuperPodUplinkLanes = 72;
constexpr TimeNs kNvLinkNetworkHopNs = 150;  // box NVSwitch <-> NVLink Switch, each way

Topology MakeSuperPod(const std::string& name, int boxes) {
  const SwitchBox& box = kDgxH100;
  const int domains = (boxes + kSuperPodDomainBoxes - 1) / kSuperPodDomainBoxes;
  Builder builder(name, std::to_string(boxes) + " x DGX H100 (" +
                            std::to_string(boxes * box.gpus) +
                            " GPUs), NVLink Switch System: 450 GB/s per GPU across boxes in "
                            "domains of up to 32 boxes (1.8 TB/s per box, 2:1), " +
                            (domains > 1 ? std::to_string(domains) + " domains" : "one domain") +
                            ", NDR IB between domains");
  std::vector<int> nics, box_switches;
  for (int host = 0; host < boxes; ++host) {
    const std::string prefix = HostPrefix(host);
    const std::vector<int> box_nics = AddSwitchBox(builder, box, host, prefix);
    nics.insert(nics.end(), box_nics.begin(), box_nics.end());
    box_switches.push_back(builder.FindNode(prefix + "nvswitch"));
  }
  // Switches outside every box carry host 0, as the IB fabric does.
  std::vector<int> domain_switches;
  for (int d = 0; d < domains; ++d) {
    domain_switches.push_back(
        builder.AddNode("nvlink-switch" + std::to_string(d), NodeKind::kNetSwitch, 0));
  }
  for (int host = 0; host < boxes; ++host) {
    builder.ConnectWithLatency(box_switches[static_cast<std::size_t>(host)],
                               domain_switches[static_cast<std::size_t>(host / kSuperPodDomainBoxes)],
                               box.nvlink, kSuperPodUplinkLanes * box.nvlink_lane_gbps,
                               kSuperPodUplinkLanes, kNvLinkNetworkHopNs);
  }
  AddIbFabric(builder, nics, box.nic_gbps);
  return builder.Finish();
}

// DGX-1: the hybrid cube-mesh above, plus PCIe3 switches, two CPUs and QPI.
Topology MakeDgx1(bool volta) {
  Builder builder(volta ? "dgx1-v100" : "dgx1-p100",
                  volta ? "DGX-1V: 8 V100, hybrid cube-mesh of NVLink2 (25 GB/s per link, 6 per "
                          "GPU, some pairs doubled), PCIe3 + QPI elsewhere"
                        : "DGX-1: 8 P100, hybrid cube-mesh of NVLink1 (20 GB/s per link, 4 per "
                          "GPU), PCIe3 + QPI elsewhere");
  const DeviceSpec& spec = Gpu(volta ? "V100" : "P100");
  std::vector<int> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back(builder.AddGpu(0, spec));
  struct Pair {
    int a, b, v100_lanes;
  };
  // Inside each quad all pairs; between the quads i <-> i+4.
  const Pair pairs[] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {1, 2, 2}, {1, 3, 1}, {2, 3, 2},
                        {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2},
                        {0, 4, 2}, {1, 5, 2}, {2, 6, 1}, {3, 7, 1}};
  for (const Pair& p : pairs) {
    if (volta) {
      builder.Connect(gpus[static_cast<std::size_t>(p.a)], gpus[static_cast<std::size_t>(p.b)],
                      LinkKind::kNvLink2, kNvLink234Gbps, p.v100_lanes);
    } else {
      builder.Connect(gpus[static_cast<std::size_t>(p.a)], gpus[static_cast<std::size_t>(p.b)],
                      LinkKind::kNvLink1, kNvLink1Gbps, 1);
    }
  }
  const int cpu0 = builder.AddNode("cpu0", NodeKind::kCpu, 0);
  const int cpu1 = builder.AddNode("cpu1", NodeKind::kCpu, 0);
  builder.Connect(cpu0, cpu1, LinkKind::kUpi, 38.4);  // 2 QPI x 9.6 GT/s x 2 B (E5-2698 v4)
  for (int s = 0; s < 4; ++s) {
    const int pcie = builder.AddNode("pcie" + std::to_string(s), NodeKind::kPcieSwitch, 0);
    builder.Connect(pcie, s < 2 ? cpu0 : cpu1, LinkKind::kPcie3, kPcie3Gbps);
    builder.Connect(gpus[static_cast<std::size_t>(2 * s)], pcie, LinkKind::kPcie3, kPcie3Gbps);
    builder.Connect(gpus[static_cast<std::size_t>(2 * s + 1)], pcie, LinkKind::kPcie3, kPcie3Gbps);
  }
  return builder.Finish();
}

// A 2015-style box: 4 GPUs on one CPU's root complex, which stages every
// peer transfer, so concurrent transfers share its ~13 GB/s.
Topology MakePcieGen3FourGpu() {
  Builder builder("pcie-gen3-4gpu",
                  "4 V100-PCIe behind one CPU; PCIe3 x16 13 GB/s, every transfer shares the "
                  "CPU's 13 GB/s (4 at once get a quarter each)");
  const DeviceSpec& spec = Gpu("V100-PCIE");
  const int cpu = builder.AddNode("cpu0", NodeKind::kCpu, 0, kPcie3Gbps);
  for (int i = 0; i < 4; ++i) {
    const int gpu = builder.AddGpu(0, spec);
    builder.Connect(gpu, cpu, LinkKind::kPcie3, kPcie3Gbps);
  }
  return builder.Finish();
}

// 8 PCIe4 GPUs, 4 per switch, one switch per CPU socket.
Topology MakePcieGen4EightGpu() {
  Builder builder("pcie-gen4-8gpu",
                  "8 A100-PCIe, 4 per PCIe4 switch (26 GB/s), one switch per CPU, UPI between "
                  "the CPUs; no NVLink");
  const DeviceSpec& spec = Gpu("A100-PCIE");
  std::vector<int> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back(builder.AddGpu(0, spec));
  const int cpu0 = builder.AddNode("cpu0", NodeKind::kCpu, 0);
  const int cpu1 = builder.AddNode("cpu1", NodeKind::kCpu, 0);
  builder.Connect(cpu0, cpu1, LinkKind::kUpi, 67.2);  // 3 UPI x 11.2 GT/s x 2 B (Ice Lake)
  for (int s = 0; s < 2; ++s) {
    const int pcie = builder.AddNode("pcie" + std::to_string(s), NodeKind::kPcieSwitch, 0);
    builder.Connect(pcie, s == 0 ? cpu0 : cpu1, LinkKind::kPcie4, kPcie4Gbps);
    for (int k = 0; k < 4; ++k) {
      builder.Connect(gpus[static_cast<std::size_t>(4 * s + k)], pcie, LinkKind::kPcie4,
                      kPcie4Gbps);
    }
  }
  return builder.Finish();
}

enum class ClusterKind { kA100Ib, kH100Ib, kH100SuperPod };

// "<N>x-dgx-a100-ib", "<N>x-dgx-h100-ib", "<N>x-dgx-h100-superpod": N boxes;
// false when `name` is not of that form.
bool ParseClusterName(const std::string& name, int* boxes, ClusterKind* kind) {
  const std::size_t x = name.find("x-dgx-");
  if (x == std::string::npos || x == 0) return false;
  const std::string tail = name.substr(x);
  if (tail == "x-dgx-a100-ib") {
    *kind = ClusterKind::kA100Ib;
  } else if (tail == "x-dgx-h100-ib") {
    *kind = ClusterKind::kH100Ib;
  } else if (tail == "x-dgx-h100-superpod") {
    *kind = ClusterKind::kH100SuperPod;
  } else {
    return false;
  }
  int n = 0;
  const auto result = std::from_chars(name.data(), name.data() + x, n);
  if (result.ec != std::errc() || result.ptr != name.data() + x) return false;
  if (n < 1 || n > kMaxClusterBoxes) {
    throw Error("preset '" + name + "': the number of boxes must be 1.." +
                std::to_string(kMaxClusterBoxes) + " (up to " +
                std::to_string(8 * kMaxClusterBoxes) + " GPUs)");
  }
  *boxes = n;
  return true;
}

std::string PresetNameList() {
  std::string names;
  for (const PresetInfo& info : ListTopologyPresets())
    names += (names.empty() ? "" : ", ") + info.name;
  return names + ", <N>x-dgx-a100-ib, <N>x-dgx-h100-ib, <N>x-dgx-h100-superpod";
}

}  // namespace

const DeviceSpec* FindGpuModel(const std::string& name) {
  for (const KnownGpu& gpu : KnownGpus()) {
    if (EqualsIgnoringCase(name, gpu.short_name) || EqualsIgnoringCase(name, gpu.spec.model))
      return &gpu.spec;
  }
  return nullptr;
}

std::vector<std::string> KnownGpuModelNames() {
  std::vector<std::string> names;
  for (const KnownGpu& gpu : KnownGpus()) names.emplace_back(gpu.short_name);
  return names;
}

TimeNs DefaultLinkLatencyNs(LinkKind kind, NodeKind a, NodeKind b) {
  switch (kind) {
    case LinkKind::kNvLink1:
    case LinkKind::kNvLink2:
    case LinkKind::kNvLink3:
    case LinkKind::kNvLink4:
    case LinkKind::kNvLink5:
      // Half of the 0.7 us GPU-to-GPU figure on each side of a switch.
      return (a == NodeKind::kNvSwitch || b == NodeKind::kNvSwitch) ? 350 : 700;
    case LinkKind::kPcie3:
    case LinkKind::kPcie4:
    case LinkKind::kPcie5: return 500;
    case LinkKind::kUpi: return 400;
    case LinkKind::kInfiniBand: return 1000;
    case LinkKind::kEthernet: return 1500;
  }
  return 0;
}

std::vector<PresetInfo> ListTopologyPresets() {
  return {
      {"pcie-gen3-4gpu",
       "4 V100-PCIe behind one CPU that stages all traffic (PCIe3, 13 GB/s shared)"},
      {"pcie-gen4-8gpu",
       "8 A100-PCIe on two PCIe4 switches (26 GB/s) under two CPUs joined by UPI"},
      {"dgx1-p100", "DGX-1: 8 P100, NVLink1 hybrid cube-mesh (20 GB/s links), PCIe3/QPI elsewhere"},
      {"dgx1-v100", "DGX-1V: 8 V100, NVLink2 hybrid cube-mesh (25 GB/s links, some doubled)"},
      {"dgx2-v100", "DGX-2: 16 V100, NVSwitch, 150 GB/s per GPU to every other GPU"},
      {"dgx-a100", "DGX A100: 8 A100, NVSwitch 300 GB/s per GPU, 8 HDR IB NICs (25 GB/s)"},
      {"dgx-h100", "DGX H100: 8 H100, NVSwitch 450 GB/s per GPU, 8 NDR IB NICs (50 GB/s)"},
      {"hgx-b200", "HGX B200: 8 B200, NVSwitch 900 GB/s per GPU, 8 NDR IB NICs (50 GB/s)"},
      {"2x-dgx-a100-ib", "2 DGX A100 (16 GPUs) over HDR InfiniBand, one 25 GB/s NIC per GPU"},
      {"4x-dgx-h100-ib",
       "4 DGX H100 (32 GPUs) over NDR InfiniBand; any <N>x-dgx-h100-ib, N <= 128"},
      {"128x-dgx-h100-ib", "128 DGX H100 (1,024 GPUs) over NDR InfiniBand, 50 GB/s per GPU"},
      {"64x-dgx-a100-ib", "64 DGX A100 (512 GPUs) over HDR InfiniBand, the planner's example"},
      {"32x-dgx-h100-superpod",
       "32 DGX H100 (256 GPUs) in one NVLink Switch domain: 450 GB/s per GPU across boxes; "
       "any <N>x-dgx-h100-superpod"},
  };
}

Topology MakeTopologyPreset(const std::string& name) {
  if (name == "pcie-gen3-4gpu") return MakePcieGen3FourGpu();
  if (name == "pcie-gen4-8gpu") return MakePcieGen4EightGpu();
  if (name == "dgx1-p100") return MakeDgx1(false);
  if (name == "dgx1-v100") return MakeDgx1(true);
  if (name == "dgx2-v100")
    return MakeSwitchBox(name, "DGX-2: 16 V100, 6 NVLink2 each (150 GB/s) into the NVSwitch fabric",
                         kDgx2);
  if (name == "dgx-a100")
    return MakeSwitchBox(name,
                         "DGX A100: 8 A100, 12 NVLink3 each (300 GB/s) into the NVSwitch fabric, "
                         "8 HDR IB NICs",
                         kDgxA100);
  if (name == "dgx-h100")
    return MakeSwitchBox(name,
                         "DGX H100: 8 H100, 18 NVLink4 each (450 GB/s) into the NVSwitch fabric, "
                         "8 NDR IB NICs",
                         kDgxH100);
  if (name == "hgx-b200")
    return MakeSwitchBox(name,
                         "HGX B200: 8 B200, 18 NVLink5 each (900 GB/s) into the NVSwitch fabric, "
                         "8 NDR IB NICs",
                         kHgxB200);
  int boxes = 0;
  ClusterKind kind{};
  if (ParseClusterName(name, &boxes, &kind)) {
    switch (kind) {
      case ClusterKind::kA100Ib: return MakeCluster(name, kDgxA100, boxes, "DGX A100");
      case ClusterKind::kH100Ib: return MakeCluster(name, kDgxH100, boxes, "DGX H100");
      case ClusterKind::kH100SuperPod: return MakeSuperPod(name, boxes);
    }
  }
  throw Error("unknown topology preset '" + name + "'; known: " + PresetNameList());
}

Topology LoadTopology(const std::string& preset_or_path) {
  int boxes = 0;
  ClusterKind kind{};
  for (const PresetInfo& info : ListTopologyPresets()) {
    if (info.name == preset_or_path) return MakeTopologyPreset(preset_or_path);
  }
  if (ParseClusterName(preset_or_path, &boxes, &kind)) return MakeTopologyPreset(preset_or_path);
  std::error_code ec;
  if (std::filesystem::exists(preset_or_path, ec)) return LoadTopologyFile(preset_or_path);
  // Something that looks like a path was meant as a file: say that it is missing.
  const bool looks_like_path = preset_or_path.find('/') != std::string::npos ||
                               preset_or_path.find('.') != std::string::npos;
  if (looks_like_path) return LoadTopologyFile(preset_or_path);
  throw Error("'" + preset_or_path +
              "' is neither a topology preset nor a file; presets: " + PresetNameList());
}

Topology MakeUniformRing(int gpus, Gbps gbps, TimeNs latency_ns) {
  if (gpus < 1)
    throw Error("a uniform ring needs at least 1 GPU (got " + std::to_string(gpus) + ")");
  if (!(gbps > 0)) throw Error("a uniform ring needs gbps > 0");
  if (!(latency_ns >= 0)) throw Error("a uniform ring needs latency >= 0");
  Builder builder("ring-" + std::to_string(gpus),
                  std::to_string(gpus) + " GPUs in a ring of point-to-point links");
  for (int i = 0; i < gpus; ++i) builder.AddGpu(0, Gpu("A100"));
  // GPU i -- GPU i+1: a ring in rank order uses each link direction once.
  // Two GPUs need one link (it already joins them both ways).
  const int links = gpus == 1 ? 0 : gpus == 2 ? 1 : gpus;
  for (int i = 0; i < links; ++i) {
    builder.ConnectWithLatency(i, (i + 1) % gpus, LinkKind::kNvLink3, gbps, 1, latency_ns);
  }
  return builder.Finish();
}

Topology MakeSharedBus(int gpus, Gbps gbps, TimeNs latency_ns) {
  if (gpus < 1) throw Error("a shared bus needs at least 1 GPU (got " + std::to_string(gpus) + ")");
  if (!(gbps > 0)) throw Error("a shared bus needs gbps > 0");
  if (!(latency_ns >= 0)) throw Error("a shared bus needs latency >= 0");
  Builder builder(
      "bus-" + std::to_string(gpus),
      std::to_string(gpus) + " GPUs on one shared bus of " + TomlNumber(gbps) + " GB/s");
  for (int i = 0; i < gpus; ++i) builder.AddGpu(0, Gpu("A100"));
  // The bus node carries the limit; links never bind. Half the latency on
  // each side, so GPU -> bus -> GPU costs `latency_ns`.
  const int bus = builder.AddNode("bus", NodeKind::kPcieSwitch, 0, gbps);
  for (int i = 0; i < gpus; ++i) {
    builder.ConnectWithLatency(i, bus, LinkKind::kPcie3, kUnlimitedGbps, 16, latency_ns / 2);
  }
  return builder.Finish();
}

}  // namespace shardlab
