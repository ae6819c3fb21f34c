// The machine view's line for a measured trace whose ranks ran elsewhere
// than the machine drawn (virtual devices on one GPU).
#include <gtest/gtest.h>

#include "app/gui/model/recorded_machine.h"

namespace shardlab::gui {
namespace {

const std::string kRecorded = std::string(SHARDLAB_SOURCE_DIR) + "/bench/results/2026-11-26-h200-merged/traces/ring8-64M.json";
const std::string kUnrecorded = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200-ring8-64M-warm.json";

TEST(RecordedMachine, ATraceOfVirtualRanksSaysWhereItRanAndWhatIsDrawn) {
  const LoadedTrace trace = ReadChromeTraceFile(kRecorded);
  ASSERT_TRUE(trace.machine.has_value());
  ASSERT_EQ(trace.machine->gpus, 1);
  const std::string line = RecordedMachineLine(&trace);
  EXPECT_EQ(line, "measured on " + trace.machine->Describe() + "; drawn: " + trace.topology.name +
                      ", the machine the plan was made for");
  EXPECT_NE(line.find("NVIDIA H200"), std::string::npos) << line;
  EXPECT_NE(line.find("virtual devices"), std::string::npos) << line;
}

TEST(RecordedMachine, NoLineWithoutARecordOrWhenEachRankHadTheGpuDrawn) {
  EXPECT_EQ(RecordedMachineLine(nullptr), "");
  const LoadedTrace old = ReadChromeTraceFile(kUnrecorded);
  ASSERT_FALSE(old.machine.has_value());
  EXPECT_EQ(RecordedMachineLine(&old), "");

  // The same record, made to say that each of the 8 ranks had an H200 of its own.
  LoadedTrace own = ReadChromeTraceFile(kRecorded);
  own.machine->gpus = own.topology.num_gpus();
  own.machine->rank_to_gpu.clear();
  for (int r = 0; r < own.topology.num_gpus(); ++r) own.machine->rank_to_gpu.push_back(r);
  // Measured on H200s while the machine drawn has other GPUs: said.
  const std::string drawn_model =
      own.topology.nodes[static_cast<std::size_t>(own.topology.gpus.front())].device.model;
  ASSERT_FALSE(drawn_model.empty());
  EXPECT_EQ(own.machine->gpu_model.find(drawn_model), std::string::npos);
  EXPECT_NE(RecordedMachineLine(&own), "");
  // The same GPUs as drawn, one rank each: nothing to say.
  own.machine->gpu_model = "NVIDIA " + drawn_model;
  EXPECT_EQ(RecordedMachineLine(&own), "");
  own.machine->rank_to_gpu[0] = 1;  // ranks 0 and 1 swapped: not placed as drawn
  own.machine->rank_to_gpu[1] = 0;
  EXPECT_NE(RecordedMachineLine(&own), "");
}

}  // namespace
}  // namespace shardlab::gui
