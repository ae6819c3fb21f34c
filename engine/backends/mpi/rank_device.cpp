#include "engine/backends/mpi/rank_device.h"

#include <algorithm>
#include <string_view>

#include "engine/core/error.h"

namespace shardlab {

GpuTransferPath ChooseGpuTransferPath(bool compiled_cuda_aware, int runtime_query,
                                      const char* override_text, std::string& why) {
  const bool aware = compiled_cuda_aware && runtime_query == 1;
  const std::string_view wanted = override_text != nullptr ? override_text : "";
  if (wanted == "staged") {
    why = "SHARDLAB_MPI_GPU_TRANSFER=staged";
    return GpuTransferPath::kStagedPinned;
  }
  if (wanted == "direct") {
    if (!aware)
      throw Error("SHARDLAB_MPI_GPU_TRANSFER=direct: this MPI library is not CUDA-aware" +
                      std::string(compiled_cuda_aware ? " at run time (MPIX_Query_cuda_support "
                                                        "returned 0)"
                                                      : " (built without CUDA support)") +
                      "; leave the variable unset to stage through pinned host memory",
                  ErrorKind::kInvalidInput);
    why = "SHARDLAB_MPI_GPU_TRANSFER=direct";
    return GpuTransferPath::kDeviceDirect;
  }
  if (!wanted.empty())
    throw Error("SHARDLAB_MPI_GPU_TRANSFER: '" + std::string(wanted) +
                    "' is not a transfer path (staged or direct)",
                ErrorKind::kInvalidInput);
  if (aware) {
    why = "the MPI library is CUDA-aware";
    return GpuTransferPath::kDeviceDirect;
  }
  why = compiled_cuda_aware ? "the MPI library was built CUDA-aware but says no at run time"
                            : "the MPI library is not CUDA-aware";
  return GpuTransferPath::kStagedPinned;
}

std::string DescribeGpuRun(int rank, int gpu, int gpu_count, const std::string& gpu_name,
                           GpuTransferPath path, const std::string& why) {
  std::string line = "rank " + std::to_string(rank) + " on GPU " + std::to_string(gpu) + " of " +
                     std::to_string(gpu_count);
  if (!gpu_name.empty()) line += " (" + gpu_name + ")";
  line += path == GpuTransferPath::kDeviceDirect
              ? "; transfers pass device pointers to MPI"
              : "; transfers staged through pinned host memory";
  if (!why.empty()) line += " (" + why + ")";
  return line;
}

int GpuForLocalRank(int local_rank, int gpu_count) {
  return gpu_count > 0 && local_rank >= 0 ? local_rank % gpu_count : 0;
}

std::string DescribeSharedGpu(const std::vector<GpuIdentity>& per_rank) {
  for (std::size_t a = 0; a < per_rank.size(); ++a) {
    if (per_rank[a].bus_id.empty()) continue;
    for (std::size_t b = a + 1; b < per_rank.size(); ++b)
      if (per_rank[b].bus_id == per_rank[a].bus_id && per_rank[b].host == per_rank[a].host)
        return "ranks " + std::to_string(a) + " and " + std::to_string(b) + " both hold GPU " +
               per_rank[a].bus_id + " on host " + per_rank[a].host;
  }
  return "";
}

TimeNs DeviceEventHostNs(double reference_host_ns, float elapsed_ms) {
  return reference_host_ns + static_cast<double>(elapsed_ms) * 1e6;
}

double ReferenceHostNs(double last_not_ready_ns, double ready_ns) {
  return last_not_ready_ns + (ready_ns - last_not_ready_ns) / 2;
}

DeviceTimes HostOpTimes(double started_ns, double finished_ns, double latest_dep_end_ns) {
  DeviceTimes times;
  times.start_ns = std::max(started_ns, latest_dep_end_ns);
  times.end_ns = std::max(finished_ns, times.start_ns);
  return times;
}

namespace {
std::function<std::unique_ptr<RankDevice>()>& Factory() {
  static std::function<std::unique_ptr<RankDevice>()> factory;
  return factory;
}
}  // namespace

void SetRankDeviceFactory(std::function<std::unique_ptr<RankDevice>()> factory) {
  Factory() = std::move(factory);
}

std::unique_ptr<RankDevice> CreateRankDevice() {
  if (!Factory())
    throw Error("--device gpu: this build has no CUDA for the mpi backend (configure with the "
                "CUDA toolkit and MPI, SHARDLAB_WITH_CUDA and SHARDLAB_WITH_MPI AUTO or ON)",
                ErrorKind::kRuntime);
  return Factory()();
}

}  // namespace shardlab
