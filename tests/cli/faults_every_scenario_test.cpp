// The fault switches on every training scenario (pipeline, tp, zero, 3d,
// moe) and the elastic job: a slowed pipeline stage stretches the step as
// the schedule's formula says; a failed rank in ZeRO names the collective
// it never joined; bad switches are one line with exit 2 everywhere.
#include <gtest/gtest.h>

#include <algorithm>
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

ProgramResult RunCli(const std::vector<std::string>& args) {
  TempDir dir;
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

TEST(FaultsEveryScenario, ASlowStageStretchesAGPipeStepByItsShareOfTheWork) {
  // GPipe, p = 4, m = 8, compute-bound (width 2048): stage 1 at half speed
  // becomes the bottleneck of both passes, so every one of its m forwards
  // and m backwards takes F = 2 times as long and the others wait. The
  // forward-backward span grows by
  //   (F - 1) (fwd_1 + bwd_1)  +  at most (F - 1) x one send each way
  // (fwd_1, bwd_1: stage 1's forward and backward time in the plain run; a
  // slow rank's send moves F times its bytes; a dgx-a100 route carries at
  // least 100 GB/s).
  const std::vector<std::string> base = {"run",   "pipeline", "--schedule", "gpipe",         "-p",
                                         "4",     "-m",       "8",          "--width",       "2048",
                                         "--batch", "256",    "--timing-only", "--json"};
  const ProgramResult plain = RunCli(base);
  ASSERT_EQ(plain.exit_code, 0) << Describe(plain);
  std::vector<std::string> slowed = base;
  slowed.insert(slowed.end(), {"--slow-rank", "1:2"});
  const ProgramResult slow = RunCli(slowed);
  ASSERT_EQ(slow.exit_code, 0) << Describe(slow);
  const Json a = ParseJson(plain.out), b = ParseJson(slow.out);
  const Json& stage = a["per_stage"].items[1];
  const double work_us = stage["forward_us"].number + stage["backward_us"].number;
  const double grown_us = b["span_us"].number - a["span_us"].number;
  const double sends_us = 2 * (a["transfer_bytes"].number / a["transfers"].number) / 100e3;
  EXPECT_GE(grown_us, work_us * (1 - 1e-9)) << "plain span " << a["span_us"].number << " us";
  EXPECT_LE(grown_us, work_us + sends_us) << "plain span " << a["span_us"].number << " us";
}

TEST(FaultsEveryScenario, AFailedRankInZeroNamesTheCollectiveItNeverJoined) {
  const ProgramResult r = RunCli({"run", "zero", "--zero-stage", "2", "--ranks", "4", "--fail-rank", "1@3"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find("rank 1 failed at step 3 (fail_rank 1@3) and never joined collective #"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("waited for it"), std::string::npos) << r.err;
}

TEST(FaultsEveryScenario, EveryTrainingScenarioRunsSlowerWithAStraggler) {
  const std::vector<std::vector<std::string>> runs = {
      {"run", "tp-mlp", "--tp", "4", "--json"},
      {"run", "zero", "--ranks", "4", "--json"},
      {"run", "moe", "--ranks", "4", "--json"},
      {"run", "3d", "--json"},
  };
  for (const std::vector<std::string>& run : runs) {
    const ProgramResult plain = RunCli(run);
    ASSERT_EQ(plain.exit_code, 0) << run[1] << "\n" << Describe(plain);
    std::vector<std::string> slowed = run;
    slowed.insert(slowed.end(), {"--slow-rank", "1:3"});
    const ProgramResult slow = RunCli(slowed);
    ASSERT_EQ(slow.exit_code, 0) << run[1] << "\n" << Describe(slow);
    // Each output's time field, whichever its scenario calls it.
    auto time_of = [](const Json& j) {
      for (const char* key : {"step_time_us", "time_us", "step_time_s", "time_ms"})
        if (j.Has(key)) return j[key].number;
      return -1.0;
    };
    const double t0 = time_of(ParseJson(plain.out)), t1 = time_of(ParseJson(slow.out));
    ASSERT_GT(t0, 0) << run[1] << ": no time field\n" << plain.out;
    EXPECT_GT(t1, t0) << run[1];
  }
}

TEST(FaultsEveryScenario, BadSwitchesAreOneLineWithExitTwoInEveryScenario) {
  const std::vector<std::vector<std::string>> runs = {
      {"run", "pipeline"}, {"run", "tp-mlp"}, {"run", "zero"}, {"run", "3d"}, {"run", "moe"}, {"run", "elastic"},
  };
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--slow-rank", "99:2"}, "--slow-rank: rank 99 is out of range"},
      {{"--slow-rank", "1:0"}, "--slow-rank: FACTOR must be more than 0 (got 0)"},
      {{"--throttle-link", "gpu2-gpu5:3"}, "--throttle-link: no link between gpu2 and gpu5 in dgx-a100"},
      {{"--fail-rank", "1@100000"}, "--fail-rank: step 100000 is past the run's last step ("},
      {{"--fail-link", "0-1"}, "--fail-link: '0-1' is not A-B@STEP"},
  };
  for (const std::vector<std::string>& run : runs) {
    for (const auto& [flags, message] : cases) {
      if (run[1] == "elastic" && flags[0] == "--fail-link") continue;  // the job's own failure is --fail-rank
      std::vector<std::string> args = run;
      args.insert(args.end(), flags.begin(), flags.end());
      const ProgramResult r = RunCli(args);
      EXPECT_EQ(r.exit_code, 2) << run[1] << " " << flags[0] << "\n" << Describe(r);
      EXPECT_EQ(r.err.rfind("shardlab-cli: error: " + message, 0), 0u) << run[1] << "\n" << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << run[1] << "\n" << r.err;
    }
  }
}

TEST(FaultsEveryScenario, TheElasticJobRecoversAndSaysWhatItLost) {
  TempDir dir;
  const ProgramResult r = RunCli({"run", "elastic", "--ranks", "4", "--steps", "6", "--checkpoint-every", "2",
                                  "--fail-rank", "2@3", "--checkpoint-dir", (dir.path() / "ckpt").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const Json j = ParseJson(r.out);
  EXPECT_EQ(j["lost_steps"].number, 1);
  EXPECT_EQ(j["restart_from_step"].number, 2);
  EXPECT_EQ(j["ranks_after"].items.size(), 3u);
  EXPECT_EQ(j["checkpoint_files"].items.size(), 2u);
  EXPECT_GT(j["recovery_ms"].number, 0);
  EXPECT_EQ(j["verdict"]["result"].text, "correct") << r.out;
}

}  // namespace
}  // namespace shardlab
