#include "engine/scenarios/scenario_record.h"

#include "engine/core/error.h"

namespace shardlab {

ScenarioRecord ScenarioRecordOf(const ScenarioParams& params) {
  return ScenarioRecord{params.spec().name, params.All()};
}

ScenarioParams ParamsFromScenarioRecord(const ScenarioRecord& record) {
  const ScenarioSpec* spec = FindScenario(record.scenario);
  if (spec == nullptr) {
    throw Error("scenario record: unknown scenario '" + record.scenario + "' (" + ScenarioNames() + ")",
                ErrorKind::kInvalidInput);
  }
  ScenarioParams params(*spec);
  for (const auto& [name, value] : record.params) {
    const ParamSpec* p = spec->FindParam(name);
    if (p == nullptr || p->name != name) {  // the record writes the spec's own names
      throw Error("scenario record: '" + name + "' is not a parameter of " + spec->name,
                  ErrorKind::kInvalidInput);
    }
    if (params.IsSet(name)) {
      throw Error("scenario record: '" + name + "' is given twice", ErrorKind::kInvalidInput);
    }
    try {
      params.Set(name, value);
    } catch (const Error& e) {
      throw Error(std::string("scenario record: ") + e.what(), ErrorKind::kInvalidInput);
    }
  }
  for (const ParamSpec& p : spec->params) {
    if (!params.IsSet(p.name)) {
      throw Error("scenario record: " + spec->name + "'s parameter '" + p.name + "' is missing",
                  ErrorKind::kInvalidInput);
    }
  }
  return params;
}

}  // namespace shardlab
