#include "app/gui/model/lab_settings.h"

#include "app/gui/model/scenario_fields.h"
#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"
#include "engine/model/zero_memory.h"
#include "engine/scenarios/zero_scenario.h"

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
  if (scenario == "memory") return out;  // formulas only: the views keep their run
  out.runs_in_app = RunsInApp(scenario);
  if (!out.runs_in_app) return out;
  ApplyParams(values, &out.settings);  // every parameter, by the app's one table
  if (scenario == kCollectiveSpec) out.settings.scenario = values.Text(kCollectiveKindParam);
  out.settings.backend = "sim";  // labs grade on the simulator; the views show the same run
  out.settings.in_worker = false;
  // ZeRO's `params` sizes the MLP: the panel shows the layers and width it builds.
  if (scenario == kZeroScenario && values.Number("params") > 0) {
    const MlpConfig sized = MlpForParameterCount(values.Number("params"));
    out.settings.zero_layers = sized.layers;
    out.settings.zero_width = sized.width;
    out.settings.other_params["zero.params"] = "0";
  }
  return out;
}

std::vector<std::string> RestoreLockedFields(const std::string& scenario,
                                             const std::vector<std::string>& locked,
                                             const ScenarioSettings& step_settings,
                                             ScenarioSettings* edit) {
  std::vector<std::string> restored;
  if (locked.empty() || scenario == "memory") return restored;
  if (edit->scenario != step_settings.scenario) {
    edit->scenario = step_settings.scenario;
    edit->algo = step_settings.algo;  // the panel resets the algorithm with the kind
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
