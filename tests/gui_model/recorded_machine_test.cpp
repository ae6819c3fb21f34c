// The machine view's line for a measured trace whose ranks ran elsewhere
// than the machine drawn (virtual devices on one GPU).
#include <gtest/gtest.h>

#include "app/gui/i18n/language.h"
#include "app/gui/model/recorded_machine.h"
#include "tests/common/run_program.h"

namespace shardlab::gui {
namespace {

const std::string kRecorded = std::string(SHARDLAB_SOURCE_DIR) + "/bench/results/2026-11-26-h200-merged/traces/ring8-64M.json";
const std::string kUnrecorded = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200-ring8-64M-warm.json";
const std::string kProfile = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200.toml";

/// Sets the language for one test and puts English back after it.
struct LanguageScope {
  explicit LanguageScope(Language language) { SetLanguage(language); }
  ~LanguageScope() { SetLanguage(Language::kEnglish); }
};

TEST(RecordedMachine, ATraceOfVirtualRanksSaysWhereItRanAndWhatIsDrawn) {
  const LoadedTrace trace = ReadChromeTraceFile(kRecorded);
  ASSERT_TRUE(trace.machine.has_value());
  ASSERT_EQ(trace.machine->gpus, 1);
  const std::string line = RecordedMachineLine(&trace);
  EXPECT_EQ(line, "measured on " + trace.machine->Describe() + "; drawn: " + trace.topology.name +
                      ", the machine the plan was made for");
  EXPECT_NE(line.find("NVIDIA H200"), std::string::npos) << line;
  EXPECT_NE(line.find("virtual devices"), std::string::npos) << line;
}

// The simulator's run of "one H200 holding 8 virtual ranks" (a laptop's
// model from a device profile) records that machine too; it was modelled,
// not measured, and the line says so, in both languages.
TEST(RecordedMachine, ASimulatedTraceSaysItsMachineWasModelledNotMeasured) {
  test_util::TempDir dir;
  const std::string path = (dir.path() / "model.json").string();
  const test_util::ProgramResult made =
      test_util::RunProgram(SHARDLAB_CLI_PATH, {"run", "allreduce", "--ranks", "8", "--size", "64M", "--topology", "this",
                                                "--device-profile", kProfile, "--timing-only", "--trace", path},
                            dir.path());
  ASSERT_EQ(made.exit_code, 0) << test_util::Describe(made);
  const LoadedTrace model = ReadChromeTraceFile(path);
  ASSERT_EQ(model.backend, "sim");
  ASSERT_EQ(model.clock, "simulated");
  ASSERT_TRUE(model.machine.has_value());
  const std::string line = RecordedMachineLine(&model);
  EXPECT_EQ(line, "modelled, not measured: " + model.machine->Describe() + "; drawn: " + model.topology.name +
                      ", the machine the plan was made for");
  EXPECT_EQ(line.find("measured on"), std::string::npos) << line;
  EXPECT_NE(line.find("NVIDIA H200"), std::string::npos) << line;
  {
    LanguageScope chinese(Language::kChinese);
    const std::string zh = RecordedMachineLine(&model);
    EXPECT_EQ(zh.find("modelled"), std::string::npos) << zh;
    EXPECT_EQ(zh.find("\xE5\xAE\x9E\xE6\xB5\x8B\xE4\xBA\x8E"), std::string::npos) << zh;  // not 实测于 ("measured on")
    EXPECT_NE(zh.find("\xE6\xA8\xA1\xE6\x8B\x9F"), std::string::npos) << zh;  // 模拟 (simulated, modelled)
    EXPECT_NE(zh.find(model.machine->Describe()), std::string::npos) << zh;
  }
  // The measured trace of the same record keeps its "measured on", in both languages.
  const LoadedTrace measured = ReadChromeTraceFile(kRecorded);
  ASSERT_NE(measured.clock, "simulated");
  EXPECT_EQ(RecordedMachineLine(&measured).rfind("measured on ", 0), 0u) << RecordedMachineLine(&measured);
  LanguageScope chinese(Language::kChinese);
  EXPECT_EQ(RecordedMachineLine(&measured).rfind("\xE5\xAE\x9E\xE6\xB5\x8B\xE4\xBA\x8E", 0), 0u)
      << RecordedMachineLine(&measured);
}

TEST(RecordedMachine, NoLineWithoutARecordOrWhenEachRankHadTheGpuDrawn) {
  EXPECT_EQ(RecordedMachineLine(nullptr), "");
  const LoadedTrace old = ReadChromeTraceFile(kUnrecorded);
  ASSERT_FALSE(old.machine.has_value());
  EXPECT_EQ(RecordedMachineLine(&old), "");

  // The same record, made to say that each of the 8 ranks had an H200 of its own.
  LoadedTrace own = ReadChromeTraceFile(kRecorded);
  own.machine->gpus = own.topology.num_gpus();
  own.machine->rank_to_gpu.clear();
  for (int r = 0; r < own.topology.num_gpus(); ++r) own.machine->rank_to_gpu.push_back(r);
  // Measured on H200s while the machine drawn has other GPUs: said.
  const std::string drawn_model =
      own.topology.nodes[static_cast<std::size_t>(own.topology.gpus.front())].device.model;
  ASSERT_FALSE(drawn_model.empty());
  EXPECT_EQ(own.machine->gpu_model.find(drawn_model), std::string::npos);
  EXPECT_NE(RecordedMachineLine(&own), "");
  // The same GPUs as drawn, one rank each: nothing to say.
  own.machine->gpu_model = "NVIDIA " + drawn_model;
  EXPECT_EQ(RecordedMachineLine(&own), "");
  own.machine->rank_to_gpu[0] = 1;  // ranks 0 and 1 swapped: not placed as drawn
  own.machine->rank_to_gpu[1] = 0;
  EXPECT_NE(RecordedMachineLine(&own), "");
}

}  // namespace
}  // namespace shardlab::gui
