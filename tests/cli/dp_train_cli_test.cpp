// `shardlab-cli run dp-train` end to end: the default run is correct
// against the single-device batch, each technique's flags reach the run and
// its measured quantity sits beside its formula, and each bad value is one
// line on stderr with exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/run_program.h"

namespace shardlab {
namespace {

using test_util::ProgramResult;
using test_util::TempDir;

ProgramResult RunCli(const std::vector<std::string>& args, const TempDir& dir) {
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir.path());
}

std::string Describe(const std::vector<std::string>& args, const ProgramResult& r) {
  std::string text = "shardlab-cli";
  for (const std::string& a : args) text += " " + a;
  return text + "\n  exit " + std::to_string(r.exit_code) + "\n  stdout: " + r.out.substr(0, 3000) +
         "\n  stderr: " + r.err;
}

// "name = value unit" lines.
std::map<std::string, double> Quantities(const std::string& out) {
  std::map<std::string, double> q;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t eq = line.find(" = ");
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    q[line.substr(0, eq)] = std::stod(line.substr(eq + 3));
  }
  return q;
}

std::map<std::string, double> RunDpTrain(std::vector<std::string> flags) {
  TempDir dir;
  std::vector<std::string> args = {"run", "dp-train"};
  args.insert(args.end(), flags.begin(), flags.end());
  const ProgramResult r = RunCli(args, dir);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  return Quantities(r.out);
}

TEST(DpTrainCli, DefaultRunIsCorrect) {
  const auto q = RunDpTrain({});
  EXPECT_EQ(q.at("correct"), 1);
  EXPECT_LT(q.at("loss_final"), q.at("loss_first"));
  EXPECT_EQ(q.at("bytes_per_step"), q.at("wire_bytes_per_step"));
  EXPECT_EQ(q.at("peak_activation_bytes"), q.at("formula_activation_bytes"));
}

TEST(DpTrainCli, EachTechniqueReachesTheRun) {
  const auto acc = RunDpTrain({"--accumulate", "4", "--batch", "128"});
  EXPECT_EQ(acc.at("correct"), 1);
  EXPECT_EQ(acc.at("bytes_per_step"), RunDpTrain({}).at("bytes_per_step"));
  const auto rec = RunDpTrain({"--recompute", "full"});
  EXPECT_EQ(rec.at("recompute_flops_per_step"), rec.at("formula_recompute_flops_per_step"));
  EXPECT_EQ(rec.at("peak_activation_bytes"), rec.at("formula_activation_bytes"));
  EXPECT_GT(rec.at("recompute_flops_per_step"), 0);
  const auto fp16 = RunDpTrain({"--precision", "fp16", "--loss-scale", "1024", "--overflow", "1@2"});
  EXPECT_EQ(fp16.at("skipped_steps"), 1);
  EXPECT_EQ(fp16.at("nonfinite_updates"), 0);
  const auto int8 = RunDpTrain({"--compress", "int8"});
  EXPECT_LE(int8.at("compression_error_ratio"), 1);
  EXPECT_LT(int8.at("bytes_per_step"), 0.3 * int8.at("baseline_bytes_per_step"));
  EXPECT_GT(int8.at("time_saved_ms"), 0);
  const auto local = RunDpTrain({"--local-steps", "4"});
  EXPECT_EQ(local.at("communicating_steps"), 5);
  const auto ssp = RunDpTrain({"--staleness", "2", "--slow-rank", "1:3"});
  EXPECT_EQ(ssp.at("max_staleness"), 2);
}

TEST(DpTrainCli, BadValuesAreOneLineAndExitTwo) {
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--accumulate", "0"},
           {"--local-steps", "-1"},
           {"--compress", "int3"},
           {"--topk", "0"},
           {"--topk", "1.5"},
           {"--accumulate", "3"},
           {"--recompute", "selective"},
           {"--recompute", "selective", "--recompute-layers", "9"},
           {"--overflow", "2@x", "--precision", "fp16"},
           {"--overflow", "1@2"},
           {"--local-steps", "2", "--staleness", "1"},
           {"--slow-rank", "7:2"},
           {"--ranks", "16"},
       }) {
    TempDir dir;
    std::vector<std::string> args = {"run", "dp-train"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProgramResult r = RunCli(args, dir);
    EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << Describe(args, r);
    EXPECT_TRUE(r.out.empty()) << Describe(args, r);
  }
}

}  // namespace
}  // namespace shardlab
