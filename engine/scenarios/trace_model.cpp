#include "engine/scenarios/trace_model.h"

#include <utility>

#include "engine/core/error.h"
#include "engine/io/trace_reader.h"
#include "engine/run/machine_model.h"
#include "engine/scenarios/scenario.h"

namespace shardlab {

bool ScenarioRebuildsPlan(std::string_view scenario) {
  const ScenarioSpec* spec = FindScenario(scenario);
  return spec != nullptr && spec->prepare;
}

namespace {

/// "collective, pipeline, ...": the scenarios whose spec prepares a plan.
std::string Rebuildable() {
  std::string names;
  for (const ScenarioSpec& s : Scenarios())
    if (s.prepare) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

ScenarioParams ParamsOf(const PlanSettings& settings) {
  const ScenarioSpec* spec = FindScenario(settings.scenario);
  if (spec == nullptr || !ScenarioRebuildsPlan(settings.scenario)) {
    throw Error("scenario '" + settings.scenario + "': a plan is rebuilt only for " + Rebuildable(),
                ErrorKind::kInvalidInput);
  }
  ScenarioParams params(*spec);
  for (const auto& [name, value] : settings.params) params.Set(name, value);
  return params;
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
        throw Error("'" + word + "': the settings start with the scenario's name (" + Rebuildable() + ")",
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
    throw Error("no scenario: write 'NAME key=value ...' (NAME: " + Rebuildable() + ")",
                ErrorKind::kInvalidInput);
  }
  ParamsOf(out);  // checks the name and every value
  return out;
}

Plan BuildScenarioPlan(const PlanSettings& settings, const Topology* topology) {
  // The plan `run` would build, through the scenario's own Prepare.
  return std::move(PrepareScenario(ParamsOf(settings), topology)->plan);
}

TraceModel ModelTrace(const LoadedTrace& trace, const TraceModelOptions& options) {
  const std::string& file = trace.source;
  const MachineRecord record = TraceMachineRecord(trace, options);
  // The plan: rebuilt from the settings given, else those the trace records.
  PlanSettings scenario;
  if (options.scenario) {
    scenario = *options.scenario;
  } else if (!trace.plan_settings.empty()) {
    try {
      scenario = ParsePlanSettings(trace.plan_settings);
    } catch (const Error& e) {
      throw Error(file + ": otherData.plan_settings: " + e.what(), ErrorKind::kInvalidInput);
    }
  } else {
    throw Error(file + " records the plan's name ('" + trace.plan.name +
                    "'), not its settings (written before ShardLab recorded them); give the "
                    "scenario's settings ('NAME key=value ...')",
                ErrorKind::kInvalidInput);
  }
  const MachineModel machine = TraceMachineModel(trace, record);
  // A plan built for `--topology this` was built on the model's own GPUs.
  bool on_this_machine = false;
  for (const auto& [name, value] : scenario.params) on_this_machine |= name == "topology" && value == "this";
  const Plan plan = BuildScenarioPlan(scenario, on_this_machine ? &machine.plan_topology : nullptr);
  return CompareTraceWithModel(trace, std::move(scenario), plan, machine);
}

}  // namespace shardlab
