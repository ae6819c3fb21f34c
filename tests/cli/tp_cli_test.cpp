// `shardlab-cli run tp-LAYER` and `sweep tp-LAYER` end to end: a real small
// run of every layer is correct, the paper-scale MLP has the seed text's two
// all-reduces of 1.6 GB, the sweep's efficiency collapses where the group
// crosses InfiniBand, and each kind of bad input is one line with exit 2.
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

/// 32 tokens x 12288 hidden x 2 B (fp16) x 2048 seq x 32 batch: the seed's 1.6 GB.
constexpr double kPaperTensorBytes = 32.0 * 2048 * 12288 * 2;

const std::vector<std::string> kPaperRun = {"run",    "tp-mlp", "--tp",     "8",
                                            "--batch", "32",    "--seq",    "2048",
                                            "--hidden", "12288", "--topology", "dgx-a100",
                                            "--dtype",  "fp16",  "--timing-only"};

TEST(TpCli, EveryLayerRunsSmallAndEqualsTheSingleDeviceLayer) {
  TempDir dir;
  for (const char* layer : {"tp-column", "tp-row", "tp-mlp", "tp-attention", "tp-transformer"}) {
    const std::vector<std::string> args = {"run", layer, "--json"};
    const ProgramResult r = RunCli(args, dir);
    ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
    const Json j = ParseJson(r.out);
    EXPECT_EQ(j["tp"].number, 2) << layer;
    EXPECT_EQ(j["dtype"].text, "fp32") << layer;
    EXPECT_FALSE(j["timing_only"].boolean) << layer;
    EXPECT_TRUE(j["checked"].boolean) << layer;
    EXPECT_EQ(j["correct"].type, Json::Type::kBool) << layer;
    EXPECT_TRUE(j["correct"].boolean) << layer;
    EXPECT_LT(j["output_error"].number, 1e-4) << layer;
    EXPECT_LT(j["gradient_error"].number, 1e-4) << layer;
    EXPECT_GT(j["blocks_checked"].number, 0) << layer;
    EXPECT_FALSE(j["collectives"].items.empty()) << layer;
  }
}

TEST(TpCli, TextReportSaysCorrectForAPlainRun) {
  TempDir dir;
  const std::vector<std::string> args = {"run", "tp-mlp"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.out, "tensor-parallel MLP")) << r.out;
  EXPECT_TRUE(Contains(r.out, "tp 2, fp32, sequence parallelism off, on dgx-a100")) << r.out;
  EXPECT_TRUE(Contains(r.out, "forward   all-reduce")) << r.out;
  EXPECT_TRUE(Contains(r.out, "backward  all-reduce")) << r.out;
  EXPECT_TRUE(Contains(r.out, "# comm share")) << r.out;
  EXPECT_TRUE(Contains(r.out, "# Result: correct: forward and every gradient within their error bounds of "
                              "the single-device layer in double (max error "))
      << r.out;
}

TEST(TpCli, SequenceParallelismTurnsEachAllReduceIntoAReduceScatterAndAnAllGather) {
  TempDir dir;
  const std::vector<std::string> args = {"run",     "tp-transformer", "--tp", "4", "--hidden",
                                         "128",     "--heads",        "8",    "--sequence-parallel",
                                         "--json"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const Json j = ParseJson(r.out);
  EXPECT_TRUE(j["sequence_parallel"].boolean);
  EXPECT_TRUE(j["correct"].boolean);
  EXPECT_EQ(j["forward_allreduces"].number, 2);
  EXPECT_EQ(j["backward_allreduces"].number, 2);
  int scatters = 0, gathers = 0;
  for (const Json& c : j["collectives"].items) {
    scatters += c["kind"].text == "reduce-scatter";
    gathers += c["kind"].text == "all-gather";
    EXPECT_NE(c["kind"].text, "all-reduce");
  }
  EXPECT_EQ(scatters, 4);
  EXPECT_EQ(gathers, 4);
}

TEST(TpCli, PaperScaleMlpHasOneForwardAndOneBackwardAllReduceOfTheWholeActivation) {
  TempDir dir;
  std::vector<std::string> args = kPaperRun;
  args.push_back("--json");
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const Json j = ParseJson(r.out);
  EXPECT_EQ(j["dtype"].text, "fp16");  // as asked: --dtype fp16 (the default is fp32)
  EXPECT_FALSE(j["checked"].boolean);
  EXPECT_EQ(j["correct"].type, Json::Type::kNull);
  EXPECT_TRUE(Contains(j["not_checked_reason"].text, "timing only"));
  const std::vector<Json>& collectives = j["collectives"].items;
  ASSERT_EQ(collectives.size(), 2u);
  EXPECT_EQ(collectives[0]["pass"].text, "forward");
  EXPECT_EQ(collectives[1]["pass"].text, "backward");
  for (const Json& c : collectives) {
    EXPECT_EQ(c["kind"].text, "all-reduce");
    EXPECT_EQ(c["tensor_bytes"].number, kPaperTensorBytes);  // 1,610,612,736
    // A ring all-reduce sends 2(n-1)/n of the tensor from every rank.
    EXPECT_EQ(c["sent_per_rank_bytes"].number, kPaperTensorBytes * 2 * 7 / 8);
    EXPECT_GT(c["time_us"].number, 0);
  }
  EXPECT_EQ(j["forward_allreduces"].number, 1);
  EXPECT_EQ(j["backward_allreduces"].number, 1);
  EXPECT_GT(j["comm_share"].number, 0);
  EXPECT_LT(j["comm_share"].number, 1);
  EXPECT_NEAR(j["comm_share"].number, j["comm_us"].number / j["step_time_us"].number, 1e-6);
  // The estimate rides a GPU's 300 GB/s egress; the seed's 600 GB/s halves it.
  const Json& e = j["estimate"];
  EXPECT_EQ(e["tensor_bytes"].number, kPaperTensorBytes);
  EXPECT_EQ(e["bandwidth_gbps"].number, 300);
  EXPECT_EQ(e["seed_bandwidth_gbps"].number, 600);
  const double beta_us = 2.0 * 7 / 8 * kPaperTensorBytes / 300e9 * 1e6;  // ~9.4 ms
  EXPECT_NEAR(e["allreduce_us"].number, beta_us, 0.01 * beta_us);
  EXPECT_NEAR(e["seed_allreduce_us"].number, beta_us / 2, 0.01 * beta_us);
  EXPECT_NEAR(e["simulated_allreduce_us"].number, e["allreduce_us"].number,
              0.05 * e["allreduce_us"].number);
}

TEST(TpCli, PaperScaleTextShowsTheTableAndTheHonestBandwidthLine) {
  TempDir dir;
  const ProgramResult r = RunCli(kPaperRun, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(kPaperRun, r);
  EXPECT_TRUE(Contains(r.out, "tp 8, fp16, sequence parallelism off, on dgx-a100")) << r.out;
  EXPECT_TRUE(Contains(r.out, "T = batch 32 x seq 2048 = 65536 tokens, hidden H 12288")) << r.out;
  EXPECT_TRUE(Contains(r.out, "1610612736     2818572288")) << r.out;
  EXPECT_TRUE(Contains(r.out, "ring all-reduce of the 1.61 GB tensor")) << r.out;
  EXPECT_TRUE(Contains(r.out, "NVLink3's two directions added")) << r.out;
  EXPECT_TRUE(Contains(r.out, "at B = 300 GB/s: 9.41 ms")) << r.out;
  EXPECT_TRUE(Contains(r.out, "# Result: not checked: timing only")) << r.out;
}

TEST(TpCli, TraceWritesAChromeTrace) {
  TempDir dir;
  const std::string path = (dir.path() / "tp.json").string();
  const std::vector<std::string> args = {"run", "tp-attention", "--trace", path};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.out, "# Trace: " + path)) << r.out;
  const Json t = ParseJson(test_util::ReadWholeFile(path));
  EXPECT_FALSE(t["traceEvents"].items.empty());
}

TEST(TpSweepCli, EfficiencyCollapsesWhenTheGroupCrossesInfiniBand) {
  TempDir dir;
  const std::vector<std::string> args = {"sweep",    "tp-mlp", "--tp",     "2,4,8,16",
                                         "--batch",  "32",     "--seq",    "2048",
                                         "--hidden", "12288",  "--topology", "2x-dgx-a100-ib",
                                         "--json"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const Json j = ParseJson(r.out);
  EXPECT_TRUE(j["timing_only"].boolean);
  const std::vector<Json>& rows = j["rows"].items;
  ASSERT_EQ(rows.size(), 4u);
  const int tps[] = {2, 4, 8, 16};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["tp"].number, tps[i]);
    EXPECT_EQ(rows[i]["crosses_nodes"].boolean, tps[i] == 16) << tps[i];
    EXPECT_EQ(rows[i]["hosts"].number, tps[i] == 16 ? 2 : 1) << tps[i];
    EXPECT_GT(rows[i]["comm_share"].number, 0) << tps[i];
    EXPECT_LT(rows[i]["comm_share"].number, 1) << tps[i];
    EXPECT_GT(rows[i]["speedup"].number, 1) << tps[i];
    EXPECT_NEAR(rows[i]["efficiency"].number, rows[i]["speedup"].number / tps[i], 1e-6);
  }
  EXPECT_LT(rows[3]["efficiency"].number, rows[2]["efficiency"].number);
  EXPECT_GT(rows[3]["comm_share"].number, rows[2]["comm_share"].number);
  EXPECT_EQ(rows[2]["ring_bandwidth_gbps"].number, 300);
  EXPECT_EQ(rows[3]["ring_bandwidth_gbps"].number, 25);
  EXPECT_GT(j["single_device_us"].number, 0);
}

TEST(TpSweepCli, TextMarksTheInfiniBandRowAndStatesTheCollapse) {
  TempDir dir;
  const std::vector<std::string> args = {"sweep", "tp-mlp"};  // the defaults are the issue's
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.out, "on 2x-dgx-a100-ib (16 GPUs, 2 hosts), timing only")) << r.out;
  std::string ib_row;
  int ib_rows = 0;
  for (std::size_t begin = 0; begin < r.out.size();) {
    const std::size_t end = std::min(r.out.find('\n', begin), r.out.size());
    const std::string line = r.out.substr(begin, end - begin);
    if (line.size() > 4 && line.compare(line.size() - 4, 4, "  IB") == 0) {
      ib_row = line;
      ++ib_rows;
    }
    begin = end + 1;
  }
  EXPECT_EQ(ib_rows, 1) << r.out;
  EXPECT_EQ(ib_row.rfind("     16      2", 0), 0u) << ib_row;
  EXPECT_TRUE(Contains(r.out, "# Efficiency falls from 0.")) << r.out;
  EXPECT_TRUE(Contains(r.out, "at N = 8 (one host, ring at 300 GB/s)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "at N = 16 (2 hosts, ring at 25 GB/s)")) << r.out;
}

TEST(TpCli, BadInputGetsOneLineNamingTheFlag) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "tp-mlp", "--tp", "3", "--hidden", "64"},
       "--hidden: 256 inner (ffn) features do not split evenly over tp 3"},
      {{"run", "tp-attention", "--heads", "6", "--tp", "4"}, "--heads: 6 heads do not divide"},
      {{"run", "tp-attention", "--heads", "6", "--tp", "4", "--hidden", "96"},
       "--heads: 6 heads do not split evenly over tp 4"},
      {{"run", "tp-mlp", "--dtype", "fp16"}, "--dtype: fp16 runs are timing-only"},
      {{"run", "tp-mlp", "--tp", "16"},
       "--tp: 16 ranks but topology 'dgx-a100' has only 8 GPUs"},
      {{"run", "tp-mlp", "--tp", "2,4"}, "--tp: one size per run"},
      {{"run", "tp-mlp", "--tp", "0"}, "--tp: must be at least 1 (got 0)"},
      {{"run", "tp-mlp", "--dtype", "int8"}, "--dtype: unknown type 'int8'"},
      {{"run", "tp-mlp", "--heads", "4"}, "--heads: the mlp layer has no attention heads"},
      {{"run", "tp-column", "--sequence-parallel"}, "--sequence-parallel: applies to the mlp"},
      {{"run", "tp-mlp", "--batch", "32", "--seq", "2048", "--hidden", "12288"},
       "--batch: a real run of this layer ("},
      {{"run", "tp-conv"}, "run: unknown layer 'tp-conv' (use tp-column, tp-row, tp-mlp"},
      {{"sweep", "tp-mlp", "--tp", "2,x"}, "--tp: must be an integer (got 'x')"},
      {{"sweep", "tp-mlp", "--tp", "2,,4"}, "--tp: expected a list of sizes like 2,4,8,16"},
      {{"sweep", "tp-mlp", "--tp", "4,4"}, "--tp: 4 is listed twice"},
      {{"sweep", "tp-mlp", "--topology", "dgx-a100"},
       "--tp: 16 ranks but topology 'dgx-a100' has only 8 GPUs"},
      {{"sweep", "tp-attention", "--tp", "2,4", "--hidden", "384", "--heads", "6"},
       "--heads: 6 heads do not split evenly over tp 4"},
  };
  for (const auto& [args, expected] : cases) {
    const ProgramResult r = RunCli(args, dir);
    EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
    EXPECT_TRUE(Contains(r.err, "shardlab-cli: error: " + expected)) << Describe(args, r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << Describe(args, r);
    EXPECT_TRUE(r.out.empty()) << Describe(args, r);
  }
}

TEST(TpCli, HelpDescribesBothCommands) {
  TempDir dir;
  const ProgramResult run = RunCli({"run", "tp-mlp", "--help"}, dir);
  ASSERT_EQ(run.exit_code, 0);
  for (const char* word : {"tp-column", "tp-transformer", "--tp N", "--sequence-parallel",
                           "--heads", "--timing-only", "--trace", "2(n-1)/n"}) {
    EXPECT_TRUE(Contains(run.out, word)) << word << "\n" << run.out;
  }
  const ProgramResult sweep = RunCli({"sweep", "tp-mlp", "--help"}, dir);
  ASSERT_EQ(sweep.exit_code, 0);
  for (const char* word : {"--tp LIST", "2,4,8,16", "efficiency", "2x-dgx-a100-ib", "IB"}) {
    EXPECT_TRUE(Contains(sweep.out, word)) << word << "\n" << sweep.out;
  }
  // The collective commands point to the tensor-parallel ones.
  const ProgramResult help = RunCli({"run", "--help"}, dir);
  EXPECT_TRUE(Contains(help.out, "run tp-LAYER")) << help.out;
}

}  // namespace
}  // namespace shardlab
