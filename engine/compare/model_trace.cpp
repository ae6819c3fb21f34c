#include "engine/compare/model_trace.h"

#include <utility>

#include "engine/core/error.h"
#include "engine/io/trace_reader.h"
#include "engine/run/executor.h"
#include "engine/run/machine_model.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab {

std::string PlanSettings::Text() const {
  std::string out = scenario;
  for (const auto& [name, value] : params) out += " " + name + "=" + value;
  return out;
}

bool ScenarioRebuildsPlan(std::string_view scenario) {
  return scenario == "collective" || scenario == "pipeline" || scenario == "tp" || scenario == "zero";
}

namespace {

constexpr const char* kRebuildable = "collective, pipeline, tp or zero";

ScenarioParams ParamsOf(const PlanSettings& settings) {
  const ScenarioSpec* spec = FindScenario(settings.scenario);
  if (spec == nullptr || !ScenarioRebuildsPlan(settings.scenario)) {
    throw Error("scenario '" + settings.scenario + "': a plan is rebuilt only for " + kRebuildable,
                ErrorKind::kInvalidInput);
  }
  ScenarioParams params(*spec);
  for (const auto& [name, value] : settings.params) params.Set(name, value);
  return params;
}

/// The plan on the simulator for the model of `machine`, timing only.
RunRecord RunOnMachineModel(const Plan& plan, const MachineModel& machine) {
  RunOptions run_options;
  run_options.timing_only = true;
  Topology topology;
  ApplyMachineModel(machine, &run_options, &topology);
  Executor sim(CreateBackend("sim"), plan, std::move(topology), run_options);
  VectorSink events;
  sim.RunToEnd(events);
  return RunFromEvents(sim.plan(), events.events, "model of " + machine.record.Describe(), "sim");
}

}  // namespace

PlanSettings ParsePlanSettings(std::string_view text) {
  PlanSettings out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    if (pos >= text.size()) break;
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string word(text.substr(pos, end - pos));
    pos = end;
    if (out.scenario.empty()) {
      if (word.find('=') != std::string::npos) {
        throw Error("'" + word + "': the settings start with the scenario's name (" + kRebuildable + ")",
                    ErrorKind::kInvalidInput);
      }
      out.scenario = word;
      continue;
    }
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == word.size()) {
      throw Error("'" + word + "': expected NAME=VALUE", ErrorKind::kInvalidInput);
    }
    out.params.emplace_back(word.substr(0, eq), word.substr(eq + 1));
  }
  if (out.scenario.empty()) {
    throw Error("no scenario: write 'NAME key=value ...' (NAME: " + std::string(kRebuildable) + ")",
                ErrorKind::kInvalidInput);
  }
  ParamsOf(out);  // checks the name and every value
  return out;
}

Plan BuildScenarioPlan(const PlanSettings& settings, const Topology* topology) {
  const ScenarioParams params = ParamsOf(settings);
  if (settings.scenario == "collective") {
    CollectiveScenario sc = CollectiveFromParams(params, topology);
    sc.backend = "sim";
    return std::move((topology ? PrepareCollective(sc, *topology) : PrepareCollective(sc))->plan);
  }
  if (settings.scenario == "pipeline") {
    PipelineScenario sc = PipelineFromParams(params);
    sc.backend = "sim";
    return std::move((topology ? PreparePipeline(sc, *topology) : PreparePipeline(sc))->pipeline.plan);
  }
  if (settings.scenario == "tp") {
    TpScenario sc = TpFromParams(params);
    sc.backend = "sim";
    return std::move((topology ? PrepareTp(sc, *topology) : PrepareTp(sc))->layer.plan);
  }
  ZeroScenario sc = ZeroFromParams(params);
  sc.backend = "sim";
  return std::move((topology ? PrepareZero(sc, *topology) : PrepareZero(sc))->zero.plan);
}

TraceModel ModelTrace(const LoadedTrace& trace, const TraceModelOptions& options) {
  const std::string& file = trace.source;
  if (trace.clock == "simulated") {
    throw Error(file + ": a simulated run (clock 'simulated'); the model is compared with a measured one",
                ErrorKind::kInvalidInput);
  }
  TraceModel out;
  // The machine: as recorded, else assumed from a profile.
  MachineRecord record;
  if (trace.machine) {
    record = *trace.machine;
    record.how = "recorded in " + file + (record.how.empty() ? "" : ": " + record.how);
    if (options.profile) {
      record.profile = options.profile;
      record.how += "; rates from " + options.profile_source;
    } else if (!record.profile) {
      throw Error(file + " records its machine (" + record.Describe() +
                      ") but not its GPU's rates; give the device profile 'calibrate' measured there",
                  ErrorKind::kInvalidInput);
    }
  } else {
    if (!options.profile) {
      throw Error(file + " does not record the machine it ran on (written before ShardLab recorded it); "
                  "give the device profile of its GPU and the GPU count (default 1)",
                  ErrorKind::kInvalidInput);
    }
    const int gpus = options.gpus > 0 ? options.gpus : 1;
    record = MachineFromProfile(*options.profile, gpus, "");
    record.how = "not recorded in " + file + ": assumed " + std::to_string(gpus) + " GPU" +
                 (gpus == 1 ? "" : "s") + " of " + options.profile_source;
  }
  if (!options.issue.empty()) {
    record.issue = CheckIssueMode(options.issue);
    record.how += "; issue " + record.issue;
  }
  // The plan: rebuilt from the settings given, else those the trace records.
  if (options.scenario) {
    out.scenario = *options.scenario;
  } else if (!trace.plan_settings.empty()) {
    try {
      out.scenario = ParsePlanSettings(trace.plan_settings);
    } catch (const Error& e) {
      throw Error(file + ": otherData.plan_settings: " + e.what(), ErrorKind::kInvalidInput);
    }
  } else {
    throw Error(file + " records the plan's name ('" + trace.plan.name +
                    "'), not its settings (written before ShardLab recorded them); give the "
                    "scenario's settings ('NAME key=value ...')",
                ErrorKind::kInvalidInput);
  }
  // The placement as recorded (checked against the plan's ranks), else r mod N.
  MachineModel machine;
  try {
    machine = BuildMachineModel(record, trace.plan.num_ranks);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (e.kind() != ErrorKind::kInvalidInput || what.rfind("placement:", 0) != 0) throw;
    throw Error(file + ": otherData.machine." + what, ErrorKind::kInvalidInput);
  }
  // A plan built for `--topology this` was built on the model's own GPUs.
  bool on_this_machine = false;
  for (const auto& [name, value] : out.scenario.params) on_this_machine |= name == "topology" && value == "this";
  Plan plan = BuildScenarioPlan(out.scenario, on_this_machine ? &machine.plan_topology : nullptr);
  out.measured = RunFromTrace(trace);
  out.machine = machine.record;
  out.model = RunOnMachineModel(plan, machine);
  out.comparison = CompareRuns(out.measured, out.model);
  return out;
}

Comparison CompareWithMachineModel(const Plan& plan, std::span<const Event> measured, const std::string& backend,
                                   const MachineModel& machine, RunRecord* model_run) {
  RunRecord model = RunOnMachineModel(plan, machine);
  Comparison c = CompareRuns(RunFromEvents(plan, measured, "this run", backend), model);
  if (model_run != nullptr) *model_run = std::move(model);
  return c;
}

}  // namespace shardlab
