// `run COLLECTIVE --critical-path` and the fault switches end to end: the
// path accounts for the whole run and names the straggler's hop; a failed
// rank ends the run with its report (exit 1); a throttled link changes the
// ring; bad switches are one line with exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/common/json_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

using test_util::Json;
using test_util::ParseJson;
using test_util::ProgramResult;
using test_util::Describe;
using test_util::TempDir;

ProgramResult RunCli(const std::vector<std::string>& args) {
  TempDir dir;
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

TEST(FaultsCli, TheCriticalPathOfASlowedRingRunsThroughTheStragglersHop) {
  // dgx-a100: every hop 300 GB/s, so a 4x slower rank 2 is the only slow hop.
  const ProgramResult r = RunCli({"run", "allreduce", "--size", "64M", "--ranks", "4",
                                  "--slow-rank", "2:4", "--critical-path", "--json", "--timing-only"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const Json json = ParseJson(r.out);
  const Json& cp = json["critical_path"];
  const double parts = cp["compute_us"].number + cp["communication_us"].number +
                       cp["link_wait_us"].number + cp["idle_us"].number;
  EXPECT_NEAR(parts, cp["end_us"].number, 1e-3 * cp["end_us"].number);
  EXPECT_EQ(cp["slowest_hop"]["src"].number, 2);
  EXPECT_EQ(cp["slowest_hop"]["dst"].number, 3);
  // The same ring without the straggler is about 4x faster (its chain of
  // 2(n-1) sends all run on rank 2's lane, at a quarter of the speed).
  const ProgramResult base =
      RunCli({"run", "allreduce", "--size", "64M", "--ranks", "4", "--critical-path", "--json", "--timing-only"});
  ASSERT_EQ(base.exit_code, 0) << Describe(base);
  const Json base_json = ParseJson(base.out);
  const double ratio = cp["end_us"].number / base_json["critical_path"]["end_us"].number;
  EXPECT_NEAR(ratio, 4.0, 0.1);
}

TEST(FaultsCli, TheTextReportSplitsThePath) {
  const ProgramResult r = RunCli({"run", "allreduce", "--size", "1M", "--critical-path"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("# critical path: 14 ops to "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("communication"), std::string::npos);
  EXPECT_NE(r.out.find("bounded by rank"), std::string::npos);
}

TEST(FaultsCli, AFailedRankEndsTheRunWithItsReport) {
  const ProgramResult r = RunCli({"run", "allreduce", "--size", "1M", "--fail-rank", "3@4"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find("rank 3 failed at step 4 (fail_rank 3@4) and never joined collective #0"),
            std::string::npos)
      << r.err;
}

TEST(FaultsCli, AThrottledLinkMovesTheAutomaticRing) {
  const ProgramResult base = RunCli({"run", "allreduce", "--topology", "dgx1-v100", "--size", "1M",
                                     "--json"});
  ASSERT_EQ(base.exit_code, 0) << Describe(base);
  const Json base_json = ParseJson(base.out);
  const Json& order = base_json["ring_order"];
  ASSERT_GE(order.items.size(), 2u);
  const std::string hop = std::to_string(static_cast<int>(order.items[0].number)) + "-" +
                          std::to_string(static_cast<int>(order.items[1].number));
  const ProgramResult slowed = RunCli({"run", "allreduce", "--topology", "dgx1-v100", "--size",
                                       "1M", "--throttle-link", hop + ":1", "--json"});
  ASSERT_EQ(slowed.exit_code, 0) << Describe(slowed);
  const Json slowed_json = ParseJson(slowed.out);
  const Json& moved = slowed_json["ring_order"];
  std::vector<double> a, b;
  for (const Json& j : order.items) a.push_back(j.number);
  for (const Json& j : moved.items) b.push_back(j.number);
  EXPECT_NE(a, b) << "the ring still crosses the throttled link " << hop;
}

TEST(FaultsCli, BadSwitchesAreOneLineWithExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--slow-rank", "9:2"}, "--slow-rank: rank 9 is out of range (the run has 8 ranks, 0..7)"},
      {{"--slow-rank", "1:0"}, "--slow-rank: FACTOR must be more than 0 (got 0)"},
      {{"--fail-rank", "3@40"}, "--fail-rank: step 40 is past the run's last step (13)"},
      {{"--throttle-link", "gpu2-gpu5:3"}, "--throttle-link: no link between gpu2 and gpu5 in dgx-a100"},
      {{"--fail-link", "gpu2-nvswitch"}, "--fail-link: 'gpu2-nvswitch' is not A-B@STEP"},
      {{"--backend", "mpi", "--fail-link", "0-1@1"}, "--fail-link: the mpi backend runs real hardware, whose links cannot be broken"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = {"run", "allreduce", "--size", "1K"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProgramResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << "\n" << Describe(r);
    EXPECT_EQ(r.err.rfind("shardlab-cli: error: " + message, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(FaultsCli, APipelinesCriticalPathAccountsForTheStepAndNamesAStage) {
  const ProgramResult r = RunCli({"run", "pipeline", "--schedule", "gpipe", "--stages", "4",
                                  "--microbatches", "8", "--critical-path", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const Json json = ParseJson(r.out);
  const Json& cp = json["critical_path"];
  const double parts = cp["compute_us"].number + cp["communication_us"].number +
                       cp["link_wait_us"].number + cp["idle_us"].number;
  EXPECT_NEAR(parts, cp["end_us"].number, 1e-3 * cp["end_us"].number);
  EXPECT_GE(cp["bounding_rank"].number, 0);
  EXPECT_LT(cp["bounding_rank"].number, 4);
  // GPipe's step: every micro-batch's forward and backward pass through a
  // stage, so the path holds at least m + p - 1 compute ops.
  int compute = 0;
  for (const Json& op : cp["ops"].items) compute += op["kind"].text == "compute";
  EXPECT_GE(compute, 8 + 4 - 1);
}

}  // namespace
}  // namespace shardlab
