// `shardlab-cli run pipeline` end to end: the JSON the issue names, the text
// report and its chart, a trace file, and one clear line (exit 2) for each
// kind of bad input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common/json_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

using test_util::Describe;
using test_util::Json;
using test_util::ParseJson;
using test_util::ProgramResult;
using test_util::TempDir;

ProgramResult RunCli(const std::vector<std::string>& args, const TempDir& dir) {
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

TEST(PipelineCli, JsonHasTheBubbleBesideTheFormulaAndACheckedResult) {
  TempDir dir;
  const ProgramResult r = RunCli({"run", "pipeline", "--schedule", "1f1b", "--stages", "4",
                                  "--microbatches", "8", "--topology", "dgx-a100", "--width", "64",
                                  "--json"},
                                 dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const Json j = ParseJson(r.out);
  EXPECT_EQ(j["schedule"].text, "1f1b");
  EXPECT_EQ(j["stages"].number, 4);
  EXPECT_NEAR(j["formula_bubble_fraction"].number, 3.0 / 8.0, 1e-8);
  EXPECT_NEAR(j["formula_bubble_share_of_step"].number, 3.0 / 11.0, 1e-8);
  // Communication is not free on dgx-a100: the measured bubble is at least the formula's.
  EXPECT_GE(j["bubble_fraction"].number, j["formula_bubble_fraction"].number - 1e-9);
  const Json& peak = j["peak_inflight_per_stage"];
  ASSERT_EQ(peak.items.size(), 4u);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(peak.items[s].number, 4 - s) << s;
  EXPECT_TRUE(j["checked"].boolean);
  EXPECT_EQ(j["correct"].type, Json::Type::kBool);
  EXPECT_TRUE(j["correct"].boolean);
  EXPECT_LT(j["gradient_error"].number, 1e-4);
  EXPECT_EQ(j["transfers"].number, 2 * 3 * 8);  // an activation and a gradient per boundary and micro-batch
}

TEST(PipelineCli, TextReportShowsStagesChartAndResult) {
  TempDir dir;
  const std::string trace_path = (dir.path() / "t.json").string();
  const ProgramResult r = RunCli({"run", "pipeline", "--schedule", "gpipe", "-p", "2", "-m", "4",
                                  "--width", "32", "--layers", "4", "--trace", trace_path},
                                 dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("GPipe, 2 stages, 4 micro-batches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# stage 0  |F"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("formula (p-1)/m = 0.2500"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Result: correct"), std::string::npos) << r.out;
  // A model whose slots outlast the transfers is charted slot by slot, GPipe's
  // forwards first, the bubble as dots.
  const ProgramResult wide = RunCli({"run", "pipeline", "--schedule", "gpipe", "-p", "2", "-m", "4",
                                     "--width", "8192", "--batch", "256", "--timing-only"},
                                    dir);
  ASSERT_EQ(wide.exit_code, 0) << Describe(wide);
  EXPECT_NE(wide.out.find("# stage 0  |F0 F1 F2 F3 ..."), std::string::npos) << wide.out;
  EXPECT_NE(wide.out.find("# stage 1  |...F0 F1 F2 F3 B0"), std::string::npos) << wide.out;
  const std::string trace = test_util::ReadWholeFile(trace_path);
  const Json t = ParseJson(trace);
  EXPECT_TRUE(t.Has("traceEvents"));
  EXPECT_NE(trace.find("forward mb3"), std::string::npos);
}

TEST(PipelineCli, TimingOnlyRunsAPaperSizedModelWithoutChecking) {
  TempDir dir;
  const ProgramResult r = RunCli({"run", "pipeline", "-p", "8", "-m", "32", "--layers", "32",
                                  "--width", "8192", "--batch", "256", "--timing-only", "--json"},
                                 dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const Json j = ParseJson(r.out);
  EXPECT_FALSE(j["checked"].boolean);
  EXPECT_EQ(j["correct"].type, Json::Type::kNull);
  // Large slots: the bubble is close to (p-1)/m = 7/32.
  EXPECT_NEAR(j["bubble_fraction"].number, 7.0 / 32.0, 0.05);
}

TEST(PipelineCli, ZeroBubbleIsCorrectAndBeats1F1BOnTheSameModel) {
  TempDir dir;
  auto run = [&](const std::string& schedule) {
    const ProgramResult r = RunCli({"run", "pipeline", "--schedule", schedule, "-p", "4", "-m", "8",
                                    "--width", "64", "--json"},
                                   dir);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return ParseJson(r.out);
  };
  const Json zb = run("zb-h1"), one = run("1f1b");
  EXPECT_TRUE(zb["correct"].boolean);
  EXPECT_NEAR(zb["formula_bubble_fraction"].number, 3.0 / 24.0, 1e-8);
  EXPECT_LT(zb["bubble_fraction"].number, one["bubble_fraction"].number);
  EXPECT_LT(zb["step_time_us"].number, one["step_time_us"].number);
  // Weight gradients are reported per stage, and activations live until their W.
  EXPECT_GT(zb["per_stage"].items[0]["weight_gradient_us"].number, 0);
  EXPECT_FALSE(one["per_stage"].items[0].Has("weight_gradient_us"));
  for (const Json& peak : zb["peak_inflight_per_stage"].items) EXPECT_EQ(peak.number, 4);
}

TEST(PipelineCli, BadInputGetsOneLineNamingTheFlag) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--microbatches", "0"}, "--microbatches: "},
      {{"-m", "0"}, "-m: "},
      {{"--stages", "16", "--layers", "16"}, "--stages: 16 stages but topology 'dgx-a100' has only 8 GPUs"},
      {{"--stages", "8", "--layers", "4"}, "--stages: 8 stages but the model has only 4 layers"},
      {{"--schedule", "interleaved", "--chunks", "3"}, "--chunks: "},
      {{"--schedule", "zb"}, "--schedule: unknown schedule 'zb'"},
      {{"--microbatches", "5", "--batch", "64"}, "--microbatches: a batch of 64 rows"},
      {{"--chunks", "2"}, "--chunks: only the interleaved schedule"},
      {{"--width", "x"}, "--width: "},
      {{"--optimizer", "lamb"}, "--optimizer: unknown optimizer 'lamb'"},
  };
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> args = {"run", "pipeline", "--width", "16"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProgramResult r = RunCli(args, dir);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << "\n" << Describe(r);
    EXPECT_NE(r.err.find("shardlab-cli: error: " + expected), std::string::npos)
        << flags[0] << "\n" << Describe(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(PipelineCli, HelpDescribesTheFlags) {
  TempDir dir;
  const ProgramResult r = RunCli({"run", "pipeline", "--help"}, dir);
  ASSERT_EQ(r.exit_code, 0);
  for (const char* word : {"--schedule", "--microbatches", "--chunks", "interleaved", "(p-1)/m"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
}

}  // namespace
}  // namespace shardlab
