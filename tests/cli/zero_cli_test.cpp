// `shardlab-cli run zero` and `memory` end to end: a small real run of every
// stage trains the same parameters as one device, the 1B-parameter runs
// allocate what the ZeRO paper's formulas say and send 2Ψ or 3Ψ per step,
// `memory` reproduces the paper's 7.5B example, and each kind of bad input
// is one line with exit 2.
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

/// The run: 15 layers x 8192 = 1,006,755,840 parameters on 8 GPUs.
std::vector<std::string> BillionRun(int stage) {
  return {"run", "zero", "--zero-stage", std::to_string(stage), "--ranks", "8", "--params", "1B",
          "--timing-only"};
}

Json RunJson(std::vector<std::string> args, const TempDir& dir) {
  args.push_back("--json");
  const ProgramResult r = RunCli(args, dir);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  return ParseJson(r.out);
}

TEST(ZeroCli, EveryStageRunsSmallAndEqualsTheSingleDeviceModel) {
  TempDir dir;
  for (int stage = 0; stage <= 3; ++stage) {
    const Json j = RunJson({"run", "zero", "--zero-stage", std::to_string(stage)}, dir);
    EXPECT_EQ(j["stage"].number, stage);
    EXPECT_EQ(j["ranks"].number, 4) << stage;
    EXPECT_EQ(j["batch"].number, 32) << stage;  // 8 rows per rank by default
    EXPECT_EQ(j["steps"].number, 2) << stage;
    EXPECT_FALSE(j["timing_only"].boolean) << stage;
    EXPECT_TRUE(j["checked"].boolean) << stage;
    EXPECT_EQ(j["correct"].type, Json::Type::kBool) << stage;
    EXPECT_TRUE(j["correct"].boolean) << stage;
    EXPECT_LT(j["parameter_error"].number, 1e-4) << stage;
    EXPECT_NEAR(j["loss"].number, j["reference_loss"].number,
                1e-4 * j["reference_loss"].number) << stage;
    EXPECT_EQ(j["memory"].items.size(), 4u) << stage;
    EXPECT_EQ(j["not_checked_reason"].type, Json::Type::kNull) << stage;
  }
}

TEST(ZeroCli, TextReportOfASmallRunSaysCorrect) {
  TempDir dir;
  const std::vector<std::string> args = {"run", "zero", "--zero-stage", "2", "--ranks", "2",
                                         "--steps", "3"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  for (const char* part : {
           "# ShardLab: ZeRO-2 (optimizer states and gradients sharded), 2 ranks, on dgx-a100",
           "MLP of 4 layers x 64 = 16.64k parameters (Ψ = 16640)",
           "ranks 0-1",
           "2Ψ + (2+12)Ψ/N = ",
           "formula 2(N-1)/N·Ψ = 16.64k, ratio 1.000",
           "# Result: correct (max error ",
           "of its bound, ",
           "fp32 parameters after 3 Adam steps and the loss against their error bounds from the "
           "double-precision single-device model",
       }) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << r.out;
  }
}

TEST(ZeroCli, StageThreeOfOneBillionParametersMatchesTheFormulas) {
  TempDir dir;
  const Json j = RunJson(BillionRun(3), dir);
  const double psi = j["parameters"].number;
  EXPECT_EQ(psi, 15.0 * (8192.0 * 8192 + 8192));
  EXPECT_EQ(j["asked_parameters"].number, 1e9);
  EXPECT_EQ(j["units"].number, 15);  // one per layer
  EXPECT_FALSE(j["checked"].boolean);
  EXPECT_EQ(j["correct"].type, Json::Type::kNull);
  EXPECT_TRUE(Contains(j["not_checked_reason"].text, "timing only"));

  const Json& f = j["formula"];
  EXPECT_EQ(f["k"].number, 12);
  EXPECT_EQ(f["text"].text, "(4+12)Ψ/N");
  EXPECT_NEAR(f["parameters_bytes"].number, 2 * psi / 8, 1);
  EXPECT_NEAR(f["gradients_bytes"].number, 2 * psi / 8, 1);
  EXPECT_NEAR(f["optimizer_states_bytes"].number, 12 * psi / 8, 1);
  EXPECT_NEAR(j["formula_seed"]["optimizer_states_bytes"].number, 8 * psi / 8, 1);
  ASSERT_EQ(j["memory"].items.size(), 8u);
  for (const Json& m : j["memory"].items) {
    const std::string rank = "rank " + std::to_string(static_cast<int>(m["rank"].number));
    EXPECT_NEAR(m["parameters_bytes"].number / f["parameters_bytes"].number, 1, 1e-3) << rank;
    EXPECT_NEAR(m["gradients_bytes"].number / f["gradients_bytes"].number, 1, 1e-3) << rank;
    EXPECT_NEAR(m["optimizer_states_bytes"].number / f["optimizer_states_bytes"].number, 1, 1e-3)
        << rank;
    // One layer's fp16 parameters are gathered at a time.
    EXPECT_GT(m["gathered_parameters_peak_bytes"].number, 0) << rank;
    EXPECT_GE(m["peak_total_bytes"].number, m["model_states_bytes"].number) << rank;
  }
  const double three_psi = 3.0 * 7 / 8 * psi;
  EXPECT_NEAR(j["formula_elements_per_step"].number, three_psi, 1);
  EXPECT_EQ(j["formula_elements_text"].text, "3(N-1)/N·Ψ");
  EXPECT_NEAR(j["sent_elements_per_step"].number / three_psi, 1, 0.02);
  EXPECT_EQ(j["collectives_per_step"].number, 45);  // 15 layers x (2 all-gathers + 1 reduce-scatter)
  EXPECT_GT(j["step_time_us"].number, 0);
}

TEST(ZeroCli, DataParallelSendsTwoPsiAndHoldsSixteenBytesPerParameter) {
  TempDir dir;
  const Json j = RunJson(BillionRun(0), dir);
  const double psi = j["parameters"].number;
  const double two_psi = 2.0 * 7 / 8 * psi;
  EXPECT_EQ(j["formula_elements_text"].text, "2(N-1)/N·Ψ");
  EXPECT_NEAR(j["sent_elements_per_step"].number / two_psi, 1, 0.02);
  for (const Json& m : j["memory"].items) {
    EXPECT_NEAR(m["parameters_bytes"].number, 2 * psi, 0.001 * psi);
    EXPECT_NEAR(m["gradients_bytes"].number, 2 * psi, 0.001 * psi);
    EXPECT_NEAR(m["optimizer_states_bytes"].number, 12 * psi, 0.001 * psi);
    EXPECT_EQ(m["gathered_parameters_peak_bytes"].number, 0);
  }
  // Stages 1 and 2 send as much as data parallelism and hold less.
  for (int stage = 1; stage <= 2; ++stage) {
    const Json z = RunJson(BillionRun(stage), dir);
    EXPECT_NEAR(z["sent_elements_per_step"].number / two_psi, 1, 0.02) << stage;
    const double model_states = z["memory"].items[0]["model_states_bytes"].number;
    EXPECT_NEAR(model_states / z["formula"]["total_bytes"].number, 1, 1e-3) << stage;
    EXPECT_LT(model_states, 16 * psi / 2) << stage;
  }
}

TEST(ZeroCli, BillionTextShowsTheModelItBuiltAndTheFormulas) {
  TempDir dir;
  const std::vector<std::string> args = BillionRun(3);
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  for (const char* part : {
           "ZeRO-3 (optimizer states, gradients and parameters sharded), 8 ranks",
           "15 layers x 8192 = 1.007B parameters (Ψ = 1006755840, asked 1B)",
           "15 units (one per layer",
           "ranks 0-7",
           "2Ψ/N = 251.7 MB",
           "12Ψ/N = 1.510 GB",
           "(4+12)Ψ/N = 2.014 GB",
           "the seed texts count K = 8",
           "formula 3(N-1)/N·Ψ = 2.643B, ratio 1.00",
           "# Result: not checked: timing only",
       }) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << r.out;
  }
  // --k 8 switches the formula column to the seed texts' count.
  std::vector<std::string> seed = args;
  seed.insert(seed.end(), {"--k", "8"});
  const ProgramResult k8 = RunCli(seed, dir);
  ASSERT_EQ(k8.exit_code, 0) << Describe(seed, k8);
  EXPECT_TRUE(Contains(k8.out, "formula (K = 8)")) << k8.out;
  EXPECT_TRUE(Contains(k8.out, "(4+8)Ψ/N = 1.510 GB with K = 8")) << k8.out;
}

TEST(ZeroCli, TraceWritesAChromeTrace) {
  TempDir dir;
  const std::string path = (dir.path() / "zero.json").string();
  const std::vector<std::string> args = {"run", "zero", "--zero-stage", "1", "--trace", path};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.out, "# Trace: " + path)) << r.out;
  const Json t = ParseJson(test_util::ReadWholeFile(path));
  EXPECT_FALSE(t["traceEvents"].items.empty());
}

// Rajbhandari et al., Figure 1: Ψ = 7.5B on 64 GPUs.
TEST(MemoryCli, ThePapersSevenAndAHalfBillionExample) {
  TempDir dir;
  const Json j = RunJson({"memory", "--params", "7.5B", "--ranks", "64"}, dir);
  EXPECT_EQ(j["parameters"].number, 7.5e9);
  EXPECT_EQ(j["ranks"].number, 64);
  EXPECT_EQ(j["stage"].type, Json::Type::kNull);
  const std::vector<Json>& rows = j["rows"].items;
  ASSERT_EQ(rows.size(), 8u);  // stages 0-3 for K = 12, then for K = 8
  const double paper_gb[] = {120, 31.4, 16.6, 1.875};
  for (int stage = 0; stage < 4; ++stage) {
    const Json& row = rows[static_cast<std::size_t>(stage)];
    EXPECT_EQ(row["stage"].number, stage);
    EXPECT_EQ(row["k"].number, 12);
    EXPECT_NEAR(row["total_bytes"].number / 1e9, paper_gb[stage], stage == 3 ? 0.001 : 0.05) << stage;
    EXPECT_NEAR(row["total_bytes"].number, row["parameters_bytes"].number +
                                               row["gradients_bytes"].number +
                                               row["optimizer_states_bytes"].number, 1);
    EXPECT_EQ(rows[static_cast<std::size_t>(stage) + 4]["k"].number, 8);
  }
  EXPECT_EQ(rows[2]["formula"].text, "2Ψ + (2+12)Ψ/N");

  const Json k8 = RunJson({"memory", "--params", "7.5B", "--ranks", "64", "--k", "8"}, dir);
  ASSERT_EQ(k8["rows"].items.size(), 4u);
  EXPECT_EQ(k8["rows"].items[0]["k"].number, 8);
  EXPECT_NEAR(k8["rows"].items[0]["total_bytes"].number, 12 * 7.5e9, 1);  // the seed texts' 12Ψ
}

TEST(MemoryCli, TextMarksTheAskedStageAndSaysWhatComesOnTop) {
  TempDir dir;
  const std::vector<std::string> args = {"memory", "--params", "175B", "--ranks", "64",
                                         "--zero-stage", "3"};
  const ProgramResult r = RunCli(args, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.out, "Ψ = 175B parameters on N = 64 GPUs")) << r.out;
  EXPECT_TRUE(Contains(r.out, "# K = 12 (the ZeRO paper")) << r.out;
  EXPECT_TRUE(Contains(r.out, "# K = 8 (the seed texts")) << r.out;
  EXPECT_TRUE(Contains(r.out, "activations, temporary buffers")) << r.out;
  std::vector<std::string> marked;
  for (std::size_t begin = 0; begin < r.out.size();) {
    const std::size_t end = std::min(r.out.find('\n', begin), r.out.size());
    const std::string line = r.out.substr(begin, end - begin);
    if (Contains(line, "<- --zero-stage 3")) marked.push_back(line);
    begin = end + 1;
  }
  ASSERT_EQ(marked.size(), 2u) << r.out;
  EXPECT_TRUE(Contains(marked[0], "(4+12)Ψ/N")) << marked[0];
  EXPECT_TRUE(Contains(marked[0], "43.75 GB")) << marked[0];  // 16 x 175e9 / 64
  EXPECT_TRUE(Contains(marked[1], "(4+8)Ψ/N")) << marked[1];
  EXPECT_TRUE(Contains(marked[1], "32.81 GB")) << marked[1];  // 12 x 175e9 / 64
}

TEST(ZeroCli, BadInputGetsOneLineNamingTheFlag) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "zero", "--zero-stage", "4"}, "--zero-stage: must be at most 3 (got 4)"},
      {{"run", "zero", "--bucket", "0"}, "--bucket: must be at least 1 (got 0)"},
      {{"run", "zero", "--batch", "30", "--ranks", "4"},
       "--batch: 30 rows do not split into 4 equal shards"},
      {{"run", "zero", "--ranks", "16", "--topology", "dgx-a100"},
       "--ranks: 16 ranks but topology 'dgx-a100' has only 8 GPUs"},
      {{"run", "zero", "--params", "1X"}, "--params: '1X' is not a parameter count"},
      {{"run", "zero", "--params", "1B"}, "--params: a real run of 1006755840 parameters"},
      {{"run", "zero", "--params", "1B", "--width", "64", "--timing-only"},
       "--params: give either --params or --layers and --width, not both"},
      {{"run", "zero", "--params", "2T", "--timing-only"}, "--params: the nearest MLP (4096 layers"},
      {{"run", "zero", "--width", "4096", "--layers", "64"}, "--width: a real run of"},
      {{"run", "zero", "--k", "10"}, "--k: must be 12"},
      {{"run", "zero", "--lr", "-1"}, "--lr: must be a positive number"},
      {{"run", "zero", "--steps", "0"}, "--steps: must be at least 1 (got 0)"},
      {{"run", "zero", "--no-overlap=yes"}, "--no-overlap"},
      {{"memory", "--zero-stage", "4"}, "--zero-stage: must be at most 3 (got 4)"},
      {{"memory", "--ranks", "0"}, "--ranks: must be at least 1 (got 0)"},
      {{"memory", "--params", "0"}, "--params: must be at least 1 (got 0)"},
      {{"memory", "--params", "-5B"}, "--params: '-5B' is not a parameter count"},
      {{"memory", "--k", "16"}, "--k: must be 12"},
  };
  for (const auto& [args, expected] : cases) {
    const ProgramResult r = RunCli(args, dir);
    EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
    EXPECT_TRUE(Contains(r.err, "shardlab-cli: error: " + expected)) << Describe(args, r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << Describe(args, r);
    EXPECT_TRUE(r.out.empty()) << Describe(args, r);
  }
}

TEST(ZeroCli, HelpDescribesBothCommands) {
  TempDir dir;
  const ProgramResult run = RunCli({"run", "zero", "--help"}, dir);
  ASSERT_EQ(run.exit_code, 0);
  for (const char* word : {"--zero-stage N", "--params COUNT", "--bucket SIZE", "--no-overlap",
                           "--k 8|12", "--timing-only", "--trace", "3(N-1)/N·Ψ",
                           "run zero --zero-stage 3 --ranks 8 --params 1B --timing-only"}) {
    EXPECT_TRUE(Contains(run.out, word)) << word << "\n" << run.out;
  }
  const ProgramResult memory = RunCli({"memory", "--help"}, dir);
  ASSERT_EQ(memory.exit_code, 0);
  for (const char* word : {"(4+K)Ψ/N", "K = 12", "K = 8", "on top",
                           "memory --params 175B --ranks 64 --zero-stage 3"}) {
    EXPECT_TRUE(Contains(memory.out, word)) << word << "\n" << memory.out;
  }
  const ProgramResult top = RunCli({"--help"}, dir);
  EXPECT_TRUE(Contains(top.out, "  memory  ")) << top.out;
  const ProgramResult run_help = RunCli({"run", "--help"}, dir);
  EXPECT_TRUE(Contains(run_help.out, "run zero")) << run_help.out;
}

}  // namespace
}  // namespace shardlab
