#include "engine/scenarios/scenario.h"

#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/faults.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/fault_params.h"

namespace shardlab {

ScenarioOutcome::ScenarioOutcome() = default;
ScenarioOutcome::~ScenarioOutcome() = default;
ScenarioOutcome::ScenarioOutcome(ScenarioOutcome&&) noexcept = default;
ScenarioOutcome& ScenarioOutcome::operator=(ScenarioOutcome&&) noexcept = default;

std::vector<Quantity> Summary::Quantities(const ScenarioSpec& spec) const {
  std::vector<Quantity> out;
  for (const QuantitySpec& q : spec.measured) {
    const auto it = values.find(q.name);
    if (it != values.end()) out.push_back({q.name, q.unit, it->second});
  }
  return out;
}

bool ScenarioRuns(const ScenarioSpec& spec) {
  return (spec.prepare && spec.summarize) || static_cast<bool>(spec.measure);
}

std::unique_ptr<Prepared> PreparedPlan(const ScenarioParams& params, Topology& topology, Plan& plan,
                                       bool timing_only, std::uint64_t seed, std::string title,
                                       std::shared_ptr<void> detail) {
  auto out = std::make_unique<Prepared>();
  out->topology = topology;
  out->options.timing_only = timing_only;
  out->options.seed = seed;
  out->options.faults = ResolveRunFaults(params, out->topology, plan);
  topology = out->topology;  // with any throttled link
  out->plan = std::move(plan);
  out->title = std::move(title);
  out->detail = std::move(detail);
  return out;
}

std::unique_ptr<Prepared> PrepareScenario(const ScenarioParams& params, const Topology* machine) {
  const ScenarioSpec& spec = params.spec();
  if (!spec.prepare) {
    throw Error("scenario '" + spec.name + "' has no plan to prepare (it measures itself)",
                ErrorKind::kInvalidInput);
  }
  std::unique_ptr<Prepared> prepared = spec.prepare(params, machine);
  prepared->spec = &spec;
  return prepared;
}

Summary SummarizeScenario(const Prepared& prepared, const FinishedRun& run) {
  Summary summary;
  prepared.spec->summarize(prepared, run, summary);
  return summary;
}

ScenarioOutcome RunScenario(const ScenarioParams& params, const ScenarioRunRequest& request) {
  const ScenarioSpec& spec = params.spec();
  ScenarioOutcome out;
  if (!spec.prepare) {
    if (!spec.measure) {
      throw Error("scenario '" + spec.name + "' cannot run: it has neither a plan nor a measure",
                  ErrorKind::kInvalidInput);
    }
    out.summary.values = spec.measure(params, &out.summary.line);
    out.summary.verdict = NotChecked("the scenario reports its own measures");
    return out;
  }
  out.prepared = PrepareScenario(params, request.machine);
  Prepared& p = *out.prepared;
  const Faults& faults = p.options.faults;
  if (const std::string refusal = FaultRefusal(faults, request.backend); !refusal.empty())
    throw Error(refusal, ErrorKind::kInvalidInput);
  // The executor takes the plan; the run's record reads it back from there.
  out.executor = std::make_unique<Executor>(CreateBackend(request.backend), std::move(p.plan),
                                            p.topology, p.options);
  p.plan = Plan{};
  VectorSink sink;
  const bool failure_asked = !faults.failed_ranks.empty() || !faults.failed_links.empty();
  bool stopped = false;
  try {
    out.executor->RunToEnd(sink);
  } catch (const Error&) {
    // The simulator ends a run that a failed rank or link holds with the
    // report of who never joined what (sim_backend.cpp): for a scenario
    // that asks for such a stop, that is its result.
    if (!(p.stop_is_result && failure_asked && out.executor->state() == ExecutorState::kFailed))
      throw;
    stopped = true;
  }
  if (!stopped && out.executor->state() != ExecutorState::kDone)
    throw Error("the run failed: " + out.executor->error(), ErrorKind::kRuntime);
  out.events = std::move(sink.events);
  const FinishedRun record{out.executor->plan(), out.events, out.executor->backend(), !stopped,
                         stopped ? out.executor->error() : std::string()};
  out.summary = SummarizeScenario(p, record);
  return out;
}

std::map<std::string, double> ScenarioParamValues(const ScenarioParams& params) {
  std::map<std::string, double> out;
  for (const ParamSpec& s : params.spec().params) {
    if (!s.lab) continue;
    double value = 0;
    switch (s.type) {
      case ParamType::kInteger:
      case ParamType::kNumber:
      case ParamType::kSize:
      case ParamType::kCount: value = params.Number(s.name); break;
      case ParamType::kBool: value = params.Bool(s.name) ? 1.0 : 0.0; break;
      case ParamType::kChoice:
      case ParamType::kText:
      case ParamType::kTopology: continue;
    }
    out[s.name] = value;
    for (const std::string& old : s.old_names) out[old] = value;
  }
  if (params.spec().resolve) params.spec().resolve(params, out);
  return out;
}

}  // namespace shardlab
