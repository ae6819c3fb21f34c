// The model of the machine that ran: placement, the record a trace keeps
// (written and read back), the topology built from a profile alone.
#include <gtest/gtest.h>

#include <sstream>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/core/json_parse.h"
#include "engine/topology/this_machine.h"

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

}  // namespace
}  // namespace shardlab
