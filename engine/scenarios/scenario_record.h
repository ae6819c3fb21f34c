// A scenario's parameters as the worker protocol's scenario record
// (engine/io/worker_protocol.h), and back, checked against the spec. The
// record itself is plain name = value text, so io/ knows no scenario; the
// spec that gives it meaning is here.
#pragma once

#include "engine/io/worker_protocol.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {

/// The scenario record of `params`: its spec's name and every parameter.
ScenarioRecord ScenarioRecordOf(const ScenarioParams& params);
/// The parameters a scenario record carries, checked against the spec of
/// its scenario: Error (kInvalidInput) "scenario record: ..." for a scenario
/// this build does not have, a name its spec does not have, a value out of
/// range, or a parameter missing.
ScenarioParams ParamsFromScenarioRecord(const ScenarioRecord& record);

}  // namespace shardlab
