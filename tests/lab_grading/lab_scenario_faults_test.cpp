// Faults in a lab's collective: a failed rank stops the ring, and the lab
// reads what stopped (completed 0, the step no op of which ran, the ranks
// left waiting, the ops done) instead of failing to grade; counts checked
// against the ring's schedule (2(N-1) steps, each rank a send and a recv
// per step); a healthy run reports itself complete; a throttled link sets
// the formula's bandwidth.
#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"

namespace shardlab {
namespace {

LabParam Text(const std::string& name, const std::string& value) {
  return {name, LabParamType::kString, value, 0, false, 0};
}
LabParam Number(const std::string& name, double value) {
  return {name, LabParamType::kNumber, "", value, false, 0};
}
LabParam Flag(const std::string& name, bool value) {
  return {name, LabParamType::kBool, "", 0, value, 0};
}

std::vector<LabParam> Ring(int ranks) {
  return {Text("kind", "allreduce"), Text("algo", "ring"), Number("ranks", ranks),
          Text("size", "64M"), Flag("timing_only", true)};
}

TEST(LabScenarioFaults, AHealthyRunIsComplete) {
  const LabValues m = RunLabScenario("collective", Ring(8)).measured;
  EXPECT_EQ(m.at("completed"), 1);
  EXPECT_EQ(m.at("ops_done"), m.at("ops_total"));
  EXPECT_EQ(m.at("stalled_step"), -1);
  EXPECT_EQ(m.at("waiting_ranks"), 0);
  EXPECT_GT(m.at("busbw_gbps"), 0);
}

TEST(LabScenarioFaults, AFailedRankStopsTheRingAndTheLabReadsWhere) {
  constexpr int kRanks = 8, kStep = 3;
  std::vector<LabParam> p = Ring(kRanks);
  p.push_back(Text("fail_rank", "5@" + std::to_string(kStep)));
  const LabRunResult r = RunLabScenario("collective", p);
  const LabValues& m = r.measured;
  EXPECT_EQ(m.at("completed"), 0);
  EXPECT_EQ(m.at("algbw_gbps"), 0);  // it never finished: no bandwidth
  EXPECT_EQ(m.at("busbw_gbps"), 0);
  EXPECT_EQ(m.at("steps"), 2 * (kRanks - 1));
  EXPECT_EQ(m.at("stalled_step"), kStep);
  // The ops of steps before the failure all ran; none of the failed rank's
  // from its step on.
  EXPECT_GE(m.at("ops_done"), kStep * m.at("ops_total") / m.at("steps"));
  EXPECT_LT(m.at("ops_done"), m.at("ops_total"));
  // Every other rank has ring work left: all of them wait.
  EXPECT_EQ(m.at("waiting_ranks"), kRanks - 1);
  EXPECT_GT(m.at("time_us"), 0);
  EXPECT_NE(r.summary.find("rank 5 failed at step 3"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("never joined"), std::string::npos) << r.summary;
}

TEST(LabScenarioFaults, AFailureAtStepZeroDoesNothingAtAll) {
  std::vector<LabParam> p = Ring(4);
  p.push_back(Text("fail_rank", "0@0"));
  const LabValues m = RunLabScenario("collective", p).measured;
  EXPECT_EQ(m.at("completed"), 0);
  EXPECT_EQ(m.at("stalled_step"), 0);
  EXPECT_EQ(m.at("waiting_ranks"), 3);
}

// A throttled NVLink of GPU 3 (a third of its links left: 100 GB/s) is the
// ring's slowest hop; throttled below PCIe, the route takes PCIe (26 GB/s
// on a DGX A100) instead.
TEST(LabScenarioFaults, AThrottledLinkIsTheFormulasBandwidth) {
  std::vector<LabParam> p = Ring(8);
  p.push_back(Text("topology", "dgx-a100"));
  p.push_back(Text("throttle_link", "gpu3-nvswitch:100"));
  const LabValues m = RunLabScenario("collective", p).measured;
  EXPECT_EQ(m.at("completed"), 1);
  EXPECT_DOUBLE_EQ(m.at("formula_bandwidth_gbps"), 100);
  p.push_back(Text("throttle_link", "gpu3-nvswitch:10"));
  EXPECT_DOUBLE_EQ(RunLabScenario("collective", p).measured.at("formula_bandwidth_gbps"), 26);
  std::vector<LabParam> bad = Ring(8);
  bad.push_back(Text("fail_rank", "5@99"));
  EXPECT_THROW(RunLabScenario("collective", bad), Error);
}

}  // namespace
}  // namespace shardlab
