// The model of a measured trace, its plan rebuilt through the scenario
// registry: what `compare --model` and the trace-compare scenario run.
//
//   "pipeline stages=4" ─ ParsePlanSettings ─► PlanSettings ─ BuildScenarioPlan ─► Plan ─┐
//   LoadedTrace ─ TraceMachineRecord, TraceMachineModel ─► MachineModel ────────────────┤
//                                                     CompareTraceWithModel(trace, ...) ◄┘
//
// The steps that need no scenario, and the design of the whole, are in
// engine/compare/model_trace.h; this file is the part that reads a
// scenario's settings against its spec and builds its plan as `run` does.
#pragma once

#include <string_view>

#include "engine/compare/model_trace.h"
#include "engine/plan/plan.h"
#include "engine/topology/topology.h"

namespace shardlab {

/// Reads "NAME key=value key=value ..." (parameter names as lab files
/// write them, snake_case). Checks the scenario exists, can be rebuilt
/// (ScenarioRebuildsPlan) and every value against its spec. Throws Error
/// (kInvalidInput) naming the word that is wrong.
PlanSettings ParsePlanSettings(std::string_view text);

/// Whether the scenario's plan can be rebuilt from settings: every
/// registered scenario that prepares a plan (collective, pipeline, tp,
/// zero, 3d, moe, dp-train, and any a file adds).
bool ScenarioRebuildsPlan(std::string_view scenario);

/// The plan `settings` describe, built as `run` builds it on its topology,
/// or on `topology` when given (a run of `--topology this`: the model's
/// GPUs); backend sim. Throws Error (kInvalidInput) for bad settings.
Plan BuildScenarioPlan(const PlanSettings& settings, const Topology* topology = nullptr);

/// Rebuilds the trace's plan, runs it on the simulator for the model of the
/// machine that ran it, and compares. Throws Error (kInvalidInput) with one
/// sentence when something the model needs is missing (the machine, its
/// rates, the scenario) or the rebuilt plan is not the one measured.
TraceModel ModelTrace(const LoadedTrace& trace, const TraceModelOptions& options);

}  // namespace shardlab
