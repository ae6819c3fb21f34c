// For the profile cache tests: a scratch folder removed afterwards, and a
// calibration that measures nothing and counts its calls.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>

#include "engine/topology/device_profile.h"

namespace shardlab {

struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string& name) {
    static std::atomic<int> next{0};
    path = (std::filesystem::temp_directory_path() /
            ("shardlab-cache-test-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(next++)))
               .string();
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

struct FakeCalibration {
  std::string model;
  double memory_gbps;
  int calls = 0;
  FakeCalibration(std::string m, double gbps) : model(std::move(m)), memory_gbps(gbps) {}
  std::function<DeviceProfile()> Function() {
    return [this] {
      ++calls;
      DeviceProfile p;
      p.model = model;
      p.memory_gbps = memory_gbps;
      p.fp32_tflops = 51;
      p.kernel_launch_ns = 3580;
      p.event_record_ns = 841;
      return p;
    };
  }
};

}  // namespace shardlab
