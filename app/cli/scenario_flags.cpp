#include "app/cli/scenario_flags.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "engine/core/error.h"

namespace shardlab::cli {
namespace {

bool IsNegatedSwitch(const ParamSpec& p) {
  return p.type == ParamType::kBool && p.default_text == "true";
}

}  // namespace

std::string FlagNameOf(const ParamSpec& p) {
  std::string name = p.Flag().substr(2);
  return IsNegatedSwitch(p) ? "no-" + name : name;
}

FlagSpec FlagFromParam(const ParamSpec& p) {
  FlagSpec f;
  f.name = FlagNameOf(p);
  f.short_name = p.short_flag;
  if (p.type == ParamType::kBool) {
    // A switch: given, it turns the default over.
    f.help = IsNegatedSwitch(p) ? "do not " + p.help + " (default: " + p.name + " on)" : p.help;
  } else {
    f.value_name = ParamValueName(p);
    f.help = p.help + " " + ParamDefaultText(p);
  }
  for (const std::string& old : p.old_names) {
    std::string spelled = old;
    std::replace(spelled.begin(), spelled.end(), '_', '-');
    f.old_names.push_back(IsNegatedSwitch(p) ? "no-" + spelled : spelled);
  }
  return f;
}

void AddScenarioFlags(std::vector<FlagSpec>& flags, const ScenarioSpec& spec,
                      std::initializer_list<std::string_view> skip) {
  for (const ParamSpec& p : spec.params) {
    if (!p.cli || std::find(skip.begin(), skip.end(), p.name) != skip.end()) continue;
    flags.push_back(FlagFromParam(p));
  }
}

ScenarioParams ParamsFromArgs(const ScenarioSpec& spec, const ParsedArgs& args) {
  ScenarioParams params(spec);
  for (const ParamSpec& p : spec.params) {
    const std::string flag = FlagNameOf(p);
    if (!p.cli || !args.Has(flag)) continue;
    const std::string text =
        p.type == ParamType::kBool ? (IsNegatedSwitch(p) ? "false" : "true") : args.Get(flag);
    const std::string problem = CheckParamValue(p, text);
    if (!problem.empty()) throw UsageError(args.Spelling(flag) + ": " + problem);
    params.Set(p.name, text);
  }
  return params;
}

std::string PlanSettingsText(const ScenarioParams& params) {
  std::string out = params.spec().name;
  for (const auto& [name, value] : params.All()) {
    // A value with a space or none cannot be written as key=value; such a
    // parameter (free text) is left at what the rebuild's defaults give.
    if (!params.IsSet(name) || value.empty() || value.find(' ') != std::string::npos) continue;
    out += " " + name + "=" + value;
  }
  return out;
}

const ScenarioSpec& ScenarioSpecOf(std::string_view name) {
  const ScenarioSpec* spec = FindScenario(name);
  if (spec == nullptr) throw Error("internal: no scenario '" + std::string(name) + "' registered");
  return *spec;
}

std::string ScenarioListText() {
  std::size_t width = 0;
  for (const ScenarioSpec& s : Scenarios()) width = std::max(width, s.name.size());
  std::string text;
  for (const ScenarioSpec& s : Scenarios()) {
    text += "  " + s.name + std::string(width + 2 - s.name.size(), ' ') + s.summary + "\n";
  }
  return text;
}

}  // namespace shardlab::cli
