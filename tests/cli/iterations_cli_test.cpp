// -w/--warmup and -n/--iters on every scenario's `run` (app/cli/iterations.h):
// the same flags, the same one-line errors with exit 2, and the iteration
// line that says what was timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
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
  EXPECT_NE(r.out.find("\"time_best_us\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace shardlab
