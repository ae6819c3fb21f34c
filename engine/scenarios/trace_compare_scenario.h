// The "trace-compare" scenario: a measured trace shipped with the project
// against the simulator's model of the machine that recorded it
// (engine/compare/model_trace.h), reduced to numbers a lab grades: the two
// times, their ratio, and the facts behind the explanation (the op group
// that differs most: its kind, size, times, rates and concurrency).
//
//   trace_file ──┐
//   plan_settings├─► ModelTrace ──► Comparison ──► model_us, measured_us, ratio,
//   profile_file ┘                                 group_* (the biggest contributor), ...
//
// Paths are relative to the repository root (where the shipped traces
// live), so a lab grades the same on every machine, with or without a GPU.
#pragma once

#include <map>
#include <string>

#include "engine/compare/model_trace.h"
#include "engine/io/trace_reader.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

/// The file `relative` names: under the repository root (the source tree
/// this engine was built from), else under the working directory. Throws
/// Error (kInvalidInput) "<field>: ..." for an absolute path, a '..' part,
/// or a file in neither place.
std::string ResolveRepositoryFile(const std::string& field, const std::string& relative);

/// The trace the parameters name and its model: what the app lays on one
/// timeline (the measured run solid, the model's ops as outlines). The
/// trace's `source` is the path as the parameters give it.
struct TraceCompareRun {
  LoadedTrace trace;
  TraceModel model;
};
TraceCompareRun RunTraceCompare(const ScenarioParams& params);

/// Checks the parameters (files exist, settings parse) without running.
void CheckTraceCompare(const ScenarioParams& params);

/// Models the trace and compares; the measured quantities of the spec and
/// the comparison's explanation as `summary`.
std::map<std::string, double> MeasureTraceCompare(const ScenarioParams& params, std::string* summary);

}  // namespace shardlab
