#include "engine/compare/model_trace.h"

#include <utility>

#include "engine/core/error.h"
#include "engine/io/trace_reader.h"
#include "engine/run/executor.h"
#include "engine/run/machine_model.h"
#include "engine/run/vector_sink.h"

namespace shardlab {

std::string PlanSettings::Text() const {
  std::string out = scenario;
  for (const auto& [name, value] : params) out += " " + name + "=" + value;
  return out;
}

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

MachineRecord TraceMachineRecord(const LoadedTrace& trace, const TraceModelOptions& options) {
  const std::string& file = trace.source;
  if (trace.clock == "simulated") {
    throw Error(file + ": a simulated run (clock 'simulated'); the model is compared with a measured one",
                ErrorKind::kInvalidInput);
  }
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
  return record;
}

MachineModel TraceMachineModel(const LoadedTrace& trace, const MachineRecord& record) {
  // The placement as recorded (checked against the plan's ranks), else r mod N.
  try {
    return BuildMachineModel(record, trace.plan.num_ranks);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (e.kind() != ErrorKind::kInvalidInput || what.rfind("placement:", 0) != 0) throw;
    throw Error(trace.source + ": otherData.machine." + what, ErrorKind::kInvalidInput);
  }
}

TraceModel CompareTraceWithModel(const LoadedTrace& trace, PlanSettings scenario, const Plan& plan,
                                 const MachineModel& machine) {
  TraceModel out;
  out.scenario = std::move(scenario);
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
