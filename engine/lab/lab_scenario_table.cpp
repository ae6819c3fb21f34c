// Lab scenarios: the registry's scenarios a lab can run (LabScenarios), and
// the check of one lab file value against its parameter's spec.
// lab_scenario.cpp runs them through the registry.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "engine/core/error.h"
#include "engine/core/toml.h"
#include "engine/core/units.h"
#include "engine/lab/lab_scenario.h"
#include "engine/model/zero_memory.h"
#include "engine/scenarios/scenario.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

using K = ParamType;

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

bool IsWhole(double x) { return std::isfinite(x) && std::floor(x) == x; }

}  // namespace

LabParam LabParamDefault(const ParamSpec& spec) {
  LabParam p;
  p.name = spec.name;
  if (!spec.auto_word.empty() && spec.default_text == spec.auto_word) {
    p.type = LabParamType::kString;  // "all": a word, as a lab file may write it
    p.text = spec.default_text;
    return p;
  }
  switch (spec.type) {
    case K::kInteger:
    case K::kNumber:
      p.type = LabParamType::kNumber;
      p.number = std::strtod(spec.default_text.c_str(), nullptr);
      break;
    case K::kBool:
      p.type = LabParamType::kBool;
      p.flag = spec.default_text == "true";
      break;
    default: {
      // A plain number default ("0" parameters: none given) is a number,
      // as a lab file would write it; "64M", "7.5B" stay strings.
      const bool digits = !spec.default_text.empty() &&
                          std::all_of(spec.default_text.begin(), spec.default_text.end(),
                                      [](char c) { return c >= '0' && c <= '9'; });
      if (digits && (spec.type == K::kSize || spec.type == K::kCount)) {
        p.type = LabParamType::kNumber;
        p.number = std::strtod(spec.default_text.c_str(), nullptr);
      } else {
        p.type = LabParamType::kString;
        p.text = spec.default_text;
      }
      break;
    }
  }
  return p;
}

std::vector<const ScenarioSpec*> LabScenarios() {
  std::vector<const ScenarioSpec*> out;
  for (const ScenarioSpec& spec : Scenarios())
    if (ScenarioRuns(spec)) out.push_back(&spec);
  return out;
}

const ScenarioSpec* FindLabScenario(const std::string& name) {
  const ScenarioSpec* spec = FindScenario(name);
  return spec != nullptr && ScenarioRuns(*spec) ? spec : nullptr;
}

const ParamSpec* LabSettableParam(const ScenarioSpec& spec, const std::string& name) {
  const ParamSpec* p = spec.FindParam(name);
  return p != nullptr && p->lab ? p : nullptr;
}

std::string LabScenarioNames() {
  std::vector<std::string> names;
  for (const ScenarioSpec* s : LabScenarios()) names.push_back(s->name);
  return JoinNames(names);
}

std::string LabParamSpecText(const LabParam& param) {
  if (param.type == LabParamType::kNumber && IsWhole(param.number) && std::fabs(param.number) < 9e15) {
    return std::to_string(static_cast<long long>(param.number));
  }
  return LabParamText(param);
}

namespace {

void CheckLabParamType(const ParamSpec& spec, const LabParam& param) {
  auto want = [&](const char* what) {
    const char* got = param.type == LabParamType::kString ? "a string"
                      : param.type == LabParamType::kBool ? "a boolean"
                                                          : "a number";
    throw Error(std::string("must be ") + what + ", not " + got);
  };
  switch (spec.type) {
    case K::kInteger:
      if (param.type == LabParamType::kString && !spec.auto_word.empty() &&
          param.text == spec.auto_word)
        return;
      if (param.type != LabParamType::kNumber) want("a whole number");
      if (!IsWhole(param.number) || std::fabs(param.number) > 1e9) {
        throw Error("must be a whole number between -1e9 and 1e9, not " +
                    TomlNumber(param.number));
      }
      return;
    case K::kNumber:
      if (param.type != LabParamType::kNumber) want("a number");
      if (!std::isfinite(param.number)) throw Error("must be a finite number");
      return;
    case K::kSize:
      if (param.type == LabParamType::kNumber) {
        if (!IsWhole(param.number) || param.number < 0 || param.number > 9.0e15) {
          throw Error("must be a whole number of bytes >= 0, not " + TomlNumber(param.number));
        }
        return;
      }
      if (param.type != LabParamType::kString) want("a size (\"64M\" or a number of bytes)");
      {
        Bytes bytes = 0;
        std::string error;
        // ParseSize's message starts with the field name; ours is added by the caller.
        try {
          bytes = ParseSize(param.text, "size");
        } catch (const Error& e) {
          std::string message = e.what();
          if (message.rfind("size: ", 0) == 0) message = message.substr(6);
          throw Error(message);
        }
        (void)bytes;
      }
      return;
    case K::kCount:
      if (param.type == LabParamType::kNumber) {
        if (!std::isfinite(param.number) || param.number < 0) {
          throw Error("must be a parameter count >= 0");
        }
        return;
      }
      if (param.type != LabParamType::kString) want("a parameter count (\"7.5B\" or a number)");
      try {
        ParseParameterCount(param.text);
      } catch (const Error& e) {
        std::string message = e.what();
        if (message.rfind("params: ", 0) == 0) message = message.substr(8);
        throw Error(message);
      }
      return;
    case K::kChoice:
      if (param.type != LabParamType::kString) want("a string");
      if (std::find(spec.choices.begin(), spec.choices.end(),
                    CanonicalParamValue(spec, param.text)) == spec.choices.end()) {
        throw Error("unknown value '" + param.text + "' (" + JoinNames(spec.choices) + ")");
      }
      return;
    case K::kText:
      if (param.type != LabParamType::kString) want("a string");
      if (param.text.empty()) throw Error("must not be empty");
      return;
    case K::kBool:
      if (param.type != LabParamType::kBool) want("true or false");
      return;
    case K::kTopology: {
      if (param.type != LabParamType::kString) want("a topology preset name");
      std::vector<std::string> names;
      for (const PresetInfo& p : ListTopologyPresets()) {
        if (p.name == param.text) return;
        names.push_back(p.name);
      }
      // Parametric clusters ("16x-dgx-a100-ib") are not in the list: ask the builder.
      try {
        MakeTopologyPreset(param.text);
        return;
      } catch (const Error&) {
      }
      throw Error("'" + param.text + "' is not a topology preset (" + JoinNames(names) +
                  ", <N>x-dgx-a100-ib, <N>x-dgx-h100-ib); lab files cannot name topology files");
    }
  }
}

}  // namespace

void CheckLabParam(const ParamSpec& spec, const LabParam& param) {
  CheckLabParamType(spec, param);
  // The spec's own check: its range, its choices (and their aliases).
  if (spec.type == K::kTopology) return;
  const std::string problem = CheckParamValue(spec, LabParamSpecText(param));
  if (!problem.empty()) throw Error(problem);
}

}  // namespace shardlab
