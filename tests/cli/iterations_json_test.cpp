// Every scenario's --json carries the same "iterations" object (written by
// engine/run/iterations.h WriteIterationsJson): the warm-up and timed counts
// it ran with, the average and the best timed run. The commands run in this
// process (app/cli is a library) and their stdout is parsed as one JSON
// document, so a "# iterations:" line printed beside the JSON fails too.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "tests/common/json_reader.h"

namespace shardlab {
namespace {

using test_util::Json;

// The smallest run of every scenario (the words after `run`).
const std::vector<std::vector<std::string>> kScenarios = {
    {"allreduce", "--ranks", "4", "--size", "4K"},
    {"pipeline", "--stages", "2", "--microbatches", "2", "--width", "16", "--layers", "2", "--batch", "4"},
    {"tp-mlp", "--tp", "2"},
    {"zero", "--ranks", "2", "--layers", "2", "--width", "16", "--steps", "1"},
    {"3d"},
    {"moe"},
};

/// `shardlab-cli run WORDS...` in this process: its exit code and stdout.
struct InProcessResult {
  int exit_code = -1;
  std::string out;
};

InProcessResult RunInProcess(std::vector<std::string> words) {
  std::ostringstream captured;
  std::streambuf* saved = std::cout.rdbuf(captured.rdbuf());
  InProcessResult r;
  try {
    r.exit_code = cli::RunMain(std::span<const std::string>(words));
  } catch (...) {
    std::cout.rdbuf(saved);
    throw;
  }
  std::cout.rdbuf(saved);
  r.out = captured.str();
  return r;
}

std::vector<std::string> With(std::vector<std::string> words, const std::vector<std::string>& more) {
  words.insert(words.end(), more.begin(), more.end());
  return words;
}

/// The "iterations" object of the scenario's --json with `flags`.
Json IterationsOf(const std::vector<std::string>& scenario, const std::vector<std::string>& flags) {
  const InProcessResult r = RunInProcess(With(With(scenario, flags), {"--json"}));
  EXPECT_EQ(r.exit_code, 0) << scenario[0] << "\n" << r.out;
  const Json j = test_util::ParseJson(r.out);  // throws on text beside the JSON
  EXPECT_EQ(j["scenario"].text, scenario[0] == "tp-mlp" ? "tp" : scenario[0]);
  return j["iterations"];
}

// %.9g in the JSON: two times that agree to a few ulp print within one unit
// of the 9th significant digit.
void ExpectSameTime(double a, double b, const std::string& what) {
  EXPECT_NEAR(a, b, 1e-8 * std::fabs(b)) << what;
}

TEST(IterationsJson, EveryScenarioCarriesTheCountsTheAverageAndTheBest) {
  for (const auto& scenario : kScenarios) {
    SCOPED_TRACE(scenario[0]);
    const Json it = IterationsOf(scenario, {"-w", "1", "-n", "3"});
    EXPECT_EQ(it["warmup"].number, 1);
    EXPECT_EQ(it["iters"].number, 3);
    EXPECT_GT(it["best_us"].number, 0);
    EXPECT_LE(it["best_us"].number, it["average_us"].number);
    EXPECT_EQ(it.fields.size(), 4u) << "warmup, iters, average_us, best_us";

    // A plain run: no warm-up, one timed run, which is both the average and
    // the best. The simulator gives every run the same time, so the three
    // timed runs above average to it and the best is it.
    const Json single = IterationsOf(scenario, {});
    EXPECT_EQ(single["warmup"].number, 0);
    EXPECT_EQ(single["iters"].number, 1);
    EXPECT_GT(single["average_us"].number, 0);
    ExpectSameTime(single["best_us"].number, single["average_us"].number, "single run: best");
    ExpectSameTime(it["average_us"].number, single["average_us"].number, "average of 3 vs one run");
    ExpectSameTime(it["best_us"].number, single["average_us"].number, "best of 3 vs one run");
  }
}

TEST(IterationsJson, ALongFlagNameGivesTheSameObject) {
  const std::vector<std::string>& pipeline = kScenarios[1];
  const Json it = IterationsOf(pipeline, {"--warmup", "2", "--iters", "4"});
  EXPECT_EQ(it["warmup"].number, 2);
  EXPECT_EQ(it["iters"].number, 4);
}

// A collective's time_us is the average of the timed runs, as nccl-tests'
// time column: the same number as its iterations' average.
TEST(IterationsJson, ACollectivesTimeIsTheAverage) {
  const InProcessResult r = RunInProcess({"allreduce", "--ranks", "2", "--size", "1K", "-w", "1", "-n", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json j = test_util::ParseJson(r.out);
  ExpectSameTime(j["time_us"].number, j["iterations"]["average_us"].number, "time_us");
  EXPECT_FALSE(j.Has("time_best_us")) << "the best is in iterations.best_us only";
}

}  // namespace
}  // namespace shardlab
