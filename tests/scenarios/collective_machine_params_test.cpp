// The collective scenario's model of one machine's host (on_gpus, issue_us,
// graph_op_us): read from the spec's parameters into the run options the
// simulator uses, checked against the topology, and measured by the lab
// runner as the host lane.
#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"
#include "engine/scenarios/collective_scenario.h"

namespace shardlab {
namespace {

ScenarioParams Params(std::initializer_list<std::pair<const char*, const char*>> values) {
  ScenarioParams p(*FindScenario("collective"));
  for (const auto& [name, text] : values) p.Set(name, text);
  return p;
}

TEST(CollectiveMachineParams, BecomeThePlacementAndHostIssueOfTheRun) {
  const CollectiveScenario sc =
      CollectiveFromParams(Params({{"ranks", "6"}, {"on_gpus", "2"}, {"issue_us", "5.5"}, {"graph_op_us", "1.25"}}));
  EXPECT_EQ(sc.on_gpus, 2);
  EXPECT_DOUBLE_EQ(sc.issue_ns, 5500);
  EXPECT_DOUBLE_EQ(sc.graph_op_ns, 1250);
  const RunOptions o = CollectiveRunOptions(sc);
  ASSERT_EQ(o.rank_to_gpu.size(), 6u);
  for (int r = 0; r < 6; ++r) EXPECT_EQ(o.rank_to_gpu[static_cast<std::size_t>(r)], r % 2);
  EXPECT_TRUE(o.shared_device_memory);
  EXPECT_DOUBLE_EQ(o.op_issue_ns, 5500);
  EXPECT_DOUBLE_EQ(o.graph_op_ns, 1250);
  // The defaults change nothing: rank r on GPU r, no host cost.
  const RunOptions plain = CollectiveRunOptions(CollectiveFromParams(Params({})));
  EXPECT_TRUE(plain.rank_to_gpu.empty());
  EXPECT_FALSE(plain.shared_device_memory);
  EXPECT_EQ(plain.op_issue_ns, 0);
}

TEST(CollectiveMachineParams, MoreGpusThanTheTopologyHasIsRefusedByName) {
  CollectiveScenario sc = CollectiveFromParams(Params({{"topology", "dgx-a100"}, {"on_gpus", "9"}}));
  try {
    CheckCollectiveScenario(sc, LoadScenarioTopology("dgx-a100"));
    FAIL() << "9 GPUs of 8 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("on_gpus: ", 0), 0u) << e.what();
  }
  EXPECT_THROW(Params({{"issue_us", "-1"}}), Error);
}

TEST(CollectiveMachineParams, TheLabRunnerMeasuresTheHostLane) {
  // 4 ranks of 8 bytes: 2(n-1) = 6 steps of 4 transfers, 24 calls of 10 us.
  auto number = [](const char* name, double v) {
    LabParam p;
    p.name = name;
    p.type = LabParamType::kNumber;
    p.number = v;
    return p;
  };
  LabParam topology;
  topology.name = "topology";
  topology.text = "dgx-a100";
  const LabRunResult r =
      RunLabScenario("collective", {number("ranks", 4), number("size", 8), number("issue_us", 10), topology});
  EXPECT_EQ(r.measured.at("host_calls"), 24);
  EXPECT_NEAR(r.measured.at("host_lane_us"), 240, 1e-6);
  EXPECT_GE(r.measured.at("time_us"), 240 - 1e-6);
  EXPECT_NEAR(r.measured.at("host_share"), 240 / r.measured.at("time_us"), 1e-9);
}

}  // namespace
}  // namespace shardlab
