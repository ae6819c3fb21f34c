// Device profiles (calibrate's output, the simulator's --device-profile):
// a written profile reads back identical; a profile changes what the
// simulator predicts; every bad input names its file, line and field.
#include <gtest/gtest.h>

#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

DeviceProfile Example() {
  DeviceProfile p;
  p.model = "NVIDIA H100 80GB HBM3";
  p.fp32_tflops = 51.25;
  p.fp16_tflops = 612.5;
  p.memory_gbps = 2950.5;
  p.memory_bytes = 85045379072;
  p.kernel_launch_ns = 2300;
  p.event_record_ns = 850.25;
  p.graph_node_ns = 1674.5;
  p.d2d_copy_gbps = 1475.25;
  return p;
}

TEST(DeviceProfile, AWrittenProfileReadsBackIdentical) {
  const DeviceProfile p = Example();
  const DeviceProfile q = ParseDeviceProfile(FormatDeviceProfile(p), "p.toml");
  EXPECT_EQ(q.model, p.model);
  EXPECT_EQ(q.fp32_tflops, p.fp32_tflops);
  EXPECT_EQ(q.fp16_tflops, p.fp16_tflops);
  EXPECT_EQ(q.memory_gbps, p.memory_gbps);
  EXPECT_EQ(q.memory_bytes, p.memory_bytes);
  EXPECT_EQ(q.kernel_launch_ns, p.kernel_launch_ns);
  EXPECT_EQ(q.event_record_ns, p.event_record_ns);
  EXPECT_EQ(q.graph_node_ns, p.graph_node_ns);
  EXPECT_EQ(q.d2d_copy_gbps, p.d2d_copy_gbps);
}

TEST(DeviceProfile, OnlyTheModelIsRequired) {
  const DeviceProfile p = ParseDeviceProfile("[device]\nmodel = \"X\"\n", "p.toml");
  EXPECT_EQ(p.model, "X");
  EXPECT_FALSE(p.fp32_tflops.has_value());
  Topology t = MakeTopologyPreset("dgx-a100");
  const double before = t.nodes[t.gpus[0]].device.fp16_tflops;
  ApplyDeviceProfile(p, t);
  EXPECT_EQ(t.nodes[t.gpus[0]].device.model, "X");
  EXPECT_EQ(t.nodes[t.gpus[0]].device.fp16_tflops, before);
}

TEST(DeviceProfile, TheSimulatorUsesTheProfilesMemoryBandwidth) {
  // Two ranks on one GPU: the transfer is a device copy, 2 x bytes / memory_gbps.
  Topology t = MakeUniformRing(1, 100, 1000);
  DeviceProfile p;
  p.model = "measured";
  p.memory_gbps = 500;
  ApplyDeviceProfile(p, t);
  CollectiveParams params;
  params.ranks = 2;
  params.count = 1 << 20;
  params.kind = CollectiveKind::kAllGather;
  RunOptions options;
  options.rank_to_gpu = {0, 0};
  options.timing_only = true;
  Executor ex(CreateBackend("sim"), BuildCollective(params), t, options);
  VectorSink sink;
  ex.RunToEnd(sink);
  ASSERT_FALSE(sink.events.empty());
  const Event& e = sink.events.back();
  EXPECT_DOUBLE_EQ(e.duration_ns(), 2.0 * static_cast<double>(e.bytes) / 500.0);
}

void ExpectError(const std::string& text, const std::string& expected) {
  try {
    ParseDeviceProfile(text, "gpu.toml");
    FAIL() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), expected) << text;
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
  }
}

TEST(DeviceProfile, BadInputNamesFileLineAndField) {
  ExpectError("", "gpu.toml: device: missing [device] table");
  ExpectError("[device]\nfp32_tflops = 1\n", "gpu.toml:1: device.model: missing");
  ExpectError("[device]\nmodel = \"X\"\nfp32_tflops = -1\n",
              "gpu.toml:3: device.fp32_tflops: must be a positive finite number (got -1)");
  ExpectError("[device]\nmodel = \"X\"\nfp16_tflops = \"fast\"\n",
              "gpu.toml:3: device.fp16_tflops: expected a number, got a string");
  ExpectError("[device]\nmodel = \"X\"\nmemory_gbps = nan\n",
              "gpu.toml:3: device.memory_gbps: must be a positive finite number (got nan)");
  ExpectError("[device]\nmodel = \"X\"\nmemory_bytes = 1.5\n",
              "gpu.toml:3: device.memory_bytes: expected a positive integer");
  ExpectError("[device]\nmodel = \"X\"\nfp64_tflops = 1\n",
              "gpu.toml:3: device.fp64_tflops: unknown key; expected model, fp32_tflops, "
              "fp16_tflops, memory_gbps, memory_bytes");
  ExpectError("[device]\nmodel = \"X\"\n[gpu]\n",
              "gpu.toml:3: gpu: unknown table; expected [device], [overheads] or [measured]");
  ExpectError("model = \"X\"\n",
              "gpu.toml:1: model: unknown table; expected [device], [overheads] or [measured]");
  ExpectError("[device]\nmodel = 3\n", "gpu.toml:2: device.model: expected a string, got an integer");
  ExpectError("[device\n", "gpu.toml:1: expected ']' to close the table header, found end of line");
}

TEST(DeviceProfile, AMissingFileIsOneError) {
  EXPECT_THROW(LoadDeviceProfile("/nonexistent/gpu.toml"), Error);
}

}  // namespace
}  // namespace shardlab
