// -w/--warmup and -n/--iters on every scenario's `run` (app/cli/iterations.h):
// the same flags, the same one-line errors with exit 2, and the iteration
// line that says what was timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "tests/common/run_program.h"

namespace shardlab {
namespace {

test_util::ProgramResult RunCli(const std::vector<std::string>& args) {
  test_util::TempDir dir;
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

// The smallest run of every scenario.
const std::vector<std::vector<std::string>> kScenarios = {
    {"run", "allreduce", "--ranks", "4", "--size", "4K"},
    {"run", "pipeline", "--stages", "2", "--microbatches", "2", "--width", "16", "--layers", "2",
     "--batch", "4"},
    {"run", "tp-mlp", "--tp", "2"},
    {"run", "zero", "--ranks", "2", "--layers", "2", "--width", "16", "--steps", "1"},
    {"run", "3d"},
    {"run", "moe"},
};

std::vector<std::string> With(std::vector<std::string> args, std::vector<std::string> more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(IterationsCli, ANegativeWarmUpOrNoTimedRunIsOneLineAndExit2Everywhere) {
  for (const auto& scenario : kScenarios) {
    for (const auto& [flag, value, says] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"--warmup", "-1", "--warmup: must be at least 0 (got -1)"},
             {"--iters", "0", "--iters: must be at least 1 (got 0)"}}) {
      const test_util::ProgramResult r = RunCli(With(scenario, {flag, value}));
      EXPECT_EQ(r.exit_code, 2) << scenario[1] << " " << flag << "\n" << r.err;
      EXPECT_EQ(r.err, "shardlab-cli: error: " + says + "\n") << scenario[1];
      EXPECT_EQ(r.out, "") << scenario[1] << ": printed before the error";
    }
  }
}

TEST(IterationsCli, EveryScenarioSaysWhatWasTimedAndAPlainRunDoesNot) {
  for (const auto& scenario : kScenarios) {
    const test_util::ProgramResult plain = RunCli(scenario);
    EXPECT_EQ(plain.exit_code, 0) << scenario[1] << "\n" << plain.err;
    EXPECT_EQ(plain.out.find("# iterations:"), std::string::npos) << scenario[1];
    const test_util::ProgramResult timed = RunCli(With(scenario, {"--warmup", "2", "--iters", "3"}));
    EXPECT_EQ(timed.exit_code, 0) << scenario[1] << "\n" << timed.err;
    EXPECT_NE(timed.out.find("# iterations: 2 warm-up (not timed), 3 timed: average "),
              std::string::npos)
        << scenario[1] << "\n" << timed.out;
  }
}

TEST(IterationsCli, CollectiveJsonCarriesTheCountsAndTheBest) {
  const test_util::ProgramResult r =
      RunCli({"run", "allreduce", "--ranks", "2", "--size", "1K", "-w", "1", "-n", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"warmup\": 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"iters\": 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"best_us\""), std::string::npos) << r.out;  // in "iterations"
}

// sweep: each size warmed up and averaged, as nccl-tests' *_perf tools.
TEST(IterationsCli, SweepTakesTheFlagsPerSizeAndRefusesBadCountsInOneLine) {
  const std::vector<std::string> sweep = {"sweep", "allreduce", "-b", "1K", "-e", "4K", "-f", "4",
                                          "--ranks", "2", "-q"};
  for (const auto& [flag, value, says] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--warmup", "-1", "--warmup: must be at least 0 (got -1)"},
           {"-w", "-3", "-w: must be at least 0 (got -3)"},
           {"--iters", "0", "--iters: must be at least 1 (got 0)"},
           {"-n", "x", "-n: must be an integer (got 'x')"}}) {
    const test_util::ProgramResult r = RunCli(With(sweep, {flag, value}));
    EXPECT_EQ(r.exit_code, 2) << flag << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_EQ(r.err, "shardlab-cli: error: " + says + "\n");
    EXPECT_EQ(r.out, "") << flag << ": printed before the error";
  }
  const test_util::ProgramResult plain = RunCli(sweep);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("each size:"), std::string::npos) << "a plain sweep's header is unchanged";
  const test_util::ProgramResult timed = RunCli(With(sweep, {"-w", "2", "-n", "3"}));
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  EXPECT_NE(timed.out.find("#   each size: 2 warm-up runs (not timed), then 3 timed; time is their average\n"),
            std::string::npos)
      << timed.out;
  // JSON: every row carries the counts it ran with.
  const test_util::ProgramResult json = RunCli(With(sweep, {"-w", "1", "--iters", "5", "--json"}));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::size_t rows = 0;
  for (std::size_t at = json.out.find("\"iters\": 5"); at != std::string::npos;
       at = json.out.find("\"iters\": 5", at + 1))
    ++rows;
  EXPECT_EQ(rows, 2u) << json.out;
  EXPECT_EQ(json.out.find("\"warmup\": 0"), std::string::npos) << json.out;
}

}  // namespace
}  // namespace shardlab
