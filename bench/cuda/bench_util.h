// Shared by the GPU benchmarks: a device check that exits cleanly, event
// timing of a stream, and the best of several repetitions.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/backends/cuda/cuda_check.h"
#include "engine/core/error.h"

namespace shardlab::bench {

/// Device count, or prints why there is none and exits 0 (nothing to measure).
inline int RequireDevices(const char* program) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf("%s: no CUDA device (%s); nothing to measure\n", program,
                status != cudaSuccess ? cudaGetErrorName(status) : "0 devices");
    std::exit(0);
  }
  return count;
}

/// The shortest of `repeats` runs of `work` on `stream`, timed by two events, in ns.
template <typename Work>
double BestStreamNs(cudaStream_t stream, int repeats, Work work) {
  cudaEvent_t start, end;
  CUDA_CHECK(cudaEventCreate(&start), -1);
  CUDA_CHECK(cudaEventCreate(&end), -1);
  work();
  CUDA_CHECK(cudaStreamSynchronize(stream), -1);
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventRecord(start, stream), -1);
    work();
    CUDA_CHECK(cudaEventRecord(end, stream), -1);
    CUDA_CHECK(cudaEventSynchronize(end), -1);
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, end), -1);
    best = std::min(best, static_cast<double>(ms) * 1e6);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  return best;
}

inline std::string Size(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3) {
    bytes /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.0f %s", bytes, units[u]);
  return text;
}

}  // namespace shardlab::bench
