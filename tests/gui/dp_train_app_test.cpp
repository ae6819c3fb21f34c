// dp-train in the app: the scenario runs from its spec's flags, the
// training's skipped step reaches the timeline (its trace names the flag's
// all-reduce "flag s3 SKIP", and no gradient all-reduce follows it), and a
// bad value is the CLI's one line with exit 2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/common/run_program.h"

namespace shardlab::gui {
namespace {

namespace fs = std::filesystem;

bool HaveDisplay() {
  const char* display = std::getenv("DISPLAY");
  return display != nullptr && display[0] != '\0';
}

TEST(GuiAppDpTrain, ALossScaleRunShowsTheSkippedStepOnTheTimeline) {
  if (!HaveDisplay()) GTEST_SKIP() << "no X display (DISPLAY is unset): run under xvfb-run";
  test_util::TempDir dir;
  const fs::path trace = dir.path() / "run.json";
  const test_util::ProgramResult r = test_util::RunProgram(
      SHARDLAB_APP_PATH,
      {"--scenario", "dp-train", "--precision", "fp16", "--loss-scale", "1024", "--overflow", "2@3", "--steps", "6",
       "--frames", "2", "--trace", trace.string(), "--window-width", "1280", "--window-height", "800"},
      dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string json = test_util::ReadWholeFile(trace);
  EXPECT_NE(json.find("flag s3 SKIP"), std::string::npos) << "the skipped step is not on the timeline";
  EXPECT_NE(json.find("AR s2"), std::string::npos) << "step 2's gradient all-reduce";
  EXPECT_EQ(json.find("AR s3"), std::string::npos) << "a skipped step sends no gradients";
}

TEST(GuiAppDpTrain, ABadValueIsOneLineAndExitTwo) {
  test_util::TempDir dir;
  const test_util::ProgramResult r =
      test_util::RunProgram(SHARDLAB_APP_PATH, {"--scenario", "dp-train", "--compress", "int3"}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--compress: unknown compression 'int3'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace shardlab::gui
