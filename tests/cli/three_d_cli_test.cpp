// `shardlab-cli run 3d` end to end: the real step checked as JSON, the
// paper-scale GPT-3 175B step with its formulas, and one clear line (exit 2)
// for bad grids and flags.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/model/model_presets.h"
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

TEST(ThreeDCli, SmallModelStepIsCheckedAgainstOneDevice) {
  TempDir dir;
  const ProgramResult r = RunCli({"run", "3d", "--dp", "2", "--pp", "2", "--tp", "2", "--width",
                                  "32", "--optimizer", "adam", "--zero-stage", "1", "--json"},
                                 dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const Json j = ParseJson(r.out);
  EXPECT_TRUE(j["checked"].boolean);
  EXPECT_TRUE(j["correct"].boolean);
  EXPECT_LT(j["weight_error"].number, 1e-4);
  EXPECT_GT(j["traffic"]["TP"]["max_sent_bytes_per_gpu"].number, 0);
  EXPECT_GT(j["traffic"]["PP"]["max_sent_bytes_per_gpu"].number, 0);
  EXPECT_GT(j["traffic"]["DP"]["max_sent_bytes_per_gpu"].number, 0);
}

TEST(ThreeDCli, Gpt3At512GpusReportsStepTimeMemoryAndMfu) {
  TempDir dir;
  const ProgramResult r = RunCli({"run", "3d", "--dp", "64", "--tp", "8", "--pp", "1", "--model",
                                  "gpt3-175b", "--topology", "64x-dgx-a100-ib", "--json"},
                                 dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const Json j = ParseJson(r.out);
  const TransformerShape& m = FindModelPreset("gpt3-175b");
  EXPECT_FALSE(j["checked"].boolean);
  EXPECT_EQ(j["microbatches"].number, m.global_batch / 64);
  EXPECT_NEAR(j["model_flops"].number, m.TrainingFlopsPerSequence() * m.global_batch,
              1e-9 * j["model_flops"].number);
  // Compute alone is the model FLOPs spread over 512 A100s at 312 TFLOP/s.
  const double compute_us = m.TrainingFlopsPerSequence() * m.global_batch / 512 / 312e12 * 1e6;
  EXPECT_NEAR(j["compute_us"].number, compute_us, 0.01 * compute_us);
  EXPECT_GT(j["step_time_us"].number, j["compute_us"].number);
  EXPECT_NEAR(j["mfu"].number, m.TrainingFlopsPerSequence() * m.global_batch /
                                   (j["step_time_us"].number * 1e-6 * 512 * 312e12), 1e-6);
  // No ZeRO: 16 bytes per parameter of this GPU's eighth of the model.
  const double params = (m.layers * m.LayerParameters() + m.EmbeddingParameters()) / 8;
  EXPECT_NEAR(j["model_states_bytes_per_gpu"].number, 16 * params, 1e-6 * 16 * params);
  // DP ring all-reduce: 2(d-1)/d of the fp16 gradient per GPU.
  const double dp_bytes = 2.0 * 63 / 64 * 2 * static_cast<std::int64_t>(params);
  EXPECT_NEAR(j["traffic"]["DP"]["max_sent_bytes_per_gpu"].number, dp_bytes, 1e-6 * dp_bytes);
  // All 64 GPUs of a DP group sit in different boxes, and all 8 groups send
  // at once, each GPU through its own 25 GB/s HDR NIC: the DP send time is
  // the bytes over 25 GB/s, plus ring latencies well under 1%.
  const double dp_us = dp_bytes / 25e9 * 1e6;
  EXPECT_NEAR(j["traffic"]["DP"]["max_send_time_us_per_gpu"].number, dp_us, 0.01 * dp_us);
  EXPECT_EQ(j["traffic"]["PP"]["max_sent_bytes_per_gpu"].number, 0);
  EXPECT_EQ(j["warnings"].items.size(), 0u);
}

TEST(ThreeDCli, PaperScaleReportSaysItsMfuIsAnUpperBound) {
  TempDir dir;
  const ProgramResult r =
      RunCli({"run", "3d", "--dp", "2", "--tp", "4", "--pp", "1", "--model", "gpt3-1.3b"}, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // The simulator runs the matmuls at full peak: a student comparing its MFU
  // with a real run's must be told why it is higher.
  EXPECT_NE(r.out.find("# peak: the matmuls run at the GPU's full fp16 peak, so this MFU is an upper"),
            std::string::npos)
      << r.out;
  const ProgramResult small = RunCli({"run", "3d", "--dp", "2", "--tp", "2", "--pp", "2"}, dir);
  ASSERT_EQ(small.exit_code, 0) << Describe(small);
  EXPECT_EQ(small.out.find("# peak:"), std::string::npos) << small.out;  // the real model: no such note
}

TEST(ThreeDCli, BadGridsAndFlagsGetOneLine) {
  TempDir dir;
  const ProgramResult too_big = RunCli({"run", "3d", "--dp", "4", "--pp", "2", "--tp", "2"}, dir);
  EXPECT_EQ(too_big.exit_code, 2) << Describe(too_big);
  EXPECT_NE(too_big.err.find("grid: 16 ranks but topology 'dgx-a100' has only 8 GPUs"),
            std::string::npos) << too_big.err;
  const ProgramResult odd = RunCli({"run", "3d", "--layers", "7"}, dir);
  EXPECT_EQ(odd.exit_code, 2);
  EXPECT_NE(odd.err.find("--layers:"), std::string::npos) << odd.err;
  const ProgramResult model = RunCli({"run", "3d", "--model", "gpt5"}, dir);
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("gpt3-175b"), std::string::npos) << model.err;
  const ProgramResult zero = RunCli({"run", "3d", "--zero-stage", "3"}, dir);
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("--zero-stage:"), std::string::npos) << zero.err;
}

TEST(ThreeDCli, TraceNamesEachGpuByItsCoordinates) {
  TempDir dir;
  const std::string trace = (dir.path() / "3d.json").string();
  const ProgramResult r = RunCli({"run", "3d", "--width", "32", "--trace", trace}, dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string text = test_util::ReadWholeFile(trace);
  EXPECT_NE(text.find("GPU 0 dp0 pp0 tp0"), std::string::npos);
  EXPECT_NE(text.find("GPU 6 dp1 pp1 tp0"), std::string::npos);  // 6 = 1·4 + 1·2 + 0
}

TEST(ThreeDCli, WarnsWhenTpLeavesTheBox) {
  TempDir dir;
  const ProgramResult r = RunCli({"run", "3d", "--dp", "1", "--pp", "1", "--tp", "16", "--width",
                                  "32", "--topology", "2x-dgx-a100-ib"},
                                 dir);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("warning: tp 16 spans more than one box"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace shardlab
