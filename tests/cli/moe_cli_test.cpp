// `shardlab-cli run moe` end to end: the default run is correct and its
// all-to-all bytes equal the hand count; the hot skew names rank 0 the
// straggler; drops are counted; the text report has its tables; a trace
// is written; and each kind of bad input is one line with exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/common/json_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

using test_util::Json;
using test_util::ParseJson;
using test_util::ProgramResult;
using test_util::TempDir;

ProgramResult RunCli(const std::vector<std::string>& args, const TempDir& dir) {
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

std::string Describe(const std::vector<std::string>& args, const ProgramResult& r) {
  std::string text = "shardlab-cli";
  for (const std::string& a : args) text += " " + a;
  return text + "\n  exit " + std::to_string(r.exit_code) + "\n  stdout: " + r.out.substr(0, 3000) +
         "\n  stderr: " + r.err;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(MoeCli, DefaultRunIsCorrectAndMatchesTheHandCount) {
  TempDir dir;
  const std::vector<std::string> args = {"run", "moe", "--json"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const Json j = ParseJson(r.out);
  EXPECT_EQ(j["scenario"].text, "moe");
  EXPECT_EQ(j["ranks"].number, 4);
  EXPECT_EQ(j["experts"].number, 8);
  EXPECT_EQ(j["top_k"].number, 2);
  EXPECT_EQ(j["capacity_per_rank"].number, 80);  // ceil(1.25 x 2 x 256 / 8)
  EXPECT_TRUE(j["checked"].boolean);
  EXPECT_TRUE(j["correct"].boolean);
  EXPECT_TRUE(j["bytes_match"].boolean);
  ASSERT_EQ(j["per_rank"].items.size(), 4u);
  double routed = 0, kept = 0;
  for (const Json& e : j["experts_load"].items) {
    routed += e["routed"].number;
    kept += e["kept"].number;
  }
  EXPECT_EQ(routed, 1024 * 2);
  EXPECT_EQ(routed - kept, j["dropped"].number);
  for (const Json& rank : j["per_rank"].items) {
    EXPECT_EQ(rank["dispatch_sent_bytes"].number, rank["expected_dispatch_sent_bytes"].number);
    EXPECT_EQ(rank["combine_received_bytes"].number, rank["dispatch_sent_bytes"].number);
  }
}

TEST(MoeCli, HotSkewNamesRankZeroTheStraggler) {
  TempDir dir;
  const std::vector<std::string> args = {"run", "moe", "--skew", "hot", "--capacity-factor", "4",
                                         "--json"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const Json j = ParseJson(r.out);
  EXPECT_EQ(j["straggler"].number, 0);
  // Expert 0 takes 512 of the 2048 choices, rank 0's other expert about
  // 219: about 731 rows against a mean of 512.
  EXPECT_GT(j["straggler_load"].number, 1.4);
  EXPECT_EQ(j["dropped"].number, 0);
  EXPECT_TRUE(j["correct"].boolean);
}

TEST(MoeCli, TextReportHasItsTablesAndATrace) {
  TempDir dir;
  const std::string path = (dir.path() / "moe.json").string();
  const std::vector<std::string> args = {"run", "moe", "--skew", "hot", "--trace", path};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.out, "expert-parallel MoE, 8 experts over 4 ranks (2 each), top-2"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "# Tokens per expert (capacity 80 per rank, 320 in all")) << r.out;
  EXPECT_TRUE(Contains(r.out, "hand count: every rank's bytes match")) << r.out;
  EXPECT_TRUE(Contains(r.out, "<- straggler")) << r.out;
  EXPECT_TRUE(Contains(r.out, "# straggler     rank 0")) << r.out;
  EXPECT_TRUE(Contains(r.out, "# Result: correct")) << r.out;
  const Json t = ParseJson(test_util::ReadWholeFile(path));
  EXPECT_FALSE(t["traceEvents"].items.empty());
  EXPECT_TRUE(Contains(test_util::ReadWholeFile(path), "\"expert\"")) << "no expert slices";
}

TEST(MoeCli, BadInputGetsOneLineNamingTheFlag) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "moe", "--experts", "6"}, "--experts: 6 experts do not split evenly over 4 ranks"},
      {{"run", "moe", "--top-k", "9"}, "--top-k: must be between 1 and the 8 experts (got 9)"},
      {{"run", "moe", "--capacity-factor", "0"}, "--capacity-factor: must be a number above 0"},
      {{"run", "moe", "--capacity-factor", "-1"}, "--capacity-factor: must be a number above 0"},
      {{"run", "moe", "--capacity-factor", "lots"}, "--capacity-factor: not a number: 'lots'"},
      {{"run", "moe", "--tokens", "10"}, "--tokens: 10 tokens do not split evenly over 4 ranks"},
      {{"run", "moe", "--skew", "tilted"}, "--skew: unknown skew 'tilted'"},
      {{"run", "moe", "--ranks", "16", "--experts", "16"}, "--ranks: 16 ranks but topology"},
  };
  for (const auto& [args, expected] : cases) {
    const ProgramResult r = RunCli(args, dir);
    EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
    EXPECT_TRUE(Contains(r.err, "shardlab-cli: error: " + expected)) << Describe(args, r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << Describe(args, r);
    EXPECT_TRUE(r.out.empty()) << Describe(args, r);
  }
}

}  // namespace
}  // namespace shardlab
