// The mpi backend end to end: each test starts a real job through
// `shardlab-cli mpirun -np N -- run ...` (OpenMPI's mpirun underneath,
// oversubscribed on the CI's 2 cores) and checks what a user sees: results
// equal to the single-buffer reference on every rank count, the same events
// as the simulator's, and one clear message when a rank dies or skips a
// collective, with no process of the job left behind.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "engine/core/backend_traits.h"
#include "engine/launch/mpi_launcher.h"
#include "tests/common/json_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;
using test_util::Describe;
using test_util::Json;
using test_util::ProgramResult;
using test_util::TempDir;

ProgramResult RunCli(const std::vector<std::string>& args, const fs::path& dir) {
  return test_util::RunProgram(SHARDLAB_CLI_PATH, args, dir);
}

ProgramResult RunMpi(int processes, const std::vector<std::string>& words, const fs::path& dir) {
  return test_util::RunCliUnderMpi(SHARDLAB_CLI_PATH, processes, words, dir);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A word no other process on the machine has in its command line.
std::string UniqueSeed() { return std::to_string(900000000 + getpid() % 1000000) + "7"; }

/// True when no process's command line contains `marker` (the job is gone).
bool NoProcessWith(const std::string& marker) {
  // "[9]00..." matches "900..." but not this shell's own command line.
  const std::string command =
      "pgrep -f -- 'seed [" + marker.substr(0, 1) + "]" + marker.substr(1) + "' >/dev/null";
  return std::system(command.c_str()) != 0;
}

// --- Results equal the reference -------------------------------------------------

struct CollectiveCase {
  int processes;
  std::string collective;
  std::string algo;
};

class MpiCollective : public ::testing::TestWithParam<CollectiveCase> {};

TEST_P(MpiCollective, MatchesTheSingleBufferReferenceOnEveryRank) {
  const CollectiveCase& c = GetParam();
  TempDir dir;
  std::vector<std::string> words = {"run", c.collective, "--ranks", std::to_string(c.processes),
                                    "--size", "4K", "--backend", "mpi", "--json"};
  if (!c.algo.empty()) {
    words.push_back("--algo");
    words.push_back(c.algo);
  }
  const ProgramResult r = RunMpi(c.processes, words, dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const Json json = test_util::JsonReader(r.out).ParseDocument();  // rank 0 alone printed it
  EXPECT_EQ(json["backend"].text, "mpi");
  if (c.processes > 1) {  // one rank has no ops, so no events to take a clock from
    EXPECT_EQ(json["clock"].text, "host (MPI, aligned)");
    EXPECT_EQ(json["clock"].text, ClockKindName(BackendTraitsOf("mpi").event_clock));  // as it declares
  }
  EXPECT_TRUE(json["checked"].boolean) << r.out;
  EXPECT_TRUE(json["correct"].boolean) << r.out;
  EXPECT_EQ(json["wrong"].number, 0);
  EXPECT_EQ(json["events"].number, json["ops"].number);
}

INSTANTIATE_TEST_SUITE_P(
    RanksAndAlgorithms, MpiCollective,
    ::testing::Values(CollectiveCase{1, "allreduce", "ring"}, CollectiveCase{2, "allreduce", "ring"},
                      CollectiveCase{3, "allreduce", "ring"}, CollectiveCase{4, "allreduce", "ring"},
                      CollectiveCase{8, "allreduce", "ring"}, CollectiveCase{1, "allreduce", "tree"},
                      CollectiveCase{2, "allreduce", "tree"}, CollectiveCase{3, "allreduce", "tree"},
                      CollectiveCase{4, "allreduce", "tree"}, CollectiveCase{8, "allreduce", "tree"},
                      CollectiveCase{3, "reducescatter", ""}, CollectiveCase{3, "allgather", ""},
                      CollectiveCase{3, "broadcast", ""}, CollectiveCase{3, "reduce", ""},
                      CollectiveCase{3, "alltoall", ""}),
    [](const ::testing::TestParamInfo<CollectiveCase>& p) {
      return p.param.collective + (p.param.algo.empty() ? "" : "_" + p.param.algo) + "_" +
             std::to_string(p.param.processes) + "ranks";
    });

TEST(MpiScenario, PipelineTrainsLikeTheSingleDeviceModel) {
  TempDir dir;
  const ProgramResult r = RunMpi(4, {"run", "pipeline", "--stages", "4", "--layers", "4",
                                     "--width", "32", "--batch", "8", "--microbatches", "4",
                                     "--backend", "mpi"},
                                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "# Result: correct")) << r.out;
}

TEST(MpiScenario, TensorParallelLayerEqualsTheSingleDeviceLayer) {
  TempDir dir;
  const ProgramResult r = RunMpi(2, {"run", "tp-mlp", "--tp", "2", "--backend", "mpi"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "# Result: correct")) << r.out;
}

TEST(MpiScenario, ZeroStage3EqualsTheSingleDeviceModel) {
  TempDir dir;
  const ProgramResult r =
      RunMpi(4, {"run", "zero", "--ranks", "4", "--stage", "3", "--backend", "mpi"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "# Result: correct")) << r.out;
}

TEST(MpiScenario, ThreeDGridWithZero1EqualsTheSingleDeviceStep) {
  TempDir dir;
  const ProgramResult r = RunMpi(8, {"run", "3d", "--dp", "2", "--pp", "2", "--tp", "2", "--zero",
                                     "1", "--backend", "mpi"},
                                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "# Result: correct")) << r.out;
}

// The lines between two markers of a report (both excluded).
std::string Section(const std::string& text, const std::string& from, const std::string& to) {
  const std::size_t a = text.find(from);
  if (a == std::string::npos) return "";
  const std::size_t b = text.find(to, a);
  return text.substr(a + from.size(), b == std::string::npos ? std::string::npos : b - a - from.size());
}

TEST(MpiScenario, MoeWithAHotExpertRoutesAndSendsWhatTheSimulatorDoes) {
  TempDir dir;
  const std::vector<std::string> words = {"run", "moe", "--skew", "hot"};
  std::vector<std::string> on_mpi = words;
  on_mpi.insert(on_mpi.end(), {"--backend", "mpi"});
  const ProgramResult mpi = RunMpi(4, on_mpi, dir.path());
  ASSERT_EQ(mpi.exit_code, 0) << Describe(mpi);
  EXPECT_TRUE(Contains(mpi.out, "# Result: correct")) << mpi.out;
  const ProgramResult sim = RunCli(words, dir.path());
  ASSERT_EQ(sim.exit_code, 0) << Describe(sim);
  // Routing, capacity drops and the all-to-all's bytes per rank do not depend
  // on the backend (the expert-time column does, so compare up to it).
  const std::string tokens = Section(sim.out, "# Tokens per expert", "# All-to-all");
  ASSERT_TRUE(Contains(tokens, "dropped 192 of 2048")) << sim.out;  // the hot expert overflows
  EXPECT_EQ(Section(mpi.out, "# Tokens per expert", "# All-to-all"), tokens);
  const std::string bytes_sim = Section(sim.out, "#  rank     rows", "#   hand count");
  ASSERT_FALSE(bytes_sim.empty()) << sim.out;
  const std::string bytes_mpi = Section(mpi.out, "#  rank     rows", "#   hand count");
  auto strip_times = [](const std::string& table) {  // rank, rows and the four byte counts
    std::istringstream lines(table);
    std::string line, out;
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      std::string field;
      for (int i = 0; i < 6 && fields >> field; ++i) out += field + " ";
      out += "\n";
    }
    return out;
  };
  EXPECT_EQ(strip_times(bytes_mpi), strip_times(bytes_sim));
  EXPECT_TRUE(Contains(mpi.out, "hand count: every rank's bytes match")) << mpi.out;
}

// --- The same events as the simulator ---------------------------------------------

using EventKey = std::tuple<int, int, int, double, int, int>;  // op, pid, step, bytes, seq, peer

std::vector<EventKey> TraceSlices(const fs::path& path) {
  const Json trace = test_util::JsonReader(test_util::ReadWholeFile(path)).ParseDocument();
  std::vector<EventKey> keys;
  for (const Json& e : trace["traceEvents"].items) {
    if (e["ph"].text != "X" || !e.Has("args") || !e["args"].Has("op")) continue;
    const Json& a = e["args"];
    keys.emplace_back(static_cast<int>(a["op"].number), static_cast<int>(e["pid"].number),
                      static_cast<int>(a["step"].number), a["bytes"].number,
                      static_cast<int>(a["seq"].number),
                      a.Has("peer") ? static_cast<int>(a["peer"].number) : -1);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST(MpiEvents, SameOpsRanksStepsAndBytesAsTheSimulator) {
  TempDir dir;
  const fs::path mpi_trace = dir.path() / "mpi.json", sim_trace = dir.path() / "sim.json";
  const std::vector<std::string> words = {"run", "allreduce", "--ranks", "4", "--size", "8K"};
  std::vector<std::string> mpi_words = words;
  mpi_words.insert(mpi_words.end(), {"--backend", "mpi", "--trace", mpi_trace.string()});
  const ProgramResult m = RunMpi(4, mpi_words, dir.path());
  ASSERT_EQ(m.exit_code, 0) << Describe(m);
  std::vector<std::string> sim_words = words;
  sim_words.insert(sim_words.end(), {"--trace", sim_trace.string()});
  const ProgramResult s = RunCli(sim_words, dir.path());
  ASSERT_EQ(s.exit_code, 0) << Describe(s);

  const std::vector<EventKey> from_mpi = TraceSlices(mpi_trace), from_sim = TraceSlices(sim_trace);
  ASSERT_FALSE(from_sim.empty());
  EXPECT_EQ(from_mpi.size(), from_sim.size());
  EXPECT_TRUE(from_mpi == from_sim) << "the mpi run's events differ from the simulator's";
}

// --- Faults ---------------------------------------------------------------------

TEST(MpiFaults, ARankThatExitsIsNamedAndNoProcessIsLeft) {
  TempDir dir;
  const std::string seed = UniqueSeed();
  const ProgramResult r = RunMpi(4, {"run", "allreduce", "--ranks", "4", "--size", "64K",
                                     "--backend", "mpi", "--seed", seed, "--inject-fault",
                                     "exit:rank=1,op=3"},
                                 dir.path());
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "shardlab-cli: error: rank 1 exited with code 3 during the run; "
                              "mpirun stopped the other ranks"))
      << Describe(r);
  EXPECT_TRUE(NoProcessWith(seed)) << "a process of the job is still running";
}

TEST(MpiFaults, ARankKilledByASignalIsNamed) {
  TempDir dir;
  const std::string seed = UniqueSeed();
  const ProgramResult r = RunMpi(3, {"run", "allreduce", "--ranks", "3", "--size", "64K",
                                     "--backend", "mpi", "--seed", seed, "--inject-fault",
                                     "kill:rank=2,op=2"},
                                 dir.path());
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "rank 2 was killed by signal 9")) << Describe(r);
  EXPECT_TRUE(NoProcessWith(seed));
}

TEST(MpiFaults, ARankThatSkipsACollectiveIsNamedWithItsSequenceNumber) {
  TempDir dir;
  const std::string seed = UniqueSeed();
  const ProgramResult r = RunMpi(4, {"run", "allreduce", "--ranks", "4", "--size", "1K",
                                     "--backend", "mpi", "--seed", seed, "--iters", "5",
                                     "--inject-fault", "skip:rank=2,iter=3", "--mpi-timeout", "3s"},
                                 dir.path());
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "no progress for 3 s (--mpi-timeout): rank 2 never joined "
                              "collective #3"))
      << Describe(r);
  EXPECT_TRUE(NoProcessWith(seed));
}

TEST(MpiFaults, ARankThatStopsAnsweringIsNamed) {
  TempDir dir;
  const std::string seed = UniqueSeed();
  const ProgramResult r = RunMpi(3, {"run", "allreduce", "--ranks", "3", "--size", "1K",
                                     "--backend", "mpi", "--seed", seed, "--inject-fault",
                                     "stall:rank=1,op=2", "--mpi-timeout", "2s"},
                                 dir.path());
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "rank 1 stopped answering")) << Describe(r);
  EXPECT_TRUE(NoProcessWith(seed));
}

// --- Bad input --------------------------------------------------------------------

TEST(MpiInput, RanksMustEqualTheProcessCount) {
  TempDir dir;
  const ProgramResult r =
      RunMpi(3, {"run", "allreduce", "--ranks", "4", "--size", "1K", "--backend", "mpi"}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "the plan has 4 ranks (--ranks 4) but mpirun started 3 processes"))
      << Describe(r);
}

TEST(MpiInput, MpiFlagsNeedTheMpiBackend) {
  TempDir dir;
  const ProgramResult r =
      RunCli({"run", "allreduce", "--ranks", "2", "--size", "1K", "--mpi-timeout", "5s"}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "--mpi-timeout: only for --backend mpi")) << Describe(r);
}

// --- The launcher as the app calls it ----------------------------------------------

TEST(MpiLauncherJob, CapturesRankZerosReportAndNamesADeadRank) {
  MpiLaunch launch;
  launch.processes = 2;
  launch.timeout_s = 120;
  launch.echo_stderr = false;
  launch.capture_stdout = true;
  launch.command = {SHARDLAB_CLI_PATH, "run", "allreduce", "--size", "1K", "--backend", "mpi",
                    "--json"};
  const MpiLaunchResult ok = RunMpiJob(launch);
  EXPECT_EQ(ok.exit_code, 0) << ok.stderr_text;
  EXPECT_TRUE(ok.failure.empty()) << ok.failure;
  const Json json = test_util::JsonReader(ok.stdout_text).ParseDocument();
  EXPECT_EQ(json["ranks"].number, 2);
  EXPECT_TRUE(json["correct"].boolean);

  launch.command.insert(launch.command.end(), {"--inject-fault", "exit:rank=1,op=1"});
  const MpiLaunchResult dead = RunMpiJob(launch);
  EXPECT_NE(dead.exit_code, 0);
  EXPECT_EQ(dead.failure, "rank 1 exited with code 3 during the run; mpirun stopped the other ranks")
      << dead.stderr_text;
}

}  // namespace
}  // namespace shardlab
