// Stragglers and failures on the mpi backend, end to end under mpirun: a
// failed rank really stops (its sends withheld), so the others time out and
// the existing report names it; a slow rank really waits; what the backend
// cannot do is one line with exit 2.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "tests/common/json_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;
using test_util::Describe;
using test_util::ProgramResult;
using test_util::TempDir;

ProgramResult RunMpi(int processes, const std::vector<std::string>& words, const fs::path& dir) {
  return test_util::RunCliUnderMpi(SHARDLAB_CLI_PATH, processes, words, dir);
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MpiFaultSwitches, AFailedRankStopsAndTheOthersReportIt) {
  TempDir dir;
  const std::string seed = std::to_string(910000000 + getpid() % 1000000) + "3";
  const ProgramResult r = RunMpi(3, {"run", "allreduce", "--ranks", "3", "--size", "1K", "--backend", "mpi",
                                     "--seed", seed, "--fail-rank", "1@2", "--mpi-timeout", "2s"},
                                 dir.path());
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "rank 1: fail_rank 1@2: stops before its ops of step 2 (its sends are withheld)"))
      << Describe(r);
  EXPECT_TRUE(Contains(r.err, "rank 1 stopped answering")) << Describe(r);
}

TEST(MpiFaultSwitches, ASlowRanksWorkReallyTakesLonger) {
  // Stage 1 of a 3-stage pipeline at a tenth of its speed: each of its
  // compute ops spins 9 times its own measured work after it, so its
  // forward and backward time grows about 10x (a margin of 3x for an
  // oversubscribed CI), and the trained weights stay right.
  TempDir dir;
  const std::vector<std::string> words = {"run", "pipeline", "--stages", "3", "--layers", "6",
                                          "--backend", "mpi", "--json"};
  const ProgramResult plain = RunMpi(3, words, dir.path());
  ASSERT_EQ(plain.exit_code, 0) << Describe(plain);
  std::vector<std::string> slowed = words;
  slowed.insert(slowed.end(), {"--slow-rank", "1:10"});
  const ProgramResult slow = RunMpi(3, slowed, dir.path());
  ASSERT_EQ(slow.exit_code, 0) << Describe(slow);
  const test_util::Json a = test_util::JsonReader(plain.out).ParseDocument();
  const test_util::Json b = test_util::JsonReader(slow.out).ParseDocument();
  auto work = [](const test_util::Json& j) {
    const test_util::Json& stage = j["per_stage"].items[1];
    return stage["forward_us"].number + stage["backward_us"].number;
  };
  EXPECT_GT(work(b), 3 * work(a)) << "stage 1: plain " << work(a) << " us, at 1/10: " << work(b) << " us";
  EXPECT_TRUE(b["correct"].boolean) << slow.out;
}

TEST(MpiFaultSwitches, WhatTheBackendCannotDoIsOneLine) {
  TempDir dir;
  const ProgramResult r = test_util::RunProgram(
      SHARDLAB_CLI_PATH, {"run", "allreduce", "--size", "1K", "--backend", "mpi", "--fail-link", "0-1@1"}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_EQ(r.err, "shardlab-cli: error: --fail-link: the mpi backend runs real hardware, whose links cannot be "
                   "broken on request; only the simulator (backend sim) applies it\n");
}

}  // namespace
}  // namespace shardlab
