// `run pipeline --backend mpi --compare sim`: a real (host MPI) run of a
// training command against the simulator's model of the machine, the same
// way collectives do it; the model's column equals the span of the
// simulator's own run of that model (`--topology this`), read from its trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "engine/io/trace_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

using test_util::Describe;
using test_util::ProgramResult;
using test_util::TempDir;

const std::string kProfile = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200.toml";

TEST(MpiCompareModel, APipelineOnTheMpiBackendIsComparedWithTheModelOfTheMachine) {
  TempDir dir;
  const ProgramResult r = test_util::RunCliUnderMpi(
      SHARDLAB_CLI_PATH, 4,
      {"run", "pipeline", "--backend", "mpi", "--stages", "4", "--microbatches", "8", "--compare", "sim",
       "--device-profile", kProfile},
      dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("# --compare sim: the model of 1 NVIDIA H200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("164 ops matched by id"), std::string::npos) << r.out;
  // The model column of the run row.
  double model_us = -1;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name;
    int ops = 0;
    double a = 0, b = 0;
    if (line.rfind("  run ", 0) == 0 && (words >> name >> ops >> a >> b) && ops == 164) model_us = b;
  }
  ASSERT_GT(model_us, 0) << r.out;

  // Independently: the simulator on --topology this with the same profile.
  const std::string trace = (dir.path() / "model.json").string();
  const ProgramResult sim = test_util::RunProgram(
      SHARDLAB_CLI_PATH,
      {"run", "pipeline", "--stages", "4", "--microbatches", "8", "--topology", "this", "--device-profile", kProfile,
       "--gpus", "1", "--timing-only", "--trace", trace},
      dir.path());
  ASSERT_EQ(sim.exit_code, 0) << Describe(sim);
  const LoadedTrace t = ReadChromeTraceFile(trace);
  double first = 1e300, last = -1e300;
  for (const Event& e : t.events) {
    first = std::min(first, e.start_ns);
    last = std::max(last, e.end_ns);
  }
  EXPECT_NEAR(model_us, (last - first) / 1000.0, 0.051);
}

TEST(MpiCompareModel, AMeasuredTraceRecordsItsSettingsAndIsModelledWithoutThem) {
  TempDir dir;
  const std::string trace = (dir.path() / "mpi.json").string();
  const ProgramResult r = test_util::RunCliUnderMpi(
      SHARDLAB_CLI_PATH, 4,
      {"run", "pipeline", "--backend", "mpi", "--stages", "4", "--microbatches", "8", "--trace", trace}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ReadChromeTraceFile(trace).plan_settings, "pipeline stages=4 microbatches=8");
  const ProgramResult cmp = test_util::RunProgram(
      SHARDLAB_CLI_PATH, {"compare", trace, "--model", "--device-profile", kProfile}, dir.path());
  ASSERT_EQ(cmp.exit_code, 0) << Describe(cmp);
  EXPECT_NE(cmp.out.find("plan rebuilt from 'pipeline stages=4 microbatches=8'"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("164 ops matched by id"), std::string::npos) << cmp.out;
}

TEST(MpiCompareModel, CompareSimOnTheSimulatorIsRefused) {
  TempDir dir;
  const ProgramResult r =
      test_util::RunProgram(SHARDLAB_CLI_PATH, {"run", "tp-mlp", "--compare", "sim"}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("this run is the simulator already"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace shardlab
