// A scenario as one object: its spec (scenario_spec.h) and the two hooks
// every front end runs it through.
//
//   ScenarioParams ──Prepare──► Prepared ──Executor(backend)──► events
//   (the spec's      (plan, topology, run     (RunScenario,        │
//    parameters)      options, title, the      or the app's run    │
//                     scenario's own state)    thread)             ▼
//                          └────────────────────Summarize──► Summary
//                                                          (the spec's
//                                                           quantities, one
//                                                           line, the verdict)
//
// A scenario that runs a plan sets `prepare` and `summarize` in its spec; a
// scenario that only computes (ZeRO's memory formulas, the planner) or runs
// several plans of its own (elastic training, dp-train) sets `measure`
// instead. RunScenario takes either, so the CLI, the labs and the app's
// lab panel ask the registry, never a scenario by name.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/core/event.h"
#include "engine/plan/plan.h"
#include "engine/run/backend.h"
#include "engine/scenarios/report.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/topology/topology.h"
#include "engine/verify/verdict.h"

namespace shardlab {

class Executor;

/// One scenario ready to run: the same type for every scenario, so a front
/// end never needs to know which one it holds.
struct Prepared {
  const ScenarioSpec* spec = nullptr;
  Topology topology;
  Plan plan;            // validated; an Executor takes a copy (the views read this one)
  RunOptions options;   // timing-only, seed, faults, placement, the machine model
  /// A failed rank or link may stop this run on purpose: the stop is the
  /// result (the collective's "who never joined"), not an error.
  bool stop_is_result = false;
  std::string title;    // one line: "ring all-reduce, 8 ranks, 64 MiB on dgx-a100"
  /// The lines that describe the run before it starts (a report's header:
  /// "ZeRO-3 (...), 8 ranks, on dgx-a100", "model  MLP of ..."); empty:
  /// the spec's title and `title`.
  std::vector<std::string> header;
  /// The scenario's own state (its PreparedPipeline, PreparedTp, ...), for
  /// its Summarize and its views; null for a scenario with none.
  std::shared_ptr<void> detail;

  template <class T>
  T& Detail() const {
    return *static_cast<T*>(detail.get());
  }
};

/// What a finished (or fault-stopped) run left: its plan, events and backend.
struct FinishedRun {
  const Plan& plan;
  std::span<const Event> events;
  const Backend& backend;
  bool completed = true;  // false: a failed rank or link stopped it (Prepared::stop_is_result)
  std::string stop;       // why it stopped ("rank 3 never joined op #17 ...")
};

/// One measured quantity of the spec's table, with its unit.
struct Quantity {
  std::string name;
  std::string unit;
  double value = 0;
};

/// What a run measured, in the spec's names: the values the labs' formulas
/// read, the CLI's report and --json, the app's metrics.
struct Summary {
  std::map<std::string, double> values;  // every quantity of spec.measured it measured
  std::string line;                      // "ring all-reduce of 64 MiB on 8 ranks: ..."
  Verdict verdict;                       // correct, WRONG or not checked (and why)
  Report report;                         // rows under the scenario's tables, --json fields, "# Result:"
  /// The scenario's own summary (its PipelineOutcomeSummary, TpSummary,
  /// ...) for its views' tables; null for a scenario with none.
  std::shared_ptr<const void> detail;

  template <class T>
  const T& Detail() const {
    return *static_cast<const T*>(detail.get());
  }

  /// The spec's quantities this summary has, in the spec's order, with units.
  std::vector<Quantity> Quantities(const ScenarioSpec& spec) const;
};

/// The common end of a plan scenario's Prepare: `plan` and a copy of
/// `topology` (both inside the scenario's own `detail`) become the
/// Prepared's, the fault switches of `params` are resolved against them
/// (a throttled link is written back into `topology`, so the scenario's
/// views see it), and `detail` is kept for Summarize.
std::unique_ptr<Prepared> PreparedPlan(const ScenarioParams& params, Topology& topology, Plan& plan,
                                       bool timing_only, std::uint64_t seed, std::string title,
                                       std::shared_ptr<void> detail);

/// Prepares `params` of their spec (which must have `prepare`). `machine`,
/// when given, replaces the topology the parameters name (`--topology
/// this`, a trace's recorded machine). Throws Error(kInvalidInput) naming
/// the parameter.
std::unique_ptr<Prepared> PrepareScenario(const ScenarioParams& params,
                                          const Topology* machine = nullptr);

/// Summarizes a run of `prepared` (its spec's `summarize`).
Summary SummarizeScenario(const Prepared& prepared, const FinishedRun& run);

struct ScenarioRunRequest {
  std::string backend = "sim";
  const Topology* machine = nullptr;  // as PrepareScenario's
};

/// A whole run: the prepared scenario, the executor that ran it (its plan,
/// backend and state), every event and the summary.
struct ScenarioOutcome {
  std::unique_ptr<Prepared> prepared;    // null for a scenario that measures itself
  std::unique_ptr<Executor> executor;    // null likewise
  std::vector<Event> events;
  Summary summary;
  ~ScenarioOutcome();
  ScenarioOutcome();
  ScenarioOutcome(ScenarioOutcome&&) noexcept;
  ScenarioOutcome& operator=(ScenarioOutcome&&) noexcept;
};

/// Runs `params` to the end, blocking: Prepare, an Executor on the
/// backend, Summarize; or the spec's `measure` for a scenario that
/// measures itself. Throws Error(kInvalidInput) for bad parameters and
/// Error(kRuntime) for a run that failed (a stop the scenario asked for
/// is its result, not a failure).
ScenarioOutcome RunScenario(const ScenarioParams& params, const ScenarioRunRequest& request = {});

/// The most host arithmetic one real step of a training scenario computes
/// (about ten seconds of plain loops): above it, the pipeline is timed only
/// (and says why), the 3D step refused.
inline constexpr double kMaxHostFlops = 2e10;

/// Whether the spec can run at all (prepare and summarize, or measure).
bool ScenarioRuns(const ScenarioSpec& spec);

/// The values the spec's formulas see: every number, size, count and
/// boolean parameter (defaults included; booleans 0/1; also under each old
/// name), with those that follow others resolved by the spec's `resolve`
/// ("chunks 0" becomes the 2 an interleaved schedule uses).
std::map<std::string, double> ScenarioParamValues(const ScenarioParams& params);

}  // namespace shardlab
