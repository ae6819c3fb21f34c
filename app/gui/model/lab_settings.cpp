#include "app/gui/model/lab_settings.h"

#include "app/gui/model/scenario_fields.h"
#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"
#include "engine/model/zero_memory.h"
#include "engine/scenarios/zero_scenario.h"  // MlpForParameterCount

namespace shardlab::gui {

LabSettings LabStepSettings(const std::string& scenario, const std::vector<LabParam>& params,
                            const ScenarioSettings& base) {
  if (FindLabScenario(scenario) == nullptr) {
    throw Error("scenario: unknown scenario '" + scenario + "' (" + LabScenarioNames() + ")");
  }
  // The step's values, checked against the scenario's spec, its defaults for
  // the rest: the very parameters the grader's run reads.
  const ScenarioParams values = LabScenarioParams(scenario, params);

  LabSettings out;
  out.settings = base;
  out.runs_in_app = RunsInApp(scenario);
  if (!out.runs_in_app) return out;  // formulas only ("memory"): the views keep their run
  ApplyParams(values, &out.settings);  // every parameter, by the app's one table
  if (scenario == kCollectiveSpec) out.settings.scenario = values.Text(kCollectiveKindParam);
  out.settings.backend = "sim";  // labs grade on the simulator; the views show the same run
  out.settings.in_worker = false;
  // A model size (`params`, a count) sizes the MLP: the panel shows the
  // layers and width it builds, which the app's fields edit.
  const ParamSpec* count = values.spec().FindParam("params");
  if (count != nullptr && count->type == ParamType::kCount && values.spec().FindParam("layers") != nullptr &&
      values.spec().FindParam("width") != nullptr && values.Number("params") > 0) {
    const MlpConfig sized = MlpForParameterCount(values.Number("params"));
    out.settings.SetParam("layers", std::to_string(sized.layers));
    out.settings.SetParam("width", std::to_string(sized.width));
    out.settings.SetParam("params", "0");
  }
  return out;
}

std::vector<std::string> RestoreLockedFields(const std::string& scenario,
                                             const std::vector<std::string>& locked,
                                             const ScenarioSettings& step_settings,
                                             ScenarioSettings* edit) {
  std::vector<std::string> restored;
  if (locked.empty() || !RunsInApp(scenario)) return restored;  // "memory": formulas only
  if (edit->scenario != step_settings.scenario) {
    edit->scenario = step_settings.scenario;
    // The panel resets the algorithm with the kind.
    if (edit->Param("algo") != step_settings.Param("algo")) edit->SetParam("algo", step_settings.Param("algo"));
    restored.push_back("scenario");
  }
  const ScenarioSpec* spec = FindScenario(scenario);
  if (spec == nullptr) return restored;
  for (const std::string& name : locked) {
    const ParamSpec* param = spec->FindParam(name);
    if (param == nullptr) continue;
    if (scenario == kCollectiveSpec && param->name == kCollectiveKindParam) continue;  // the scenario, above
    const std::string want = ParamText(step_settings, *spec, *param);
    if (ParamText(*edit, *spec, *param) == want) continue;
    SetParamText(edit, *spec, *param, want);
    restored.push_back(name);
  }
  return restored;
}

}  // namespace shardlab::gui
