// "This machine" for the training scenarios (Session::MachineTopology): the
// app's pipeline, tp and zero runs on the model of one H200 from its
// profile take the step time the engine gives the same settings on that
// model (rebuilt here from the engine's parts: BuildMachineModel, the
// scenario's Prepare*, ApplyMachineModel) and the time the CLI's
// `run pipeline|tp-mlp|zero --topology this --device-profile h200.toml`
// prints; the metrics panel's machine line is the model's; a scenario the
// app does not model it for (moe) is refused in one line.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "app/gui/model/session.h"
#include "app/gui/model/this_machine_choice.h"
#include "engine/run/executor.h"
#include "engine/run/machine_model.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"
#include "engine/topology/device_profile.h"
#include "tests/gui_model/poll_session.h"

namespace shardlab::gui {
namespace {

const std::string kProfile = SHARDLAB_TEST_DATA_DIR "/traces/h200.toml";

bool GpuDetectedHere() { return ThisMachineUnavailable("").empty(); }

using test::PollUntilDone;

ScenarioSettings OnThisMachine(const std::string& scenario) {
  ScenarioSettings s;  // the spec's defaults, as the CLI's
  s.scenario = scenario;
  s.topology = kThisMachineTopology;
  s.device_profile = kProfile;
  return s;
}

/// Runs `settings` in the app; the session when it finished.
std::unique_ptr<Session> RunInApp(const ScenarioSettings& settings) {
  auto session = std::make_unique<Session>();
  EXPECT_EQ(session->Check(settings), "");
  EXPECT_TRUE(session->Start(settings)) << session->error();
  EXPECT_TRUE(PollUntilDone(*session));
  EXPECT_EQ(session->state(), SessionState::kDone) << session->error();
  return session;
}

/// The model of 1 GPU of the profile for `ranks` ranks, as the engine builds it.
MachineModel H200Model(int ranks) {
  return BuildMachineModel(MachineFromProfile(LoadDeviceProfile(kProfile), 1, "test"), ranks);
}

/// The spec's defaults with `set` applied ("name", "text").
ScenarioParams ParamsWith(const char* spec, std::initializer_list<std::pair<const char*, const char*>> set) {
  const ScenarioSpec* found = FindScenario(spec);
  EXPECT_NE(found, nullptr) << spec;
  ScenarioParams params(*found);
  params.Set("topology", "this");
  for (const auto& [name, text] : set) params.Set(name, text);
  return params;
}

/// The simulator's run of `plan` on `model` (placement, shared HBM, issue
/// cost, the machine's GPUs), as the CLI's ApplyThisMachine sets it up.
template <class Prepared, class Summarize>
auto RunOnModel(const Prepared& prepared, const Plan& plan, const MachineModel& model, Summarize summarize) {
  RunOptions options;
  options.seed = prepared.scenario.seed;
  options.timing_only = prepared.scenario.timing_only;
  Topology run_topology = prepared.topology;
  ApplyMachineModel(model, &options, &run_topology);
  Executor executor(CreateBackend("sim"), plan, run_topology, options);
  VectorSink sink;
  executor.RunToEnd(sink);
  EXPECT_EQ(executor.state(), ExecutorState::kDone) << executor.error();
  return summarize(prepared, sink.events, executor.backend(), &executor.plan());
}

/// The CLI's "step_time_us" for `args` (--json), or -1 when it detected a GPU.
double CliStepUs(const std::string& args) {
  std::string out;
  const std::string command = std::string(SHARDLAB_CLI_PATH) + " " + args + " --json 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -2;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  ::pclose(pipe);
  const std::size_t at = out.find("\"step_time_us\": ");
  EXPECT_NE(at, std::string::npos) << command << "\n" << out;
  if (at == std::string::npos) return -2;
  return std::strtod(out.c_str() + at + 16, nullptr);
}

/// The JSON's 9 significant digits.
double CliBound(double us) { return 1e-8 * us + 1e-6; }

TEST(ThisMachineTraining, PipelineOnAnH200ProfileTakesTheEnginesAndTheClisTime) {
  if (GpuDetectedHere()) GTEST_SKIP() << "a GPU is detected here: the model is the detected machine's";
  ScenarioSettings settings = OnThisMachine("pipeline");
  settings.SetParam("stages", "4");
  settings.SetParam("microbatches", "8");
  const std::unique_ptr<Session> session = RunInApp(settings);
  ASSERT_EQ(session->state(), SessionState::kDone);
  const TimeNs app_ns = test::Outcome<PipelineOutcomeSummary>(*session).metrics.step_ns;
  EXPECT_NE(session->machine_description().find("4 ranks as virtual devices on GPU 0 sharing its HBM"),
            std::string::npos)
      << session->machine_description();
  EXPECT_EQ(session->checked_machine(), session->machine_description());

  const MachineModel model = H200Model(4);
  const PipelineScenario scenario = PipelineFromParams(ParamsWith("pipeline", {{"stages", "4"}, {"microbatches", "8"}}));
  const std::unique_ptr<PreparedPipeline> prepared = PreparePipeline(scenario, model.plan_topology);
  const PipelineOutcomeSummary engine =
      RunOnModel(*prepared, prepared->pipeline.plan, model,
                 [](const PreparedPipeline& p, std::span<const Event> e, const Backend& b, const Plan* ran) {
                   return SummarizePipeline(p, e, b, ran);
                 });
  // One deterministic simulation of the same plan, machine and options.
  EXPECT_NEAR(app_ns, engine.metrics.step_ns, 1e-9 * engine.metrics.step_ns);
  EXPECT_TRUE(test::Outcome<PipelineOutcomeSummary>(*session).check.correct);

  const double cli_us =
      CliStepUs("run pipeline --topology this --device-profile " + kProfile + " --stages 4 --microbatches 8");
  EXPECT_NEAR(app_ns / 1e3, cli_us, CliBound(cli_us));
}

TEST(ThisMachineTraining, TpOnAnH200ProfileTakesTheEnginesAndTheClisTime) {
  if (GpuDetectedHere()) GTEST_SKIP() << "a GPU is detected here";
  ScenarioSettings settings = OnThisMachine("tp");
  settings.SetParam("layer", "mlp");
  settings.SetParam("tp", "4");
  const std::unique_ptr<Session> session = RunInApp(settings);
  ASSERT_EQ(session->state(), SessionState::kDone);
  const TimeNs app_ns = test::Outcome<TpSummary>(*session).metrics.step_ns;
  EXPECT_NE(session->machine_description().find("4 ranks as virtual devices"), std::string::npos)
      << session->machine_description();

  const MachineModel model = H200Model(4);
  const TpScenario scenario = TpFromParams(ParamsWith("tp", {{"layer", "mlp"}, {"tp", "4"}}));
  const std::unique_ptr<PreparedTp> prepared = PrepareTp(scenario, model.plan_topology);
  const TpSummary engine = RunOnModel(*prepared, prepared->layer.plan, model,
                                      [](const PreparedTp& p, std::span<const Event> e, const Backend& b,
                                         const Plan* ran) { return SummarizeTp(p, e, b, ran); });
  EXPECT_NEAR(app_ns, engine.metrics.step_ns, 1e-9 * engine.metrics.step_ns);

  const double cli_us = CliStepUs("run tp-mlp --topology this --device-profile " + kProfile + " --tp 4");
  EXPECT_NEAR(app_ns / 1e3, cli_us, CliBound(cli_us));
}

TEST(ThisMachineTraining, ZeroOnAnH200ProfileTakesTheEnginesAndTheClisTime) {
  if (GpuDetectedHere()) GTEST_SKIP() << "a GPU is detected here";
  ScenarioSettings settings = OnThisMachine("zero");
  settings.SetParam("zero_stage", "3");
  settings.SetParam("ranks", "8");
  const std::unique_ptr<Session> session = RunInApp(settings);
  ASSERT_EQ(session->state(), SessionState::kDone);
  const TimeNs app_ns = test::Outcome<ZeroSummary>(*session).step_ns;
  EXPECT_NE(session->machine_description().find("8 ranks as virtual devices"), std::string::npos)
      << session->machine_description();

  const MachineModel model = H200Model(8);
  const ZeroScenario scenario = ZeroFromParams(ParamsWith("zero", {{"zero_stage", "3"}, {"ranks", "8"}}));
  const std::unique_ptr<PreparedZero> prepared = PrepareZero(scenario, model.plan_topology);
  const ZeroSummary engine = RunOnModel(*prepared, prepared->zero.plan, model,
                                        [](const PreparedZero& p, std::span<const Event> e, const Backend& b,
                                           const Plan* ran) { return SummarizeZero(p, e, b, ran); });
  EXPECT_NEAR(app_ns, engine.step_ns, 1e-9 * engine.step_ns);

  const double cli_us = CliStepUs("run zero --topology this --device-profile " + kProfile + " --zero-stage 3 --ranks 8");
  EXPECT_NEAR(app_ns / 1e3, cli_us, CliBound(cli_us));
}

TEST(ThisMachineTraining, OnAPresetTheTrainingRunHasNoMachineLine) {
  ScenarioSettings settings = OnThisMachine("pipeline");
  settings.topology = "dgx-a100";
  settings.device_profile.clear();
  const std::unique_ptr<Session> session = RunInApp(settings);
  EXPECT_EQ(session->machine_description(), "");
  EXPECT_EQ(session->checked_machine(), "");
}

TEST(ThisMachineTraining, MoeStillSaysInOneLineWhichScenariosTheAppModelsItFor) {
  ScenarioSettings settings = OnThisMachine("moe");
  Session session;
  const std::string why = session.Check(settings);
  EXPECT_EQ(why,
            "topology: the app models This machine for collectives, pipeline, tp and zero; choose a preset or a "
            "topology file for this scenario");
  EXPECT_EQ(session.checked_machine(), "");
  EXPECT_FALSE(session.Start(settings));
  EXPECT_EQ(session.error(), why);
  EXPECT_EQ(session.machine_description(), "");
}

}  // namespace
}  // namespace shardlab::gui
