// Device profiles: what `shardlab-cli calibrate` measured on a real GPU, in
// a small TOML file that the simulator can take instead of a preset's GPU
// figures (`--device-profile FILE`), so that a simulated and a measured run
// of the same plan can be laid over each other on one timeline.
//
//   # shardlab device profile (shardlab-cli calibrate)
//   [device]
//   model = "NVIDIA H100 80GB HBM3"
//   fp32_tflops = 51.0        # sgemm, 4096^3
//   fp16_tflops = 610.0       # half GEMM with float accumulation, 8192^3
//   memory_gbps = 2950.0      # as the simulator counts it: 2 x bytes / copy time
//   memory_bytes = 85045379072
//   [overheads]               # measured; the model of this machine (--topology this)
//                             # charges kernel_launch_ns + 2 x event_record_ns per op
//   kernel_launch_ns = 2300.0
//   event_record_ns = 900.0
//   graph_node_ns = 1700.0    # a CUDA graph's dependent node, end to next start
//   [measured]                # the raw numbers, for reading
//   d2d_copy_gbps = 1475.0    # bytes copied / time
//
// Only [device] changes what the simulator computes (and [overheads], in the
// model of this machine); every key but model
// is optional there and replaces the preset's figure when present.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/topology/topology.h"

namespace shardlab {

struct DeviceProfile {
  std::string model;
  std::optional<double> fp32_tflops;
  std::optional<double> fp16_tflops;
  std::optional<Gbps> memory_gbps;
  std::optional<Bytes> memory_bytes;
  std::optional<double> kernel_launch_ns;
  std::optional<double> event_record_ns;
  /// In a replayed CUDA graph: from a kernel node's end to the start of the
  /// node that depends on it (the GPU resolving the edge and launching).
  std::optional<double> graph_node_ns;
  std::optional<Gbps> d2d_copy_gbps;
};

/// Parses profile text; every problem is an Error "path:line: field: message".
DeviceProfile ParseDeviceProfile(const std::string& text, const std::string& path_for_errors);
/// Reads and parses a file (size-checked, as every TOML file here).
DeviceProfile LoadDeviceProfile(const std::string& path);
/// The file text of a profile (reads back to the same values).
std::string FormatDeviceProfile(const DeviceProfile& profile);

/// Every GPU of `topology` takes the profile's figures (those it has).
void ApplyDeviceProfile(const DeviceProfile& profile, Topology& topology);

}  // namespace shardlab

namespace shardlab {

using DeviceCalibrator = DeviceProfile (*)(int gpu);
/// Installs the measuring function (the CUDA backend does, when linked).
void SetDeviceCalibrator(DeviceCalibrator calibrator);
/// Measures GPU `gpu`; throws Error (kRuntime) "no CUDA device: ..." without
/// a GPU or without a CUDA build.
DeviceProfile CalibrateDevice(int gpu);

}  // namespace shardlab
