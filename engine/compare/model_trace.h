// The model of a measured trace: the same plan, simulated on the model of
// the machine that ran it, and the two runs compared.
//
//   measured trace ── its scenario settings ──► the plan, rebuilt ─┐
//   (LoadedTrace)  ── its MachineRecord     ──► MachineModel ──────┼─► simulator
//                                                                  │   (timing only)
//   RunFromTrace(trace) = measured ──────────────── CompareRuns(measured, model)
//
// A trace records what ran (ops, times) but not the plan's dependencies,
// so the plan is rebuilt from the scenario's settings ("pipeline
// schedule=1f1b stages=4 microbatches=8", recorded by `run --trace` or
// given) exactly as `run` builds it, and
// CompareRuns checks, op by op, that the rebuilt plan is the one measured
// (refusing with the first difference otherwise). The plan is built on
// the topology the trace's plan named (its ring order, its routes), and
// run on the model of the machine that measured it (the placement of the
// ranks on its GPUs, shared HBM, issue costs: engine/run/machine_model.h).
//
// Rebuilding the plan needs the scenarios, which sit above compare/: the
// settings are read and the plan rebuilt in engine/scenarios/trace_model.h
// (ParsePlanSettings, BuildScenarioPlan, and ModelTrace, which puts the
// steps together); here are the steps that know no scenario: the machine,
// its model, and the comparison.
//
// What the trace must say, and what may be given instead:
//  - the machine (otherData.machine): traces written before ShardLab
//    recorded it have none; a device profile and a GPU count stand in for
//    it, and the model's `how` says it was assumed.
//  - the GPU's rates (the record's profile): a record of a detected GPU
//    without a profile needs one (`calibrate` made it there).
//  - the scenario settings (otherData.plan_settings, "pipeline stages=4"):
//    traces written before ShardLab recorded them (the shipped H200 ones)
//    need them given.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/compare/compare.h"
#include "engine/run/machine_model.h"
#include "engine/topology/this_machine.h"

namespace shardlab {

struct LoadedTrace;

/// A scenario and the values of its parameters, as text: what `run NAME
/// --flag value ...` set.
struct PlanSettings {
  std::string scenario;                                   // "pipeline"
  std::vector<std::pair<std::string, std::string>> params;  // {"stages", "4"}, in the order given

  /// "pipeline schedule=1f1b stages=4"
  std::string Text() const;
};

struct TraceModelOptions {
  /// The scenario the trace ran; when absent, the settings the trace
  /// records (otherData.plan_settings; traces written before have none).
  std::optional<PlanSettings> scenario;
  /// The GPU's rates when the trace's machine record has none, or the
  /// machine itself (`gpus` of them) when the trace records none.
  std::optional<DeviceProfile> profile;
  std::string profile_source;   // the file, for `how`
  int gpus = 0;                 // with a profile, for a trace without a machine: 0 = 1
  std::string issue;            // "graph" or "eager": how the run issued its ops; "" = as recorded
};

struct TraceModel {
  PlanSettings scenario;
  MachineRecord machine;        // the model's machine, its `how` saying what was assumed
  RunRecord measured;           // the trace (A)
  RunRecord model;              // the simulator on the model of its machine (B)
  Comparison comparison;        // CompareRuns(measured, model)
};

/// The machine a measured trace ran on, as its model needs it: as recorded
/// (its rates from `options.profile` when given), else `options.gpus` GPUs
/// of `options.profile`; `how` says which, and `options.issue` overrides
/// the issue mode. Throws Error (kInvalidInput) with one sentence for a
/// simulated trace, or when the machine or its rates are missing.
MachineRecord TraceMachineRecord(const LoadedTrace& trace, const TraceModelOptions& options);

/// The model of `record` for the trace's ranks (BuildMachineModel); a
/// recorded placement that does not fit is Error (kInvalidInput)
/// "FILE: otherData.machine.placement: ...".
MachineModel TraceMachineModel(const LoadedTrace& trace, const MachineRecord& record);

/// `plan` (rebuilt from `scenario`) on the simulator for `machine`, compared
/// with the trace: CompareRuns(RunFromTrace(trace), model).
TraceModel CompareTraceWithModel(const LoadedTrace& trace, PlanSettings scenario, const Plan& plan,
                                 const MachineModel& machine);

/// `plan` on the simulator for the model of `machine`, timing only.
RunRecord RunOnMachineModel(const Plan& plan, const MachineModel& machine);

/// A live measured run of `plan` (its events index plan.ops) against the
/// simulator's run of the same plan on `machine` (timing only): what
/// `run ... --backend cuda --compare sim` prints. `model_run`, when given,
/// receives the model's run.
Comparison CompareWithMachineModel(const Plan& plan, std::span<const Event> measured, const std::string& backend,
                                   const MachineModel& machine, RunRecord* model_run = nullptr);

}  // namespace shardlab
