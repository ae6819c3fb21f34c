// `shardlab-cli run inference` end to end: the real run is correct with the
// hand count of all-reduces, --batching all prints the three policies on
// the same arrivals, and each kind of bad input is one line with exit 2.
#include <gtest/gtest.h>

#include <fstream>
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

TEST(InferenceCli, TpAndReplicasRunCorrectAndCountTheirAllReduces) {
  TempDir dir;
  const std::vector<std::string> args = {"run", "inference", "--tp", "4", "--replicas", "2", "--batching",
                                         "all", "--requests", "200", "--json"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const Json j = ParseJson(r.out);
  EXPECT_EQ(j["gpus"].number, 8);
  EXPECT_TRUE(j["checked"].boolean);
  EXPECT_TRUE(j["correct"].boolean);
  EXPECT_GT(j["allreduces"].number, 0);
  EXPECT_EQ(j["allreduces"].number, j["allreduces_expected"].number);
  EXPECT_TRUE(j["allreduce_bytes_ok"].boolean);
  ASSERT_EQ(j["policies"].items.size(), 3u);
  EXPECT_EQ(j["policies"].items[0]["policy"].text, "static");
  EXPECT_EQ(j["policies"].items[2]["policy"].text, "continuous");
  EXPECT_LT(j["policies"].items[2]["e2e_p50_ms"].number, j["policies"].items[0]["e2e_p50_ms"].number);
  EXPECT_EQ(j["policies"].items[2]["idle_slot_steps"].number, 0);
}

TEST(InferenceCli, TheTextReportHasItsTables) {
  TempDir dir;
  const std::vector<std::string> args = {"run", "inference", "--tp", "2", "--batching", "all"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  for (const char* part : {"# Real run:", "Result: correct", "# Cost model per step", "decode x1", "prefill x1",
                           "# Serving (timing only)", "static", "dynamic", "continuous", "TTFT p50"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
}

TEST(InferenceCli, BadInputIsOneLineWithExitTwo) {
  TempDir dir;
  {
    std::ofstream bad(dir.path() / "reqs.txt");
    bad << "# arrival_ms prompt output\n0 8 8\n1.5 eight 4\n";
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--tp", "3"}, "--heads: 4 heads do not split evenly over tp 3"},
      {{"--kv-cache", "6M"}, "--kv-cache: request 0 needs"},
      {{"--kv-cache", "1M"}, "--kv-cache: 1 MiB per GPU holds no block"},
      {{"--rate", "-5"}, "--rate: -5 requests/s: the rate must be above 0"},
      {{"--requests-file", (dir.path() / "reqs.txt").string()}, "reqs.txt:3:prompt: 'eight' is not a whole number"},
      {{"--requests-file", "/nonexistent/missing.txt"}, "--requests-file: cannot open '/nonexistent/missing.txt'"},
      {{"--batching", "greedy"}, "--batching: "},
      {{"--pp", "3"}, "--pp: 3 stages for 2 layers"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = {"run", "inference"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProgramResult r = RunCli(args, dir);
    EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
    EXPECT_NE(r.err.find(message), std::string::npos) << Describe(args, r);
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << Describe(args, r);  // one line
  }
}

}  // namespace
}  // namespace shardlab
