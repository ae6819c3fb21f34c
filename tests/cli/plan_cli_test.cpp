// `shardlab-cli plan` end to end: the issue's command prints a ranked table
// and the rejected layouts by reason, says its times are analytic, prints
// the same top choice every time, and turns each bad flag into one line
// with exit code 2.
#include <gtest/gtest.h>

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

const std::vector<std::string> kIssueRun = {"plan", "--model",    "gpt3-175b",       "--ranks",
                                            "512",  "--topology", "64x-dgx-a100-ib", "--gpu-memory",
                                            "80G"};

TEST(PlanCli, IssueCommandPrintsRankedLayoutsAndRejections) {
  TempDir dir;
  const ProgramResult r = RunCli(kIssueRun, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(kIssueRun, r);
  for (const char* part :
       {"# ShardLab planner: gpt3-175b (174.6B parameters: 96 layers, hidden 12288, 96 heads, "
        "seq 2048) on 512 GPUs of 64x-dgx-a100-ib",
        "80.0 GiB per GPU, 90% usable (72.0 GiB)", "step times: analytic model",
        "#  rank    dp   pp   tp zero  b     m  v  recompute   step(s)",
        "# Rejected: ", "tp does not divide the heads", "pp does not divide the layers",
        "tp group crosses a node", "dp 32 pp 1 tp 16: tp 16 > 8 GPUs per node", "out of memory"}) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << r.out;
  }
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(PlanCli, JsonTopChoiceIsTheSameEveryRunAndFits) {
  TempDir dir;
  std::vector<std::string> args = kIssueRun;
  args.insert(args.end(), {"--top", "3", "--json"});
  const ProgramResult first = RunCli(args, dir);
  const ProgramResult second = RunCli(args, dir);
  ASSERT_EQ(first.exit_code, 0) << Describe(args, first);
  EXPECT_EQ(first.out, second.out);
  const Json j = ParseJson(first.out);
  EXPECT_EQ(j["time_model"].text, "analytic");
  ASSERT_EQ(j["feasible"].items.size(), 3u);
  const Json& best = j["feasible"].items[0];
  EXPECT_EQ(best["dp"].number * best["pp"].number * best["tp"].number, 512);
  EXPECT_LE(best["tp"].number, 8);
  EXPECT_LE(best["memory"]["total_bytes"].number, j["usable_memory_bytes"].number);
  EXPECT_LE(best["step_s"].number, j["feasible"].items[1]["step_s"].number);
  EXPECT_GT(j["rejected_by_reason"]["out of memory"].number, 0);
  EXPECT_FALSE(j.Has("rejected"));  // only with --show-rejected
}

TEST(PlanCli, SmallerGpusRejectMoreForMemory) {
  TempDir dir;
  auto oom = [&](const std::string& memory) {
    std::vector<std::string> args = kIssueRun;
    args.back() = memory;
    args.push_back("--json");
    const ProgramResult r = RunCli(args, dir);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    return ParseJson(r.out)["rejected_by_reason"]["out of memory"].number;
  };
  EXPECT_GT(oom("40G"), oom("80G"));
}

TEST(PlanCli, BadFlagsAreOneLineWithExitTwo) {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"plan", "--model", "gpt5"},
       "--model: unknown preset 'gpt5' (gpt3-175b, gpt3-13b, gpt3-1.3b or llama-7b-ish)"},
      {{"plan", "--ranks", "500"},
       "--ranks: 500 is not a whole number of 8-GPU nodes (try 496 or 504)"},
      {{"plan", "--ranks", "1024"},
       "--ranks: 1024 is more than the 512 GPUs of topology '64x-dgx-a100-ib'"},
      {{"plan", "--topology", "9x-dgx-z100"},
       "--topology: '9x-dgx-z100' is neither a topology preset"},
      {{"plan", "--recompute", "some"}, "--recompute: 'some' is not a recomputation mode"},
      {{"plan", "--efficiency", "2"}, "--efficiency: '2' is not a fraction in (0, 1]"},
      {{"plan", "--gpu-memory", "lots"}, "--gpu-memory: "},
  };
  for (const Case& c : cases) {
    const ProgramResult r = RunCli(c.args, dir);
    EXPECT_EQ(r.exit_code, 2) << Describe(c.args, r);
    EXPECT_TRUE(Contains(r.err, "shardlab-cli: error: " + c.message)) << Describe(c.args, r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(PlanCli, SimulateRunsTheTopLayoutsOnTheSimulator) {
  TempDir dir;
  const std::vector<std::string> args = {"plan",     "--model",      "gpt3-1.3b", "--topology",
                                         "dgx-a100", "--top",        "3",         "--simulate",
                                         "3",        "--interleave", "1,2",       "--zero-stage",
                                         "0,1",      "--recompute",  "none"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.out, "# Simulated: the timing-only 3D step of the top 3")) << r.out;
  const std::size_t block = r.out.find("# Simulated:");
  const std::size_t rows = r.out.find("sim MFU\n", block);
  ASSERT_NE(rows, std::string::npos) << r.out;
  const std::string table = r.out.substr(rows, r.out.find("# Rejected", rows) - rows);
  EXPECT_EQ(std::count(table.begin(), table.end(), '%'), 3) << table;  // all three ran
  const ProgramResult bad = RunCli({"plan", "--simulate", "0"}, dir);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "--simulate: must be at least 1 (got 0)")) << bad.err;
}

TEST(PlanCli, TopoPrintsTheSuperPod) {
  TempDir dir;
  const std::vector<std::string> args = {"topo", "--preset", "4x-dgx-h100-superpod", "--ranks",
                                         "16"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  // GPUs of different boxes reach each other over NVLink (NV18, not NET),
  // through the 4 box uplinks of 72 NVLink4 lanes.
  EXPECT_TRUE(Contains(r.out, "GPU8   NV18")) << r.out.substr(0, 2000);
  EXPECT_TRUE(Contains(r.out, "NVLink4 x72     1800 GB/s")) << r.out;
  const ProgramResult list = RunCli({"topo", "--list"}, dir);
  EXPECT_TRUE(Contains(list.out, "32x-dgx-h100-superpod"));
  EXPECT_TRUE(Contains(list.out, "<N>x-dgx-h100-superpod"));
}

}  // namespace
}  // namespace shardlab
