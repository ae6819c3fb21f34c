#include "app/gui/model/lab_settings.h"

#include <cmath>
#include <cstdlib>

#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"
#include "engine/model/zero_memory.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/scenarios/pipeline_scenario.h"
#include "engine/scenarios/tp_scenario.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab::gui {
namespace {

/// One scenario-panel field a lab parameter sets. Exactly one pointer is set.
struct Target {
  int ScenarioSettings::*number = nullptr;
  std::string ScenarioSettings::*text = nullptr;
  bool ScenarioSettings::*flag = nullptr;
};

/// A lab parameter and the panel fields it sets (zero's `params` sets two).
struct FieldMap {
  const char* scenario;
  const char* param;
  std::vector<Target> targets;
};

Target Int(int ScenarioSettings::*field) { return Target{field, nullptr, nullptr}; }
Target Text(std::string ScenarioSettings::*field) { return Target{nullptr, field, nullptr}; }
Target Flag(bool ScenarioSettings::*field) { return Target{nullptr, nullptr, field}; }

using S = ScenarioSettings;

/// Every lab parameter the app's panel has a field for. Parameters not
/// listed (dtype, root) have no field: LabStepSettings notes them.
const std::vector<FieldMap>& FieldMaps() {
  static const std::vector<FieldMap> maps = {
      {"collective", "kind", {Text(&S::scenario)}},
      {"collective", "algo", {Text(&S::algo)}},
      {"collective", "ranks", {Int(&S::ranks)}},
      {"collective", "size", {Text(&S::size)}},
      {"collective", "topology", {Text(&S::topology)}},
      {"collective", "ring_order", {Text(&S::ring_order)}},
      {"collective", "timing_only", {Flag(&S::timing_only)}},
      {"pipeline", "schedule", {Text(&S::schedule)}},
      {"pipeline", "stages", {Int(&S::stages)}},
      {"pipeline", "microbatches", {Int(&S::microbatches)}},
      {"pipeline", "chunks", {Int(&S::chunks)}},
      {"pipeline", "layers", {Int(&S::layers)}},
      {"pipeline", "width", {Int(&S::width)}},
      {"pipeline", "batch", {Int(&S::batch)}},
      {"pipeline", "topology", {Text(&S::topology)}},
      {"pipeline", "timing_only", {Flag(&S::timing_only)}},
      {"tp", "layer", {Text(&S::tp_layer)}},
      {"tp", "batch", {Int(&S::tp_batch)}},
      {"tp", "seq", {Int(&S::tp_seq)}},
      {"tp", "hidden", {Int(&S::tp_hidden)}},
      {"tp", "ffn", {Int(&S::tp_ffn)}},
      {"tp", "heads", {Int(&S::tp_heads)}},
      {"tp", "tp", {Int(&S::tp)}},
      {"tp", "sequence_parallel", {Flag(&S::sequence_parallel)}},
      {"tp", "topology", {Text(&S::topology)}},
      {"tp", "timing_only", {Flag(&S::timing_only)}},
      {"zero", "zero_stage", {Int(&S::zero_stage)}},
      {"zero", "ranks", {Int(&S::zero_ranks)}},
      {"zero", "params", {Int(&S::zero_layers), Int(&S::zero_width)}},
      {"zero", "layers", {Int(&S::zero_layers)}},
      {"zero", "width", {Int(&S::zero_width)}},
      {"zero", "batch", {Int(&S::zero_batch)}},
      {"zero", "steps", {Int(&S::zero_steps)}},
      {"zero", "bucket", {Text(&S::zero_bucket)}},
      {"zero", "overlap", {Flag(&S::zero_overlap)}},
      {"zero", "topology", {Text(&S::topology)}},
      {"zero", "timing_only", {Flag(&S::timing_only)}},
  };
  return maps;
}

const FieldMap* FindFieldMap(const std::string& scenario, const std::string& param) {
  for (const FieldMap& map : FieldMaps()) {
    if (scenario == map.scenario && param == map.param) return &map;
  }
  return nullptr;
}

/// The parameter's value: the step's, or the lab scenario table's default.
LabParam ValueOf(const LabParamSpec& spec, const std::vector<LabParam>& params) {
  if (const LabParam* given = FindLabParam(params, spec.name)) return *given;
  LabParam value;
  value.name = spec.name;
  value.text = spec.default_text;
  return value;
}

int IntOf(const LabParam& param) {
  if (param.type == LabParamType::kNumber) return static_cast<int>(std::llround(param.number));
  return std::atoi(param.text.c_str());
}

bool FlagOf(const LabParam& param) {
  if (param.type == LabParamType::kBool) return param.flag;
  return param.text == "true";
}

/// The app's name for the step's scenario ("collective" runs its kind).
std::string AppScenario(const std::string& scenario, const std::vector<LabParam>& params) {
  if (scenario != "collective") return scenario;
  const LabParamSpec* kind = FindLabScenario(scenario)->FindParam("kind");
  return LabParamText(ValueOf(*kind, params));
}

bool SameTarget(const Target& t, const ScenarioSettings& a, const ScenarioSettings& b) {
  if (t.number != nullptr) return a.*t.number == b.*t.number;
  if (t.text != nullptr) return a.*t.text == b.*t.text;
  return a.*t.flag == b.*t.flag;
}

void CopyTarget(const Target& t, const ScenarioSettings& from, ScenarioSettings* to) {
  if (t.number != nullptr) to->*t.number = from.*t.number;
  if (t.text != nullptr) to->*t.text = from.*t.text;
  if (t.flag != nullptr) to->*t.flag = from.*t.flag;
}

}  // namespace

LabSettings LabStepSettings(const std::string& scenario, const std::vector<LabParam>& params,
                            const ScenarioSettings& base) {
  const LabScenarioSpec* spec = FindLabScenario(scenario);
  if (spec == nullptr) {
    throw Error("scenario: unknown scenario '" + scenario + "' (" + LabScenarioNames() + ")");
  }
  for (const LabParam& param : params) {
    const LabParamSpec* param_spec = spec->FindParam(param.name);
    if (param_spec == nullptr) throw Error(param.name + ": not a parameter of scenario '" + scenario + "'");
    try {
      CheckLabParam(*param_spec, param);
    } catch (const Error& e) {
      throw Error(param.name + ": " + e.what());
    }
  }

  LabSettings out;
  out.settings = base;
  if (scenario == "memory") return out;  // formulas only: the views keep their run
  out.runs_in_app = true;
  out.settings.scenario = AppScenario(scenario, params);
  out.settings.backend = "sim";  // labs grade on the simulator; the views show the same run
  if (out.settings.is_pipeline()) out.settings.optimizer = "sgd";  // as the lab's run

  for (const LabParamSpec& param_spec : spec->params) {
    const LabParam value = ValueOf(param_spec, params);
    const FieldMap* map = FindFieldMap(scenario, param_spec.name);
    if (map == nullptr) {
      // No panel field: the app runs the panel's default. Worth a note
      // only when the step asks for something else.
      const std::string text = LabParamText(value);
      if (text != param_spec.default_text) {
        out.notes.push_back(param_spec.name + " = " + text + ": the app's views run " +
                            param_spec.name + " = " + param_spec.default_text);
      }
      continue;
    }
    if (scenario == "zero" && param_spec.name == "params") {
      const double count = value.type == LabParamType::kNumber ? value.number : ParseParameterCount(value.text);
      if (count <= 0) continue;  // 0: layers x width decide, set below
      const MlpConfig sized = MlpForParameterCount(count);
      out.settings.zero_layers = sized.layers;
      out.settings.zero_width = sized.width;
      continue;
    }
    if (scenario == "zero" && (param_spec.name == "layers" || param_spec.name == "width")) {
      const LabParam count = ValueOf(*spec->FindParam("params"), params);
      if (LabParamText(count) != "0") continue;  // `params` sized the model
    }
    for (const Target& t : map->targets) {
      if (t.number != nullptr) out.settings.*t.number = IntOf(value);
      if (t.text != nullptr) out.settings.*t.text = LabParamText(value);
      if (t.flag != nullptr) out.settings.*t.flag = FlagOf(value);
    }
  }
  // Parameters whose spec default follows the others ("all" ranks, 0 chunks,
  // "auto" algo, ...): the panel shows the value the run uses.
  const ScenarioParams resolved = LabScenarioParams(scenario, params);
  if (scenario == "collective") {
    const CollectiveScenario c = CollectiveFromParams(resolved);
    out.settings.ranks = c.ranks;
    out.settings.algo = CollectiveAlgoName(c.algo);
  } else if (scenario == "pipeline") {
    out.settings.chunks = PipelineFromParams(resolved).params.shape.chunks;
  } else if (scenario == "tp") {
    out.settings.tp_heads = TpFromParams(resolved).layer.heads;
  } else if (scenario == "zero") {
    out.settings.zero_batch = ZeroFromParams(resolved).params.model.batch;
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
  for (const std::string& name : locked) {
    const FieldMap* map = FindFieldMap(scenario, name);
    if (map == nullptr) continue;  // no panel field: nothing the student can change
    bool changed = false;
    for (const Target& t : map->targets) {
      if (SameTarget(t, step_settings, *edit)) continue;
      CopyTarget(t, step_settings, edit);
      changed = true;
    }
    if (changed) restored.push_back(name);
  }
  return restored;
}

}  // namespace shardlab::gui
