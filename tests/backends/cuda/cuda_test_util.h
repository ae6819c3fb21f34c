// Helpers of the GPU tests: skip without a device, run a plan on a backend
// and keep its buffers and events.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "engine/backends/cuda/cuda_backend.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"

namespace shardlab::testing {

/// Empty when a device is present, else why not (for GTEST_SKIP).
inline std::string NoDeviceReason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device: cudaGetDeviceCount returned ") + cudaGetErrorName(status);
  }
  if (count == 0) return "no CUDA device: cudaGetDeviceCount returned 0 devices";
  return "";
}

#define SHARDLAB_REQUIRE_GPU()                                                 \
  do {                                                                         \
    const std::string reason = ::shardlab::testing::NoDeviceReason();          \
    if (!reason.empty()) GTEST_SKIP() << reason;                               \
  } while (0)

struct PlanRun {
  std::vector<std::vector<float>> buffers;
  std::vector<Event> events;
};

inline std::unique_ptr<Backend> MakeBackend(const std::string& name) {
  return name == "cuda" ? CreateCudaBackend() : CreateBackend(name);
}

inline PlanRun RunPlan(const std::string& backend, const Plan& plan, const Topology& topology,
                       RunOptions options = {}) {
  Executor ex(MakeBackend(backend), plan, topology, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  PlanRun run;
  run.events = sink.events;
  for (BufferId id = 0; id < static_cast<BufferId>(plan.buffers.size()); ++id) {
    const std::span<const float> data = ex.backend().BufferData(id);
    run.buffers.emplace_back(data.begin(), data.end());
  }
  return run;
}

}  // namespace shardlab::testing
