// Lab scenarios: a lab step's parameters onto its scenario's spec, and a
// run of it through the registry (scenario.h) reduced to the spec's named
// quantities. Nothing here knows a scenario: each one's checks, resolved
// values and measures are its own hooks in engine/scenarios/.
#include "engine/lab/lab_scenario.h"

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/scenarios/fault_params.h"
#include "engine/scenarios/scenario.h"

namespace shardlab {
namespace {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

const ScenarioSpec& SpecOrThrow(const std::string& scenario) {
  const ScenarioSpec* spec = FindLabScenario(scenario);
  if (spec == nullptr) {
    throw Error("scenario: unknown scenario '" + scenario + "' (" + LabScenarioNames() + ")");
  }
  return *spec;
}

}  // namespace

ScenarioParams LabScenarioParams(const std::string& scenario, const std::vector<LabParam>& params) {
  const ScenarioSpec& spec = SpecOrThrow(scenario);
  ScenarioParams out(spec);
  for (const LabParam& p : params) {
    const ParamSpec* s = LabSettableParam(spec, p.name);
    if (s == nullptr) {
      std::vector<std::string> names;
      for (const ParamSpec& known : spec.params)
        if (known.lab) names.push_back(known.name);
      throw Error(p.name + ": unknown parameter of scenario '" + spec.name + "' (" +
                  JoinNames(names) + ")");
    }
    try {
      CheckLabParam(*s, p);
    } catch (const Error& e) {
      throw Error(p.name + ": " + e.what());
    }
    out.Set(s->name, LabParamSpecText(p));
  }
  return out;
}

namespace {

void CheckScenario(const std::string& scenario, const std::vector<LabParam>& params) {
  const ScenarioParams p = LabScenarioParams(scenario, params);
  // Fault switches (slow_rank, ...) parse here; ranks, links and steps are
  // checked against the run's plan when it runs.
  FaultsFromParams(p);
  if (p.spec().check) p.spec().check(p);
}

/// The engine names a parameter by its new name ("ranks: ..."); parameters
/// spelled the old way ("gpus", as an older lab file or caller wrote them)
/// read their own spelling back.
Error InGivenSpelling(const Error& e, const std::string& scenario,
                      const std::vector<LabParam>& params) {
  const ScenarioSpec* spec = FindLabScenario(scenario);
  const std::string message = e.what();
  for (const LabParam& given : params) {
    const ParamSpec* ps = spec != nullptr ? LabSettableParam(*spec, given.name) : nullptr;
    if (ps == nullptr || ps->name == given.name) continue;
    const std::string prefix = ps->name + ": ";
    if (message.rfind(prefix, 0) == 0)
      return Error(given.name + ": " + message.substr(prefix.size()), e.kind());
  }
  return e;
}

}  // namespace

namespace {

LabRunResult RunStep(const std::string& scenario, const std::vector<LabParam>& params) {
  const ScenarioParams p = LabScenarioParams(scenario, params);
  if (p.spec().check) p.spec().check(p);
  // Labs always run on the simulator, so a lab grades the same everywhere.
  const ScenarioOutcome outcome = RunScenario(p);
  const Verdict& verdict = outcome.summary.verdict;
  if (verdict.kind == VerdictKind::kWrong) {
    throw Error(p.spec().title + ": the result differs from the single-device reference (" +
                    verdict.Detail() + "): a bug in the engine, please report it",
                ErrorKind::kRuntime);
  }
  LabRunResult r;
  for (const auto& [name, value] : outcome.summary.values) r.measured[name] = value;
  r.summary = outcome.summary.line;
  return r;
}

}  // namespace

void CheckLabScenario(const std::string& scenario, const std::vector<LabParam>& params) {
  try {
    CheckScenario(scenario, params);
  } catch (const Error& e) {
    throw InGivenSpelling(e, scenario, params);
  }
}

LabRunResult RunLabScenario(const std::string& scenario, const std::vector<LabParam>& params) {
  try {
    return RunStep(scenario, params);
  } catch (const Error& e) {
    throw InGivenSpelling(e, scenario, params);
  }
}

LabValues LabParamValues(const std::string& scenario, const std::vector<LabParam>& params) {
  LabValues values;
  for (const auto& [name, value] : ScenarioParamValues(LabScenarioParams(scenario, params)))
    values[name] = value;
  return values;
}


LabStepValues RunLabStep(const LabStep& step) {
  LabStepValues out;
  if (!step.runs()) return out;
  out.values = LabParamValues(step.scenario, step.params);
  LabRunResult main = RunLabScenario(step.scenario, step.params);
  for (const auto& [name, value] : main.measured) out.values[name] = value;
  out.summaries.push_back(main.summary);
  for (const LabVariant& v : step.variants) {
    const std::vector<LabParam> merged = MergeLabParams(step.params, v.params);
    for (const auto& [name, value] : LabParamValues(step.scenario, merged)) {
      out.values[v.id + "." + name] = value;
    }
    LabRunResult run = RunLabScenario(step.scenario, merged);
    for (const auto& [name, value] : run.measured) out.values[v.id + "." + name] = value;
    out.summaries.push_back(v.id + ": " + run.summary);
  }
  out.ran = true;
  return out;
}

std::vector<std::string> LabStepValueNames(const LabStep& step) {
  std::vector<std::string> names;
  const ScenarioSpec* spec = FindLabScenario(step.scenario);
  if (spec == nullptr) return names;
  std::vector<std::string> base;
  for (const ParamSpec& p : spec->params) {
    if (!p.lab || p.type == ParamType::kChoice || p.type == ParamType::kText ||
        p.type == ParamType::kTopology)
      continue;
    base.push_back(p.name);
    for (const std::string& old : p.old_names) base.push_back(old);
  }
  for (const QuantitySpec& q : spec->measured) base.push_back(q.name);
  names = base;
  for (const LabVariant& v : step.variants) {
    for (const std::string& b : base) names.push_back(v.id + "." + b);
  }
  return names;
}

}  // namespace shardlab
