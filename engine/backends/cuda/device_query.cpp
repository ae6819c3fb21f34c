// The machine probe behind `topo --detect`: the CUDA runtime for devices
// and peer access; NVML, loaded with dlopen when present (this toolkit
// ships no nvml.h, so the few functions and the one struct used are
// declared here), for NVLink state, the far end of each link and PCIe.
#include <dlfcn.h>

#include <cstring>

#include "engine/backends/cuda/cuda_backend.h"
#include "engine/backends/cuda/cuda_check.h"
#include "engine/topology/detect.h"

namespace shardlab::cuda {
namespace {

using NvmlReturn = int;  // nvmlReturn_t; 0 = NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr unsigned kNvmlMaxLinks = 18;   // NVML_NVLINK_MAX_LINKS (H100)
constexpr unsigned kNvmlDeviceTypeSwitch = 2;  // NVML_NVLINK_DEVICE_TYPE_SWITCH

// nvmlPciInfo_t (NVML >= 2.285), with room to spare at the end.
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
  char spare[64];
};

struct Nvml {
  void* lib = nullptr;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*link_state)(NvmlDevice, unsigned, int*) = nullptr;
  NvmlReturn (*remote_pci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
  NvmlReturn (*remote_type)(NvmlDevice, unsigned, unsigned*) = nullptr;  // optional
  NvmlReturn (*pcie_gen)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*pcie_width)(NvmlDevice, unsigned*) = nullptr;

  template <typename F>
  bool Load(F& fn, const char* name) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
  }

  // Empty when NVML is usable, else why not.
  std::string Open() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return "libnvidia-ml.so.1 not found";
    const bool ok = Load(init, "nvmlInit_v2") && Load(shutdown, "nvmlShutdown") &&
                    Load(by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2") &&
                    Load(link_state, "nvmlDeviceGetNvLinkState") &&
                    Load(remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2") &&
                    Load(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration") &&
                    Load(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
    Load(remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    if (!ok) return "libnvidia-ml.so.1 lacks a needed function";
    if (init() != kNvmlSuccess) {
      init = nullptr;
      return "nvmlInit failed";
    }
    return "";
  }

  ~Nvml() {
    if (init != nullptr && shutdown != nullptr) shutdown();
    if (lib != nullptr) dlclose(lib);
  }
};

void ReadNvml(Nvml& nvml, DetectedGpu& gpu) {
  NvmlDevice dev = nullptr;
  if (nvml.by_bus_id(gpu.pci_bus_id.c_str(), &dev) != kNvmlSuccess) return;
  unsigned value = 0;
  if (nvml.pcie_gen(dev, &value) == kNvmlSuccess) gpu.pcie_gen = static_cast<int>(value);
  if (nvml.pcie_width(dev, &value) == kNvmlSuccess) gpu.pcie_width = static_cast<int>(value);
  for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
    int active = 0;
    if (nvml.link_state(dev, link, &active) != kNvmlSuccess || !active) continue;
    unsigned type = 0;
    if (nvml.remote_type != nullptr && nvml.remote_type(dev, link, &type) == kNvmlSuccess &&
        type == kNvmlDeviceTypeSwitch) {
      gpu.nvlink_remotes.push_back("nvswitch");
      continue;
    }
    NvmlPciInfo pci;
    std::memset(&pci, 0, sizeof pci);
    if (nvml.remote_pci(dev, link, &pci) != kNvmlSuccess) continue;
    pci.bus_id[sizeof pci.bus_id - 1] = '\0';
    gpu.nvlink_remotes.push_back(pci.bus_id);
  }
}

DetectedMachine QueryCudaMachine() {
  const int count = CudaDeviceCountOrThrow();
  DetectedMachine m;
  for (int g = 0; g < count; ++g) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, g), -1);
    DetectedGpu gpu;
    gpu.name = prop.name;
    gpu.memory_bytes = static_cast<Bytes>(prop.totalGlobalMem);
    gpu.cc_major = prop.major;
    gpu.cc_minor = prop.minor;
    char bus[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, g), -1);
    gpu.pci_bus_id = bus;
    m.gpus.push_back(gpu);
  }
  m.peer_access.assign(static_cast<std::size_t>(count), std::vector<int>(count, 0));
  m.p2p_rank.assign(static_cast<std::size_t>(count), std::vector<int>(count, 0));
  for (int a = 0; a < count; ++a) {
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b), -1);
      m.peer_access[a][b] = can;
      if (can) {
        int rank = 0;
        CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b), -1);
        m.p2p_rank[a][b] = rank;
      }
    }
  }
  Nvml nvml;
  const std::string why = nvml.Open();
  if (why.empty()) {
    m.nvml = true;
    for (DetectedGpu& gpu : m.gpus) ReadNvml(nvml, gpu);
  } else {
    m.notes = "NVML: " + why + " (NVLinks unknown; each GPU is drawn on PCIe gen4 x16)";
  }
  return m;
}

}  // namespace

void InstallCudaMachineProbe() { SetMachineProbe(&QueryCudaMachine); }

}  // namespace shardlab::cuda
