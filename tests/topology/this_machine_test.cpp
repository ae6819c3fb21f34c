// The model of the machine that ran: placement, the record a trace keeps
// (written and read back), the topology built from a profile alone.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/core/json_parse.h"
#include "engine/topology/profile_cache.h"
#include "engine/topology/this_machine.h"
#include "tests/topology/profile_cache_test_util.h"

namespace shardlab {
namespace {

DeviceProfile H200() {
  return ParseDeviceProfile(
      "[device]\nmodel = \"NVIDIA H200\"\nfp32_tflops = 51\nfp16_tflops = 887\nmemory_gbps = 4101\n"
      "[overheads]\nkernel_launch_ns = 3580\nevent_record_ns = 841\n",
      "h200.toml");
}

TEST(ThisMachine, VirtualRanksArePlacedAsTheCudaBackendPlacesThem) {
  EXPECT_EQ(VirtualPlacement(8, 1), std::vector<int>(8, 0));
  EXPECT_EQ(VirtualPlacement(5, 2), (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_DOUBLE_EQ(OpIssueNs(H200()), 3580 + 2 * 841);
}

TEST(ThisMachine, TheRecordReadsBackAsWritten) {
  MachineRecord record = MachineFromProfile(H200(), 2, "test");
  record.rank_to_gpu = VirtualPlacement(4, 2);
  std::ostringstream out;
  JsonWriter w(out);
  WriteMachineRecord(w, record);
  const MachineRecord back = ReadMachineRecord(ParseJson(out.str(), "machine"), "t.json: otherData.machine");
  EXPECT_EQ(back.gpu_model, "NVIDIA H200");
  EXPECT_EQ(back.gpus, 2);
  EXPECT_EQ(back.rank_to_gpu, record.rank_to_gpu);
  ASSERT_TRUE(back.profile.has_value());
  EXPECT_DOUBLE_EQ(*back.profile->memory_gbps, 4101);
  EXPECT_DOUBLE_EQ(*back.profile->kernel_launch_ns, 3580);
  EXPECT_EQ(back.how, "test");
  EXPECT_EQ(back.Describe(), "2 NVIDIA H200 (test), 4 ranks as virtual devices (rank r on GPU r mod 2) sharing their GPU's HBM");
}

TEST(ThisMachine, ABadRecordNamesItsField) {
  try {
    ReadMachineRecord(ParseJson(R"({"gpus": 1, "placement": [0, 3]})", "m"), "t.json: otherData.machine");
    FAIL() << "a rank on GPU 3 of 1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: otherData.machine.placement:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReadMachineRecord(ParseJson(R"({"gpus": 0})", "m"), "x"), Error);
}

TEST(ThisMachine, TheTopologyFromAProfileHasItsGpusWithTheProfilesFigures) {
  const Topology one = BuildMachineTopology(MachineFromProfile(H200(), 1, "test"));
  ASSERT_EQ(one.num_gpus(), 1);
  EXPECT_DOUBLE_EQ(one.nodes[static_cast<std::size_t>(one.gpus[0])].device.memory_gbps, 4101);
  EXPECT_EQ(one.nodes[static_cast<std::size_t>(one.gpus[0])].device.model, "NVIDIA H200");
  const Topology four = BuildMachineTopology(MachineFromProfile(H200(), 4, "test"));
  EXPECT_EQ(four.num_gpus(), 4);
  // The plan's topology: one GPU per rank, a symmetric star.
  const Topology plan = VirtualDeviceTopology(MachineFromProfile(H200(), 1, "test"), 8);
  EXPECT_EQ(plan.num_gpus(), 8);
  MachineRecord none;
  none.gpus = 1;
  EXPECT_THROW(BuildMachineTopology(none), Error);  // no profile: says to give one
}

DetectedMachine OneH200() {
  DetectedMachine m;
  DetectedGpu gpu;
  gpu.name = "NVIDIA H200";
  gpu.pci_bus_id = "0000:00:06.0";
  m.gpus.push_back(gpu);
  return m;
}

// The trace's machine record of a measured run: which profile, and what the
// record and the one line on stderr say (no GPU: a counting fake measures).
TEST(MachineRecordProfile, AGivenProfileIsRecordedWithoutCalibrating) {
  const ScratchDir dir("given");
  const std::string file = dir.path + "/h200.toml";
  { std::ofstream(file) << FormatDeviceProfile(H200()); }
  FakeCalibration fake("NVIDIA H200", 1);
  std::vector<std::string> notices;
  const RecordedProfile p = ProfileForMachineRecord("NVIDIA H200", file, dir.path, fake.Function(),
                                                    [&](const std::string& l) { notices.push_back(l); });
  EXPECT_EQ(fake.calls, 0);
  EXPECT_TRUE(notices.empty());
  ASSERT_TRUE(p.profile.has_value());
  EXPECT_DOUBLE_EQ(*p.profile->memory_gbps, 4101);
  EXPECT_EQ(p.how, "profile " + file);
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/profiles"));  // a given file is not cached
  // A bad given file is the usual error, naming its line.
  { std::ofstream(file) << "[device]\nmodel = 3\n"; }
  try {
    ProfileForMachineRecord("NVIDIA H200", file, dir.path, fake.Function(), [](const std::string&) {});
    FAIL() << "a bad --device-profile was recorded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(file + ":2:", 0), 0u) << e.what();
  }
}

TEST(MachineRecordProfile, WithoutOneTheFirstTraceCalibratesOnceWithANotice) {
  const ScratchDir dir("trace");
  FakeCalibration fake("NVIDIA H200", 4101);
  std::vector<std::string> notices;
  auto notice = [&](const std::string& l) { notices.push_back(l); };
  const std::string cached = dir.path + "/profiles/nvidia-h200.toml";
  const RecordedProfile first = ProfileForMachineRecord("NVIDIA H200", "", dir.path, fake.Function(), notice);
  EXPECT_EQ(fake.calls, 1);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0], "calibrating NVIDIA H200 once for the trace's machine record; cached at " + cached);
  EXPECT_EQ(first.how, "calibrated now on GPU 0, cached at " + cached);
  const RecordedProfile second = ProfileForMachineRecord("NVIDIA H200", "", dir.path, fake.Function(), notice);
  EXPECT_EQ(fake.calls, 1);
  EXPECT_EQ(notices.size(), 1u);
  EXPECT_EQ(second.how, "cached profile " + cached);

  // The record a trace keeps, written and read back: a laptop rebuilds the
  // machine from it alone.
  const MachineRecord record = RecordMeasuredMachine(OneH200(), 8, "graph", second);
  std::ostringstream out;
  JsonWriter w(out);
  WriteMachineRecord(w, record);
  const MachineRecord back = ReadMachineRecord(ParseJson(out.str(), "machine"), "t.json: otherData.machine");
  EXPECT_EQ(back.gpu_model, "NVIDIA H200");
  EXPECT_EQ(back.gpus, 1);
  EXPECT_EQ(back.rank_to_gpu, std::vector<int>(8, 0));
  EXPECT_EQ(back.issue, "graph");
  EXPECT_EQ(back.how, "detected; cached profile " + cached);
  ASSERT_TRUE(back.profile.has_value());
  EXPECT_DOUBLE_EQ(*back.profile->memory_gbps, 4101);
  EXPECT_EQ(BuildMachineTopology(back).num_gpus(), 1);
}

TEST(MachineRecordProfile, WithoutACacheFolderTheNoticeDoesNotPromiseOnce) {
  FakeCalibration fake("NVIDIA H200", 4101);
  std::vector<std::string> notices;
  auto notice = [&](const std::string& l) { notices.push_back(l); };
  for (int run = 0; run < 2; ++run) {
    const RecordedProfile p = ProfileForMachineRecord("NVIDIA H200", "", "", fake.Function(), notice);
    ASSERT_TRUE(p.profile.has_value());
  }
  EXPECT_EQ(fake.calls, 2);  // nothing kept it
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_EQ(notices[0].find(" once "), std::string::npos) << notices[0];
  EXPECT_NE(notices[0].find("every such run calibrates again"), std::string::npos) << notices[0];
}

TEST(MachineRecordProfile, WhatFailsAfterTheRunLeavesTheProfileOutAndSaysWhy) {
  const ScratchDir dir("fails");
  std::vector<std::string> notices;
  auto notice = [&](const std::string& l) { notices.push_back(l); };
  // The cache folder cannot be written: the profile is recorded, the notice says it was not cached.
  { std::ofstream(dir.path + "/blocked") << "x"; }
  FakeCalibration fake("NVIDIA H200", 4101);
  const RecordedProfile unwritable =
      ProfileForMachineRecord("NVIDIA H200", "", dir.path + "/blocked", fake.Function(), notice);
  ASSERT_TRUE(unwritable.profile.has_value());
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_EQ(notices[1].rfind("calibrated now on GPU 0, not cached (", 0), 0u) << notices[1];
  // The calibration fails: no profile, and why.
  notices.clear();
  const RecordedProfile failed = ProfileForMachineRecord(
      "NVIDIA H200", "", dir.path, []() -> DeviceProfile { throw Error("no CUDA device: gone", ErrorKind::kRuntime); },
      notice);
  EXPECT_FALSE(failed.profile.has_value());
  EXPECT_EQ(failed.how, "no profile: no CUDA device: gone");
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_EQ(notices[1], "the trace records no device profile: no CUDA device: gone");
  const MachineRecord record = RecordMeasuredMachine(OneH200(), 2, "eager", failed);
  EXPECT_FALSE(record.profile.has_value());
  EXPECT_EQ(record.how, "detected; no profile: no CUDA device: gone");
}

// --topology this with a GPU and no --device-profile: the cache, not a new
// calibration every time (the calibrator is a counting stand-in for the CUDA one).
int g_calibrations = 0;
DeviceProfile CountingCalibrator(int gpu) {
  ++g_calibrations;
  DeviceProfile p;
  p.model = "NVIDIA H200";
  p.memory_gbps = 4101 + gpu;
  p.kernel_launch_ns = 3580;
  return p;
}

TEST(ThisMachine, ADetectedGpuIsCalibratedOnceThenReadFromTheCache) {
  const ScratchDir dir("this");
  const char* before = std::getenv("SHARDLAB_CACHE_DIR");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("SHARDLAB_CACHE_DIR", dir.path.c_str(), 1);
  SetDeviceCalibrator(&CountingCalibrator);
  g_calibrations = 0;
  const MachineRecord first = RecordThisMachine(OneH200(), "", 1);
  const MachineRecord second = RecordThisMachine(OneH200(), "", 1);
  SetDeviceCalibrator(nullptr);
  if (before != nullptr) ::setenv("SHARDLAB_CACHE_DIR", saved.c_str(), 1); else ::unsetenv("SHARDLAB_CACHE_DIR");
  const std::string cached = dir.path + "/profiles/nvidia-h200.toml";
  EXPECT_EQ(g_calibrations, 1);
  EXPECT_EQ(first.how, "detected; calibrated now on GPU 0, cached at " + cached);
  EXPECT_EQ(second.how, "detected; cached profile " + cached);
  ASSERT_TRUE(second.profile.has_value());
  EXPECT_DOUBLE_EQ(*second.profile->memory_gbps, 4101);
  EXPECT_EQ(second.gpu_model, "NVIDIA H200");
}

}  // namespace
}  // namespace shardlab
