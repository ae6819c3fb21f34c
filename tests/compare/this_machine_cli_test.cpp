// `--topology this` from the command line: the model of one H200 holding 8
// virtual ranks from a device profile, recorded in the trace, rebuilt from
// the trace alone; and the clear refusal without a GPU or a profile.
#include <gtest/gtest.h>

#include <fstream>

#include "engine/compare/compare.h"
#include "engine/io/trace_reader.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

using test_util::Describe;
using test_util::ProgramResult;
using test_util::RunProgram;
using test_util::TempDir;

const std::string kCli = SHARDLAB_CLI_PATH;
const std::string kProfile = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200.toml";
const std::string kRing = std::string(SHARDLAB_TEST_DATA_DIR) + "/traces/h200-ring8-64M-warm.json";

TEST(ThisMachineCli, OneH200HoldingEightVirtualRanksIsRecordedAndRebuiltFromTheTrace) {
  TempDir dir;
  const std::string first = (dir.path() / "model.json").string();
  const ProgramResult r = RunProgram(kCli, {"run", "allreduce", "--ranks", "8", "--size", "64M", "--topology",
                                            "this", "--device-profile", kProfile, "--timing-only", "--trace", first},
                                     dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("8 ranks as virtual devices on GPU 0 sharing its HBM"), std::string::npos) << r.out;
  const LoadedTrace trace = ReadChromeTraceFile(first);
  ASSERT_TRUE(trace.machine.has_value());
  EXPECT_EQ(trace.machine->gpu_model, "NVIDIA H200");
  EXPECT_EQ(trace.machine->gpus, 1);
  EXPECT_EQ(trace.machine->rank_to_gpu, std::vector<int>(8, 0));
  ASSERT_TRUE(trace.machine->profile.has_value());
  EXPECT_NEAR(*trace.machine->profile->memory_gbps, 4101.005926107487, 1e-6);
  EXPECT_EQ(trace.topology.num_gpus(), 1);  // the machine itself, not the plan's 8

  // From the trace alone (no profile flag): the same model, the same times.
  const std::string second = (dir.path() / "again.json").string();
  const ProgramResult again = RunProgram(kCli, {"run", "allreduce", "--size", "64M", "--topology", "this",
                                                "--machine-from", first, "--timing-only", "--trace", second},
                                         dir.path());
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  const Comparison c = CompareRuns(RunFromTrace(trace), RunFromTrace(ReadChromeTraceFile(second)));
  EXPECT_DOUBLE_EQ(c.run.ratio(), 1.0);
  // And it compares with the recorded H200 run of the same plan.
  const ProgramResult cmp = RunProgram(kCli, {"compare", kRing, first}, dir.path());
  EXPECT_EQ(cmp.exit_code, 0) << Describe(cmp);
  EXPECT_NE(cmp.out.find("The biggest contributor"), std::string::npos) << cmp.out;
}

TEST(ThisMachineCli, ARecordedPlacementIsModelledAsRecordedAndOnlyForItsRanks) {
  TempDir dir;
  const std::string round_robin = (dir.path() / "rr.json").string();
  const ProgramResult r = RunProgram(kCli, {"run", "allreduce", "--ranks", "4", "--size", "1M", "--topology", "this",
                                            "--device-profile", kProfile, "--gpus", "2", "--timing-only", "--trace",
                                            round_robin},
                                     dir.path());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ASSERT_EQ(ReadChromeTraceFile(round_robin).machine->rank_to_gpu, (std::vector<int>{0, 1, 0, 1}));
  // The same trace with the ranks placed in blocks.
  std::string text = test_util::ReadWholeFile(round_robin);
  const std::size_t key = text.find("\"placement\"");
  ASSERT_NE(key, std::string::npos);
  const std::size_t open = text.find('[', key), close = text.find(']', key);
  text.replace(open, close - open + 1, "[0,0,1,1]");
  const std::string blocks = (dir.path() / "blocks.json").string();
  std::ofstream(blocks) << text;

  const ProgramResult b = RunProgram(kCli, {"run", "allreduce", "--size", "1M", "--topology", "this", "--machine-from",
                                            blocks, "--timing-only"},
                                     dir.path());
  ASSERT_EQ(b.exit_code, 0) << Describe(b);
  EXPECT_NE(b.out.find("4 ranks as virtual devices (on GPUs 0 0 1 1)"), std::string::npos) << b.out;
  // Blocks fit only four ranks; the CUDA backend's rule (r mod N) fits any.
  const ProgramResult eight = RunProgram(kCli, {"run", "allreduce", "--ranks", "8", "--size", "1M", "--topology",
                                                "this", "--machine-from", blocks, "--timing-only"},
                                         dir.path());
  EXPECT_EQ(eight.exit_code, 2) << Describe(eight);
  EXPECT_NE(eight.err.find(blocks + ": otherData.machine.placement: 4 entries (one GPU per rank) for a plan of 8 ranks"),
            std::string::npos)
      << eight.err;
  const ProgramResult rule = RunProgram(kCli, {"run", "allreduce", "--ranks", "8", "--size", "1M", "--topology",
                                               "this", "--machine-from", round_robin, "--timing-only"},
                                        dir.path());
  EXPECT_EQ(rule.exit_code, 0) << Describe(rule);
  EXPECT_NE(rule.out.find("8 ranks as virtual devices (rank r on GPU r mod 2)"), std::string::npos) << rule.out;
}

TEST(ThisMachineCli, WithoutAGpuOrAProfileItSaysWhatToGive) {
  TempDir dir;
  const ProgramResult r = RunProgram(kCli, {"run", "allreduce", "--topology", "this"}, dir.path());
  // (On a machine with a GPU the model is built from it instead.)
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is present: --topology this detected it";
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("--device-profile FILE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--machine-from TRACE"), std::string::npos) << r.err;
  // A trace that predates the machine record needs the profile too.
  const ProgramResult old = RunProgram(kCli, {"run", "allreduce", "--topology", "this", "--machine-from", kRing},
                                       dir.path());
  EXPECT_EQ(old.exit_code, 2) << Describe(old);
  EXPECT_NE(old.err.find("does not record the machine it ran on"), std::string::npos) << old.err;
  const ProgramResult assumed = RunProgram(kCli, {"run", "allreduce", "--ranks", "8", "--size", "1M", "--topology",
                                                  "this", "--machine-from", kRing, "--device-profile", kProfile},
                                           dir.path());
  EXPECT_EQ(assumed.exit_code, 0) << Describe(assumed);
  EXPECT_NE(assumed.out.find("assumed 1 GPU (the default; --gpus N)"), std::string::npos) << assumed.out;
}

TEST(ThisMachineCli, CompareSimIsForARealRunAndNamesItsModel) {
  TempDir dir;
  const ProgramResult on_sim = RunProgram(kCli, {"run", "allreduce", "--compare", "sim"}, dir.path());
  EXPECT_EQ(on_sim.exit_code, 2) << Describe(on_sim);
  EXPECT_NE(on_sim.err.find("this run is the simulator already"), std::string::npos) << on_sim.err;
  const ProgramResult unknown = RunProgram(kCli, {"run", "allreduce", "--compare", "roofline"}, dir.path());
  EXPECT_EQ(unknown.exit_code, 2) << Describe(unknown);
  EXPECT_NE(unknown.err.find("unknown model 'roofline' (use sim)"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace shardlab
