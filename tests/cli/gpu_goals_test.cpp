// scripts/gpu_goals.py's model goal (issue 24: the model of this machine
// within 15% of the measurement), without a GPU: a folder laid out as
// scripts/gpu-check.sh writes it, holding two compare tables the CLI prints
// for recorded H200 traces against their model (one case inside the band,
// one far outside), one case cut short and the others missing. Each case
// gets its PASS/FAIL line with the ratio the CLI's --json gives, and the
// script exits 1.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "engine/core/json_parse.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

using test_util::RunProgram;
using test_util::TempDir;

const std::string kCli = SHARDLAB_CLI_PATH;
const std::string kData = SHARDLAB_TEST_DATA_DIR;
const std::string kMerged = kData + "/../../bench/results/2026-11-26-h200-merged";
const std::string kGoals = kData + "/../../scripts/gpu_goals.py";

bool HavePython() {
  TempDir dir;
  return RunProgram("/usr/bin/env", {"python3", "--version"}, dir.path()).exit_code == 0;
}

// `compare TRACE --model ...` as text (what `run --compare sim` prints after
// its run) into `file`; returns model / measured from the --json form.
double CompareInto(const std::string& trace, const std::string& settings, const std::string& file) {
  TempDir dir;
  const std::vector<std::string> words = {"compare", kMerged + "/traces/" + trace, "--model", "--settings", settings,
                                          "--device-profile", kMerged + "/device-graph.toml", "--issue", "graph"};
  const test_util::ProgramResult text = RunProgram(kCli, words, dir.path());
  EXPECT_EQ(text.exit_code, 0) << test_util::Describe(text);
  std::ofstream(file) << text.out;
  std::vector<std::string> json_words = words;
  json_words.push_back("--json");
  const test_util::ProgramResult json = RunProgram(kCli, json_words, dir.path());
  EXPECT_EQ(json.exit_code, 0) << test_util::Describe(json);
  const JsonValue run = *ParseJson(json.out, "compare.json").Find("run");
  // A is the measurement (the other side is simulated).
  return run.Find("b_us")->number / run.Find("a_us")->number;
}

std::string LineOf(const std::string& out, const std::string& goal) {
  const std::size_t at = out.find("model within 15%: " + goal + ":");
  if (at == std::string::npos) return "";
  const std::size_t begin = out.rfind('\n', at) + 1;
  return out.substr(begin, out.find('\n', at) - begin);
}

std::string Ratio(double r) {
  char text[64];
  std::snprintf(text, sizeof text, "model / measured = %.3f (goal within 0.85", r);
  return text;
}

TEST(GpuGoals, EachModelCaseIsOneLineWithItsRatioAndAFailureExitsOne) {
  if (!HavePython()) GTEST_SKIP() << "python3 is not installed";
  TempDir folder;
  const double ring = CompareInto("ring8-64M.json", "collective size=64M", (folder.path() / "model-ring8-64M.txt").string());
  const double pipe = CompareInto("pipeline-1f1b.json", "pipeline schedule=1f1b stages=4 microbatches=8 width=256 batch=64",
                                  (folder.path() / "model-pipeline-1f1b.txt").string());
  ASSERT_GE(ring, 0.85);  // the recorded ring is inside the band, the 1F1B far below it
  ASSERT_LE(ring, 1.15);
  ASSERT_LT(pipe, 0.85);
  // A table cut before its total line is no figure.
  {
    std::ifstream in(folder.path() / "model-ring8-64M.txt");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(folder.path() / "model-zero3.txt") << text.substr(0, text.find("# total:"));
  }

  TempDir dir;
  const test_util::ProgramResult r = RunProgram("/usr/bin/env", {"python3", kGoals, folder.path().string()}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << test_util::Describe(r);
  const std::string ring_line = LineOf(r.out, "ring all-reduce, 8 virtual ranks, 64 MiB");
  EXPECT_EQ(ring_line.rfind("PASS  ", 0), 0u) << r.out;
  EXPECT_NE(ring_line.find(Ratio(ring)), std::string::npos) << ring_line;
  const std::string pipe_line = LineOf(r.out, "1F1B step, 4 stages, 8 micro-batches");
  EXPECT_EQ(pipe_line.rfind("FAIL  ", 0), 0u) << r.out;
  EXPECT_NE(pipe_line.find(Ratio(pipe)), std::string::npos) << pipe_line;
  const std::string cut = LineOf(r.out, "ZeRO-3 step, 4 ranks");
  EXPECT_EQ(cut.rfind("FAIL  ", 0), 0u) << r.out;
  EXPECT_NE(cut.find("no compare table"), std::string::npos) << cut;
  for (const char* missing : {"ring all-reduce, 8 virtual ranks, 16 MiB", "ring all-reduce, 8 virtual ranks, 1 GiB",
                              "TP MLP layer, tp 4"}) {
    const std::string line = LineOf(r.out, missing);
    EXPECT_EQ(line.rfind("FAIL  ", 0), 0u) << missing << "\n" << r.out;
    EXPECT_NE(line.find("missing figure"), std::string::npos) << line;
  }

  // No folder: a usage error.
  const test_util::ProgramResult usage = RunProgram("/usr/bin/env", {"python3", kGoals}, dir.path());
  EXPECT_EQ(usage.exit_code, 2) << test_util::Describe(usage);
}

}  // namespace
}  // namespace shardlab
