// "This machine" in the app (this_machine_choice.h) and "Emulate links"
// (link_emulation.h): the app's run on the model of one H200 holding 8
// virtual ranks takes the time the engine gives the CLI's
// `run allreduce --ranks 8 --size 64M --topology this --device-profile
// h200.toml` (rebuilt here from the engine's parts, and read from the CLI
// itself); without a GPU or a profile the app says why in one line and does
// not run; a bad profile gets its file:line error; the emulation switch maps
// to RunOptions only on a real backend.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "app/gui/model/link_emulation.h"
#include "app/gui/model/scenario_fields.h"
#include "app/gui/model/session.h"
#include "app/gui/model/this_machine_choice.h"
#include "engine/run/executor.h"
#include "engine/run/machine_model.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/topology/device_profile.h"
#include "tests/gui_model/poll_session.h"

namespace shardlab::gui {
namespace {

const std::string kProfile = SHARDLAB_TEST_DATA_DIR "/traces/h200.toml";

using test::PollUntilDone;

ScenarioSettings ThisMachineAllReduce(const std::string& profile) {
  ScenarioSettings s;  // the spec's defaults, as the CLI's: ring, auto ring order, float sum
  s.scenario = "allreduce";
  s.SetParam("ranks", "8");
  s.SetParam("size", "64M");
  s.topology = kThisMachineTopology;
  s.device_profile = profile;
  s.SetParam("timing_only", "true");  // the simulated time is the same with the data (seconds of host arithmetic)
  return s;
}

/// The skip reason when this process detects a GPU: the tests below are
/// about the machine modelled from a profile.
bool GpuDetectedHere() { return ThisMachineUnavailable("").empty(); }

/// The CLI's figure, rebuilt from the engine: N GPUs of the profile, the
/// ring over 8 virtual devices, the simulator on the physical GPU with the
/// model's placement, shared HBM and per-op issue cost.
TimeNs EngineAllReduceNs(const std::string& profile, int ranks, Bytes size) {
  const MachineModel model = BuildMachineModel(MachineFromProfile(LoadDeviceProfile(profile), 1, "test"), ranks);
  CollectiveScenario scenario;
  scenario.kind = CollectiveKind::kAllReduce;
  scenario.algo = CollectiveAlgo::kRing;
  scenario.ranks = ranks;
  scenario.size_bytes = size;
  scenario.topology = "this";
  scenario.timing_only = true;  // the time does not depend on the data
  std::unique_ptr<PreparedCollective> prepared = PrepareCollective(scenario, model.plan_topology);
  RunOptions options = CollectiveRunOptions(scenario);
  Topology run_topology = prepared->topology;
  ApplyMachineModel(model, &options, &run_topology);
  Executor executor(CreateBackend("sim"), prepared->plan, run_topology, options);
  CountingSink sink;
  executor.RunToEnd(sink);
  EXPECT_EQ(executor.state(), ExecutorState::kDone) << executor.error();
  return sink.end_ns;
}

/// The CLI's output of `args`, stdout only.
std::string RunCli(const std::string& args) {
  std::string out;
  FILE* pipe = ::popen((std::string(SHARDLAB_CLI_PATH) + " " + args + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  ::pclose(pipe);
  return out;
}

TEST(ThisMachineSession, AnH200ProfileWith8RanksRunsTheTimeTheCliModelGives) {
  if (GpuDetectedHere()) GTEST_SKIP() << "a GPU is detected here: the model is the detected machine's";
  const ScenarioSettings settings = ThisMachineAllReduce(kProfile);
  Session session;
  ASSERT_EQ(session.Check(settings), "");
  EXPECT_NE(session.checked_machine().find("8 ranks as virtual devices on GPU 0 sharing its HBM"), std::string::npos)
      << session.checked_machine();
  ASSERT_TRUE(session.Start(settings)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  const TimeNs app_ns = test::Outcome<CollectiveOutcomeSummary>(session).metrics.time_ns;

  const TimeNs engine_ns = EngineAllReduceNs(kProfile, 8, Bytes{64} << 20);
  // One deterministic simulation of the same plan, machine and options.
  EXPECT_NEAR(app_ns, engine_ns, 1e-9 * engine_ns);
  EXPECT_NE(session.machine_description().find("1 NVIDIA H200"), std::string::npos) << session.machine_description();
  EXPECT_NE(session.machine_description().find("8 ranks as virtual devices"), std::string::npos);

  // The CLI itself prints the time in us with one decimal.
  const std::string cli = RunCli("run allreduce --ranks 8 --size 64M --timing-only --topology this --device-profile " + kProfile);
  if (cli.find("no GPU here") == std::string::npos) GTEST_SKIP() << "the CLI detected a GPU:\n" << cli;
  const std::size_t row = cli.find("    67108864 ");
  ASSERT_NE(row, std::string::npos) << cli;
  char type[16], redop[16];
  long long bytes = 0, count = 0, root = 0;
  double time_us = 0;
  ASSERT_EQ(std::sscanf(cli.c_str() + row, "%lld %lld %15s %15s %lld %lf", &bytes, &count, type, redop, &root, &time_us),
            6)
      << cli;
  EXPECT_NEAR(app_ns / 1e3, time_us, 0.05 + 1e-9) << cli;
}

TEST(ThisMachineSession, WithoutAGpuOrAProfileItSaysWhyInOneLineAndDoesNotRun) {
  if (GpuDetectedHere()) GTEST_SKIP() << "a GPU is detected here";
  const ScenarioSettings settings = ThisMachineAllReduce("");
  Session session;
  const std::string why = session.Check(settings);
  EXPECT_EQ(why, "no GPU detected here: give a device profile (shardlab-cli calibrate's TOML) to model one");
  EXPECT_EQ(why, ThisMachineUnavailable(""));
  EXPECT_EQ(why.find('\n'), std::string::npos);
  EXPECT_EQ(session.checked_machine(), "");
  EXPECT_FALSE(session.Start(settings));
  EXPECT_EQ(session.state(), SessionState::kFailed);
  EXPECT_EQ(session.error(), why);
  EXPECT_EQ(session.plan(), nullptr);
  EXPECT_EQ(session.machine_description(), "");
}

TEST(ThisMachineSession, ABadProfileGetsItsFileAndLine) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "shardlab-this-machine-test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.toml").string();
  {
    std::ofstream out(path);
    out << "[device]\nmodel = \"NVIDIA H200\"\nmemory_gbps = fast\n";
  }
  Session session;
  const std::string why = session.Check(ThisMachineAllReduce(path));
  EXPECT_EQ(why.rfind(path + ":3:", 0), 0u) << why;
  EXPECT_FALSE(session.Start(ThisMachineAllReduce(path)));
  EXPECT_EQ(session.plan(), nullptr);
  std::filesystem::remove_all(dir);
}

TEST(ThisMachineSession, AScenarioItIsNotModelledForSaysTheAppModelsItForCollectives) {
  ScenarioSettings s;
  s.scenario = "moe";  // pipeline, tp and zero: this_machine_training_test.cpp
  s.topology = kThisMachineTopology;
  s.device_profile = kProfile;
  Session session;
  const std::string why = session.Check(s);
  EXPECT_NE(why.find("for collectives"), std::string::npos) << why;
}

TEST(LinkEmulation, ACheckedBoxEmulatesOnCudaAndIsRefusedOnTheSimulator) {
  ScenarioSettings s;
  s.emulate_links = true;
  s.backend = "cuda";
  EXPECT_EQ(LinkEmulationRefusal("cuda"), "");
  EXPECT_TRUE(LinkEmulationOptions(s).emulate_links);
  s.emulate_links = false;
  EXPECT_FALSE(LinkEmulationOptions(s).emulate_links);

  s.emulate_links = true;
  s.backend = "sim";
  EXPECT_EQ(LinkEmulationRefusal("sim"), "the simulator models links already");
  EXPECT_FALSE(LinkEmulationOptions(s).emulate_links);
  s.backend = "mpi";
  EXPECT_NE(LinkEmulationRefusal("mpi"), "");
  EXPECT_FALSE(LinkEmulationOptions(s).emulate_links);
}

TEST(LinkEmulation, CudaWithEmulationHereStillEndsWithTheWorkersNoDeviceMessage) {
  ScenarioSettings s;
  s.scenario = "allreduce";
  s.SetParam("ranks", "4");
  s.SetParam("size", "1K");
  s.topology = "dgx-a100";
  s.backend = "cuda";
  s.in_worker = true;
  s.emulate_links = true;
  Session session;
  session.SetWorkerProgram(SHARDLAB_CLI_PATH);
  ASSERT_EQ(session.Check(s), "");
  if (!session.Start(s)) {
    EXPECT_NE(session.error().find("CUDA"), std::string::npos) << session.error();
    return;
  }
  ASSERT_TRUE(PollUntilDone(session));
  if (session.state() == SessionState::kDone) GTEST_SKIP() << "a GPU ran it here";
  EXPECT_NE(session.error().find("CUDA"), std::string::npos) << session.error();
  EXPECT_EQ(session.error().find("emulate"), std::string::npos) << "the flag itself was refused: " << session.error();
}

// The model runs on the machine's own GPUs: a link of the plan's machine
// has nothing to throttle or break there, so such a fault is refused rather
// than silently dropped; a slowed rank is the rank's own and stays. A real
// run in the worker is refused too: the app sees no GPU to plan for.
TEST(ThisMachineSession, LinkFaultsAndRealRunsAreRefusedWithTheirReason) {
  Session session;
  const ScenarioSettings plain = ThisMachineAllReduce(kProfile);
  const ScenarioSpec& spec = *SpecOf(plain.scenario);
  for (const auto& [param, value] : {std::pair<const char*, const char*>{"throttle_link", "0-1:10"},
                                     {"fail_link", "0-1@2"}}) {
    ScenarioSettings s = plain;
    SetParamText(&s, spec, *spec.FindParam(param), value);
    const std::string why = session.Check(s);
    EXPECT_EQ(why.rfind(std::string(param) + ": the model of this machine runs on its own GPUs", 0), 0u) << why;
    EXPECT_FALSE(session.Start(s));
  }
  ScenarioSettings slowed = plain;
  SetParamText(&slowed, spec, *spec.FindParam("slow_rank"), "1:2");
  if (!GpuDetectedHere()) EXPECT_EQ(session.Check(slowed), "");

  ScenarioSettings real = plain;
  real.in_worker = true;
  real.backend = "cuda";
  EXPECT_NE(session.Check(real).find("a real run on This machine runs from the CLI for now"), std::string::npos)
      << session.Check(real);
}

}  // namespace
}  // namespace shardlab::gui
