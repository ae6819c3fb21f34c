// engine/compare/model_trace: a recorded H200 trace against the model of
// the machine that ran it, checked against a simulator run set up here by
// hand (placement, shared HBM, graph node cost from the profile) and spans
// computed from the raw events; what the model cannot do without is one
// clear error, exit 2 on the command line.
#include <gtest/gtest.h>

#include <map>

#include "engine/compare/model_trace.h"
#include "engine/core/error.h"
#include "engine/io/trace_reader.h"
#include "engine/io/trace_writer.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/scenarios/trace_model.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/presets.h"
#include "tests/common/run_program.h"

namespace shardlab {
namespace {

const std::string kData = SHARDLAB_TEST_DATA_DIR;
const std::string kMerged = kData + "/../../bench/results/2026-11-26-h200-merged";
const std::string kCli = SHARDLAB_CLI_PATH;

struct Span {
  TimeNs first = 1e300, last = -1e300;
  void Add(TimeNs s, TimeNs e) { first = std::min(first, s); last = std::max(last, e); }
  TimeNs length() const { return last - first; }
};

TEST(ModelTrace, TheH200PipelineAgainstItsMachineGivesThePhaseSpansOfAHandSetSimulatorRun) {
  const LoadedTrace trace = ReadChromeTraceFile(kMerged + "/traces/pipeline-1f1b.json");
  ASSERT_FALSE(trace.machine);  // recorded before ShardLab wrote the machine
  TraceModelOptions options;
  options.scenario = ParsePlanSettings("pipeline schedule=1f1b stages=4 microbatches=8 width=256 batch=64");
  options.profile_source = kMerged + "/device-graph.toml";
  options.profile = LoadDeviceProfile(options.profile_source);
  options.issue = "graph";
  const TraceModel m = ModelTrace(trace, options);

  // Independently: the pipeline's plan, four ranks on GPU 0 of one H200,
  // no host cost per op (a graph replay), 3 graph nodes per op.
  ScenarioParams params(*FindScenario("pipeline"));
  params.Set("schedule", "1f1b");
  params.Set("stages", "4");
  params.Set("microbatches", "8");
  params.Set("width", "256");  // the trace's shape (the pipeline's defaults then)
  params.Set("batch", "64");
  PipelineScenario sc = PipelineFromParams(params);
  Plan plan = std::move(PreparePipeline(sc)->pipeline.plan);
  Topology h200;
  {
    MachineRecord one = MachineFromProfile(*options.profile, 1, "");
    h200 = BuildMachineTopology(one);
  }
  RunOptions run;
  run.timing_only = true;
  run.rank_to_gpu = {0, 0, 0, 0};
  run.shared_device_memory = true;
  run.op_issue_ns = 0;
  run.graph_op_ns = 3 * options.profile->graph_node_ns.value_or(0);
  ASSERT_GT(run.graph_op_ns, 0);
  Executor sim(CreateBackend("sim"), std::move(plan), h200, run);
  VectorSink sink;
  sim.RunToEnd(sink);

  std::map<std::string, Span> a_phase, b_phase;
  Span a_all, b_all;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    a_phase[PhaseName(trace.plan.ops[i].tags.phase)].Add(e.start_ns, e.end_ns);
    a_all.Add(e.start_ns, e.end_ns);
  }
  for (const Event& e : sink.events) {
    b_phase[PhaseName(sim.plan().ops[static_cast<std::size_t>(e.op)].tags.phase)].Add(e.start_ns, e.end_ns);
    b_all.Add(e.start_ns, e.end_ns);
  }
  const Comparison& c = m.comparison;
  EXPECT_EQ(c.run.ops, 164);
  EXPECT_DOUBLE_EQ(c.run.a_ns, a_all.length());
  EXPECT_DOUBLE_EQ(c.run.b_ns, b_all.length());
  ASSERT_EQ(c.phases.size(), a_phase.size());
  for (const CompareRow& row : c.phases) {
    EXPECT_DOUBLE_EQ(row.a_ns, a_phase.at(row.name).length()) << row.name;
    EXPECT_DOUBLE_EQ(row.b_ns, b_phase.at(row.name).length()) << row.name;
  }
  // The 1F1B's small GEMMs ran far below the profile's rate: the model is
  // several times faster, and the explanation names compute.
  EXPECT_LT(c.run.ratio(), 0.5);
  ASSERT_FALSE(c.groups.empty());
  EXPECT_EQ(c.groups.front().kind, OpKind::kCompute);
  EXPECT_NE(m.machine.how.find("assumed 1 GPU"), std::string::npos) << m.machine.how;
}

TEST(ModelTrace, TheRingTraceRecordsItsMachineAndTheModelPlacesEightRanksOnOneGpu) {
  const LoadedTrace trace = ReadChromeTraceFile(kMerged + "/traces/ring8-64M.json");
  ASSERT_TRUE(trace.machine);
  TraceModelOptions options;
  options.scenario = ParsePlanSettings("collective kind=allreduce ranks=8 size=64M");
  options.profile_source = kMerged + "/device.toml";
  options.profile = LoadDeviceProfile(options.profile_source);
  const TraceModel m = ModelTrace(trace, options);
  EXPECT_EQ(m.machine.gpus, 1);
  EXPECT_EQ(m.machine.rank_to_gpu, std::vector<int>(8, 0));
  // Eager (not recorded): the model charges launch + 2 events per op (a
  // transfer is one copy: one op, at its receiver), one after another on
  // the host: the last of the 112 copies cannot start before 111 of them.
  const TimeNs issue = options.profile->kernel_launch_ns.value_or(0) + 2 * options.profile->event_record_ns.value_or(0);
  ASSERT_GT(issue, 0);
  TimeNs last_start = 0;
  for (const RunOp& op : m.model.ops) last_start = std::max(last_start, op.start_ns);
  EXPECT_GE(last_start, 111 * issue * (1 - 1e-9));
  EXPECT_LT(last_start, 113 * issue + m.comparison.run.b_ns);
  EXPECT_EQ(m.comparison.phases.size(), 2u);
}

TEST(ModelTrace, WhatTheModelNeedsIsNamedInOneError) {
  const LoadedTrace pipe = ReadChromeTraceFile(kData + "/traces/h200-1f1b.json");
  TraceModelOptions options;
  options.scenario = ParsePlanSettings("pipeline width=1024 batch=128");
  try {
    ModelTrace(pipe, options);
    FAIL() << "a trace without a machine and no profile was modelled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not record the machine"), std::string::npos) << e.what();
  }
  options.profile = LoadDeviceProfile(kData + "/traces/h200.toml");
  options.profile_source = "h200.toml";
  options.scenario = ParsePlanSettings("pipeline width=256 batch=128");  // not the plan measured
  try {
    ModelTrace(pipe, options);
    FAIL() << "a plan of other settings was compared";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("op "), std::string::npos) << e.what();
  }
  EXPECT_THROW(ParsePlanSettings("pipeline stages"), Error);
  EXPECT_THROW(ParsePlanSettings("inference batch=4"), Error);
  EXPECT_THROW(ParsePlanSettings("pipeline stagez=4"), Error);
  EXPECT_THROW(ParsePlanSettings(""), Error);
}

// A trace that records its settings and its machine (with the profile) is
// modelled from the file alone. Its "measurement" here is the model's own
// run relabelled as a CUDA run, so the model must reproduce every op time.
TEST(ModelTrace, ATraceRecordingSettingsAndMachineIsModelledFromTheFileAlone) {
  const DeviceProfile profile = LoadDeviceProfile(kData + "/traces/h200.toml");
  const PlanSettings settings = ParsePlanSettings("collective kind=allreduce ranks=4 size=1M");
  MachineModel model = BuildMachineModel(MachineFromProfile(profile, 1, "h200.toml"), 4);
  model.record.issue = "eager";
  Plan plan = BuildScenarioPlan(settings);
  RunOptions run;
  run.timing_only = true;
  Topology topology;
  ApplyMachineModel(model, &run, &topology);
  Executor sim(CreateBackend("sim"), plan, topology, run);
  VectorSink sink;
  sim.RunToEnd(sink);
  for (Event& e : sink.events) e.clock = ClockKind::kCudaEvent;
  test_util::TempDir dir;
  const std::string path = (dir.path() / "measured.json").string();
  TraceInfo info;
  info.backend = "cuda";
  info.machine = model.record;
  info.plan_settings = settings.Text();
  WriteChromeTraceFile(path, sim.plan(), MakeTopologyPreset("dgx-a100"), sink.events, info);

  const LoadedTrace trace = ReadChromeTraceFile(path);
  EXPECT_EQ(trace.plan_settings, "collective kind=allreduce ranks=4 size=1M");
  const TraceModel m = ModelTrace(trace, TraceModelOptions{});
  EXPECT_EQ(m.scenario.Text(), settings.Text());
  // The trace's times are rounded to the writer's 9 significant digits.
  EXPECT_NEAR(m.comparison.run.ratio(), 1.0, 1e-6);
  for (const OpError& e : m.comparison.ops) EXPECT_NEAR(e.b_ns, e.a_ns, 1e-3 * std::max(1.0, e.a_ns)) << e.id;
  // Without the settings or the machine, the same file's older form is refused.
  LoadedTrace old = trace;
  old.plan_settings.clear();
  EXPECT_THROW(ModelTrace(old, TraceModelOptions{}), Error);
}

TEST(ModelTraceCli, ATraceWithoutAMachineRecordIsOneLineAndExitTwo) {
  using test_util::Describe;
  test_util::TempDir dir;
  const auto r = test_util::RunProgram(
      kCli, {"compare", kData + "/traces/h200-1f1b.json", "--model", "--settings", "pipeline width=1024 batch=128"}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("does not record the machine it ran on"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // With the profile it runs, and its JSON run row equals the engine's.
  const auto ok = test_util::RunProgram(kCli, {"compare", kData + "/traces/h200-1f1b.json", "--model", "--settings",
                                               "pipeline width=1024 batch=128", "--device-profile",
                                               kData + "/traces/h200.toml"}, dir.path());
  EXPECT_EQ(ok.exit_code, 0) << Describe(ok);
  EXPECT_NE(ok.out.find("164 ops matched by id"), std::string::npos) << ok.out;
}

}  // namespace
}  // namespace shardlab
