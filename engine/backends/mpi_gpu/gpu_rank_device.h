// The mpi backend's --device gpu: a RankDevice that keeps one rank's
// buffers on this process's GPU (float32, as the CUDA backend) and runs its
// ops there with the CUDA backend's kernels and cuBLAS (device_ops.h), one
// stream per lane, each op between two CUDA events. See
// engine/backends/mpi/rank_device.h for how the mpi backend drives it.
#pragma once

#include <memory>

#include "engine/backends/mpi/rank_device.h"

namespace shardlab {

std::unique_ptr<RankDevice> CreateGpuRankDevice();

/// Installs CreateGpuRankDevice as the mpi backend's device (front ends
/// that link shardlab_mpi_gpu call it once, beside RegisterCudaBackend).
void RegisterMpiGpuDevice();

}  // namespace shardlab
