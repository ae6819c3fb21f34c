// What Session shows besides a run it steps: a trace file (File > Open
// trace), a second run laid over the one shown (File > Open trace to
// compare...), and the scenarios that measure themselves, which the app
// shows as the finished run they leave:
//
//   elastic        runs whole here (it writes and reads real checkpoints) ─► its trace
//   inference      the real run's trace; every batching policy served for the serving view
//   trace-compare  the measured trace, the model of its machine laid over it
#include <filesystem>

#include <unistd.h>

#include "app/gui/model/session.h"
#include "engine/core/error.h"
#include "engine/io/trace_writer.h"
#include "engine/scenarios/elastic_scenario.h"
#include "engine/scenarios/trace_compare_scenario.h"

namespace shardlab::gui {

struct MeasuredScenarioViews {
  static bool ShowElasticJob(Session& s, const ScenarioParams& params) {
    // The job writes and reads back real checkpoint files between parts of
    // its plan (engine/scenarios/elastic_scenario.h), so it runs here, whole,
    // on the simulator (a small job: milliseconds of host work), and is shown
    // as the trace it writes: the lost work, the reload and the re-shard.
    const ElasticScenario scenario = ElasticFromParams(params);
    Topology topology = s.CachedTopology(scenario.topology);
    const ElasticPlan job = BuildElastic(scenario.params);
    const Faults faults = ElasticFaults(params, topology, job);
    const ElasticOutcome outcome = RunElastic(scenario, job, topology, faults);
    if (outcome.verdict.checked() && !outcome.verdict.correct())
      throw Error("the elastic job's final parameters: " + outcome.verdict.Text(), ErrorKind::kRuntime);
    s.ShowFinishedRun(job.plan, topology, outcome.events, job.plan.name + " on " + scenario.topology + " (sim)");
    s.run_scenario_ = "elastic";
    return true;
  }

  static bool ShowInferenceRun(Session& s, const ScenarioParams& params) {
    InferenceScenario scenario = InferenceFromParams(params);
    scenario.record_steps = true;
    scenario.all_policies = true;  // the view lays the policies side by side on the same arrivals
    auto run = std::make_unique<InferenceRun>(RunInference(scenario));
    if (run->check.checked && !run->check.verdict.correct())
      throw Error("the inference run's logits: " + run->check.verdict.Text(), ErrorKind::kRuntime);
    if (!run->real_plan.ops.empty()) {
      s.ShowFinishedRun(run->real_plan, s.CachedTopology(scenario.topology), run->real_events,
                      run->real_plan.name + " on " + scenario.topology + " (sim)");
    } else {
      s.BeginNewRun();
      s.state_ = SessionState::kDone;
    }
    s.inference_ = std::move(run);
    s.run_scenario_ = "inference";
    return true;
  }

  static bool ShowTraceCompare(Session& s, const ScenarioParams& params) {
    // A measured trace shipped with the project and the simulator's model of
    // the machine that recorded it (engine/scenarios/trace_compare_scenario.h):
    // the trace is shown as File > Open trace shows one, the model laid over
    // it as File > Open trace to compare... lays a second run.
    TraceCompareRun run = RunTraceCompare(params);
    auto loaded = std::make_unique<LoadedTrace>(std::move(run.trace));
    RunRecord measured = RunFromTrace(*loaded);
    std::vector<std::int32_t> event_op_ids = loaded->original_op;
    auto overlay = std::make_unique<CompareOverlay>(measured, run.model.model, std::move(event_op_ids),
                                                    "the model of " + run.model.machine.Describe());
    s.ShowLoadedTrace(std::move(loaded));
    s.compare_ = std::move(overlay);
    s.run_scenario_ = "trace-compare";
    return true;
  }

  static void CheckElastic(const ScenarioParams& params) {
    // The job's own checks (ranks, batch split, the failure's step); the run writes files.
    BuildElastic(ElasticFromParams(params).params);
  }
  // The parameters' own checks; the layout against the machine is RunInference's first step.
  static void CheckInference(const ScenarioParams& params) { InferenceFromParams(params); }
  // The files exist and the settings parse; modelling runs on Start.
  static void CheckTraceCompareRun(const ScenarioParams& params) { CheckTraceCompare(params); }

  struct Entry {
    const char* spec;
    void (*check)(const ScenarioParams&);
    bool (*show)(Session&, const ScenarioParams&);
  };
  static const Entry* Find(const ScenarioParams& params) { return Find(params.spec().name); }
  static const Entry* Find(std::string_view spec_name) {
    static const Entry table[] = {
        {"elastic", CheckElastic, ShowElasticJob},
        {"inference", CheckInference, ShowInferenceRun},
        {"trace-compare", CheckTraceCompareRun, ShowTraceCompare},
    };
    for (const Entry& e : table)
      if (spec_name == e.spec) return &e;
    return nullptr;
  }
};

bool Session::ShowsAsFinishedRun(std::string_view spec_name) {
  return MeasuredScenarioViews::Find(spec_name) != nullptr;
}

bool Session::ShowMeasuredScenario(const ScenarioParams& params) {
  const MeasuredScenarioViews::Entry* entry = MeasuredScenarioViews::Find(params);
  return entry != nullptr && entry->show(*this, params);
}

bool Session::CheckMeasuredScenario(const ScenarioParams& params) {
  const MeasuredScenarioViews::Entry* entry = MeasuredScenarioViews::Find(params);
  if (entry == nullptr) return false;
  entry->check(params);
  return true;
}

void Session::ShowFinishedRun(const Plan& plan, const Topology& topology, const std::vector<Event>& events,
                              const std::string& title) {
  // Through a trace file: the views then replay it as they replay any
  // opened trace (the file is gone once read).
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("shardlab-run-" + std::to_string(::getpid()) + ".json")).string();
  TraceInfo info;
  info.title = title;
  info.backend = "sim";
  WriteChromeTraceFile(path, plan, topology, events, info);
  std::string message;
  const bool shown = OpenTrace(path, &message);
  std::filesystem::remove(path);
  if (!shown) throw Error(message, ErrorKind::kRuntime);
}

bool Session::OpenTrace(const std::string& path, std::string* message) {
  std::unique_ptr<LoadedTrace> loaded;
  try {
    loaded = std::make_unique<LoadedTrace>(ReadChromeTraceFile(path));
  } catch (const std::exception& e) {
    *message = e.what();  // the run on screen stays
    return false;
  }
  BeginNewRun();
  ShowLoadedTrace(std::move(loaded));
  message->clear();
  return true;
}

void Session::ShowLoadedTrace(std::unique_ptr<LoadedTrace> loaded) {
  trace_ = std::move(loaded);
  store_.Add(trace_->events);
  host_lane_ = trace_->host_lane;
  host_clock_ = trace_->host_clock == "simulated" ? ClockKind::kSimulated : ClockKind::kHost;
  steps_done_ = trace_->plan.num_steps;
  state_ = SessionState::kDone;
}

bool Session::OpenCompareTrace(const std::string& path, std::string* message) {
  if (state_ != SessionState::kDone || plan() == nullptr) {
    *message = "nothing to compare with yet: open a trace or let a run finish first";
    return false;
  }
  try {
    const LoadedTrace added = ReadChromeTraceFile(path);
    RunRecord shown;
    std::vector<std::int32_t> event_op_ids;
    if (trace_) {
      shown = RunFromTrace(*trace_);
      event_op_ids = trace_->original_op;
    } else {
      std::vector<Event> events;
      events.reserve(store_.event_count());
      for (const TimelineRow& row : store_.rows()) events.insert(events.end(), row.events.begin(), row.events.end());
      shown = RunFromEvents(*plan(), events, "this run", backend());
    }
    compare_ = std::make_unique<CompareOverlay>(shown, RunFromTrace(added), std::move(event_op_ids), path);
  } catch (const std::exception& e) {
    *message = path + ": cannot compare: " + e.what();
    return false;
  }
  message->clear();
  return true;
}

TimeNs Session::replay_end_ns() const {
  return compare_ != nullptr ? std::max(store_.end_ns(), compare_->added_end_ns()) : store_.end_ns();
}

}  // namespace shardlab::gui
