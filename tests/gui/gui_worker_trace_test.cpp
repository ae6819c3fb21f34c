// The app end to end with a worker process and with an opened trace: a
// worker that dies leaves the app drawing and saying why; a trace the CLI
// wrote opens and renders; a broken one is one line. Needs an X display.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

test_util::ProgramResult RunApp(const std::vector<std::string>& args, const fs::path& dir) {
  return test_util::RunProgram(SHARDLAB_APP_PATH, args, dir);
}

bool HaveDisplay() {
  const char* display = std::getenv("DISPLAY");
  return display != nullptr && display[0] != '\0';
}

#define SKIP_WITHOUT_DISPLAY() \
  if (!HaveDisplay()) GTEST_SKIP() << "no X display: run under xvfb-run"

TEST(GuiWorker, RunsACollectiveInAWorkerToACheckedEnd) {
  SKIP_WITHOUT_DISPLAY();
  test_util::TempDir dir;
  const fs::path shot = dir.path() / "worker.png";
  const fs::path trace = dir.path() / "worker.json";
  const auto result = RunApp({"--worker", "--ranks", "4", "--size", "1K", "--frames", "3", "--screenshot",
                              shot.string(), "--trace", trace.string()},
                             dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(fs::exists(shot));
  const std::string json = test_util::ReadWholeFile(trace);
  EXPECT_NE(json.find("\"backend\":\"sim (worker process)\""), std::string::npos);
}

TEST(GuiWorker, AStickyCudaErrorEndsTheWorkerAndTheAppStillDraws) {
  SKIP_WITHOUT_DISPLAY();
  test_util::TempDir dir;
  const fs::path shot = dir.path() / "fault.png";
  const auto result = RunApp({"--worker", "--worker-fault", "sticky-cuda", "--ranks", "4", "--size", "1K",
                              "--frames", "3", "--screenshot", shot.string()},
                             dir.path());
  EXPECT_EQ(result.signal, 0) << "the app itself must not die";
  EXPECT_EQ(result.exit_code, 1) << "scripted mode reports the failed run";
  EXPECT_NE(result.err.find("sticky CUDA error"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("exited with code 3"), std::string::npos) << result.err;
  EXPECT_TRUE(fs::exists(shot)) << "frames were still drawn after the worker died";
}

TEST(GuiTrace, OpensATraceTheCliWrote) {
  SKIP_WITHOUT_DISPLAY();
  test_util::TempDir dir;
  const fs::path trace = dir.path() / "cli.json";
  const auto cli = test_util::RunProgram(
      SHARDLAB_CLI_PATH, {"run", "allreduce", "--ranks", "8", "--size", "1M", "--trace", trace.string()}, dir.path());
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  const fs::path shot = dir.path() / "trace.png";
  const auto result =
      RunApp({"--open-trace", trace.string(), "--step", "5", "--frames", "3", "--screenshot", shot.string()}, dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(fs::exists(shot));
}

TEST(GuiTrace, ABrokenTraceIsOneLineAndExitOne) {
  SKIP_WITHOUT_DISPLAY();
  test_util::TempDir dir;
  const fs::path trace = dir.path() / "broken.json";
  std::ofstream(trace) << "{\"traceEvents\": [";
  const auto result = RunApp({"--open-trace", trace.string(), "--frames", "2"}, dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err.rfind("shardlab: error: " + trace.string() + ":1:", 0), 0u) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
}

// The file is read before a window opens, so a broken trace is the same
// one line without a display (not "cannot open a window").
TEST(GuiTrace, ABrokenTraceIsRefusedBeforeAWindowOpens) {
  test_util::TempDir dir;
  const fs::path trace = dir.path() / "broken.json";
  std::ofstream(trace) << "{\"traceEvents\": [";
  const char* display = std::getenv("DISPLAY");
  const std::string saved = display != nullptr ? display : "";
  unsetenv("DISPLAY");
  const auto result = RunApp({"--open-trace", trace.string(), "--frames", "2"}, dir.path());
  if (display != nullptr) setenv("DISPLAY", saved.c_str(), 1);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err.rfind("shardlab: error: " + trace.string() + ":1:", 0), 0u) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
}

}  // namespace
}  // namespace shardlab
