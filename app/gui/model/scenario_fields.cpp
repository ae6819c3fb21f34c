#include "app/gui/model/scenario_fields.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "app/gui/i18n/language.h"
#include "app/gui/i18n/spec_text.h"
#include "app/gui/model/this_machine_choice.h"
#include "engine/algorithms/collective.h"
#include "engine/core/error.h"

namespace shardlab::gui {
namespace {

std::string RealText(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// The settings' key of a parameter: "tp.hidden".
std::string Key(const ScenarioSpec& spec, std::string_view param) { return spec.name + "." + std::string(param); }

/// The settings' own field of every spec's topology parameter.
bool IsTopology(const ParamSpec& param) { return param.name == "topology"; }

/// `text` as the settings keep it: a whole number plainly written ("04"
/// is "4"), 0 as the parameter's auto word where it has one ("all").
std::string Canonical(const ParamSpec& param, const std::string& text) {
  if (param.type != ParamType::kInteger) return text;
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return text;  // ParamsOf says what is wrong
  if (v == 0 && !param.auto_word.empty() && param.min > 0) return param.auto_word;
  return std::to_string(v);
}

/// "microbatches" -> "Microbatches", "top_k" -> "Top k"; a short name
/// without vowels is an abbreviation: "tp" -> "TP", "ffn" -> "FFN".
std::string LabelOf(const std::string& name) {
  std::string label = name;
  if (label.size() <= 3 && label.find_first_of("aeiou_") == std::string::npos) {
    for (char& c : label) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return label;
  }
  std::replace(label.begin(), label.end(), '_', ' ');
  if (!label.empty() && label[0] >= 'a' && label[0] <= 'z') label[0] = static_cast<char>(label[0] - 'a' + 'A');
  return label;
}

bool IsCollective(const ScenarioSpec& spec) { return spec.name == kCollectiveSpec; }

/// What the help says 0 means: "every GPU of the topology" from "...; 0:
/// every GPU of the topology"; "" when it says nothing.
std::string ZeroMeaning(const std::string& help, const std::string& word = "0") {
  const std::string key = word + ": ";
  for (std::size_t at = help.find(key); at != std::string::npos; at = help.find(key, at + 1)) {
    if (at > 0 && help[at - 1] != ' ' && help[at - 1] != '(') continue;  // "10: " is no zero
    const std::size_t from = at + key.size();
    const std::size_t to = help.find_first_of(";)", from);
    return help.substr(from, to == std::string::npos ? std::string::npos : to - from);
  }
  return "";
}

}  // namespace

ScenarioSettings::ScenarioSettings() {
  if (const ScenarioSpec* collective = FindScenario(kCollectiveSpec)) ApplySpecDefaults(*collective, this);
}

std::string ScenarioSettings::Param(std::string_view name) const {
  const ScenarioSpec* spec = SpecOf(scenario);
  if (spec == nullptr) return "";
  if (const ParamSpec* p = spec->FindParam(name)) return ParamText(*this, *spec, *p);
  const auto it = params.find(Key(*spec, name));
  return it != params.end() ? it->second : "";
}

long long ScenarioSettings::Int(std::string_view name) const {
  const std::string text = Param(name);
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() ? v : 0;
}

bool ScenarioSettings::Flag(std::string_view name) const { return Param(name) == "true"; }

void ScenarioSettings::SetParam(std::string_view name, const std::string& text) {
  const ScenarioSpec* spec = SpecOf(scenario);
  if (spec == nullptr) return;
  if (const ParamSpec* p = spec->FindParam(name)) {
    SetParamText(this, *spec, *p, text);
  } else if (text.empty() || text == "false") {
    params.erase(Key(*spec, name));  // what a parameter never set reads as
  } else {
    params[Key(*spec, name)] = text;
  }
}

bool IsCollectiveScenario(const ScenarioSettings& settings) {
  const ScenarioSpec* spec = SpecOf(settings.scenario);
  return spec == nullptr || IsCollective(*spec);
}

const ScenarioSpec* SpecOf(std::string_view app_scenario) {
  if (const ScenarioSpec* spec = FindScenario(app_scenario)) return spec;
  return FindScenario(kCollectiveSpec);  // a kind, or a name the kind's check refuses
}

std::string ParamText(const ScenarioSettings& s, const ScenarioSpec& spec, const ParamSpec& param) {
  if (IsCollective(spec) && param.name == kCollectiveKindParam) return s.scenario;
  if (IsTopology(param)) return s.topology;
  const auto it = s.params.find(Key(spec, param.name));
  return it != s.params.end() ? it->second : param.default_text;
}

void SetParamText(ScenarioSettings* s, const ScenarioSpec& spec, const ParamSpec& param, const std::string& text) {
  if (IsCollective(spec) && param.name == kCollectiveKindParam) {
    s->scenario = text;
  } else if (IsTopology(param)) {
    s->topology = text;
  } else if (const std::string value = Canonical(param, text); value == Canonical(param, param.default_text)) {
    s->params.erase(Key(spec, param.name));
  } else {
    s->params[Key(spec, param.name)] = value;
  }
}

void ApplySpecDefaults(const ScenarioSpec& spec, ScenarioSettings* settings) {
  const std::string prefix = spec.name + ".";
  for (auto it = settings->params.lower_bound(prefix); it != settings->params.end() && it->first.rfind(prefix, 0) == 0;) {
    it = settings->params.erase(it);
  }
  for (const ParamSpec& p : spec.params) {
    if (IsTopology(p) || (IsCollective(spec) && p.name == kCollectiveKindParam)) SetParamText(settings, spec, p, p.default_text);
  }
}

ScenarioSettings DefaultSettings(const std::string& app_scenario) {
  ScenarioSettings s;
  const ScenarioSpec* spec = SpecOf(app_scenario);
  if (spec == nullptr) return s;
  ApplySpecDefaults(*spec, &s);
  if (!IsCollective(*spec)) {
    s.scenario = spec->name;
  } else if (FindScenario(app_scenario) == nullptr) {
    s.scenario = app_scenario;  // a kind: the collective spec's defaults, this kind
  }
  return s;
}

ScenarioParams ParamsOf(const ScenarioSettings& settings) {
  const ScenarioSpec* spec = SpecOf(settings.scenario);
  if (spec == nullptr) {
    throw Error("scenario: unknown scenario '" + settings.scenario + "' (" + ScenarioNames() + ")",
                ErrorKind::kInvalidInput);
  }
  ScenarioParams params(*spec);
  for (const ParamSpec& p : spec->params) {
    const std::string text = ParamText(settings, *spec, p);
    try {
      params.Set(p.name, text);
    } catch (const Error& e) {
      if (IsCollective(*spec) && p.name == kCollectiveKindParam) {
        // The app calls the kind its scenario.
        try {
          ParseCollectiveKind(text);
        } catch (const Error& kind) {
          throw Error(std::string("scenario: ") + kind.what(), ErrorKind::kInvalidInput);
        }
      }
      throw;
    }
  }
  return params;
}

void ApplyParams(const ScenarioParams& params, ScenarioSettings* settings) {
  const ScenarioSpec& spec = params.spec();
  if (!IsCollective(spec)) settings->scenario = spec.name;
  for (const ParamSpec& p : spec.params) SetParamText(settings, spec, p, params.Text(p.name));
}

std::string AppScenarioOf(const ScenarioParams& params) {
  if (IsCollective(params.spec()) && params.spec().FindParam(kCollectiveKindParam) != nullptr) {
    return params.Text(kCollectiveKindParam);
  }
  return params.spec().name;
}

bool RunsInApp(std::string_view spec_name) {
  const ScenarioSpec* spec = FindScenario(spec_name);
  return spec != nullptr && (spec->prepare != nullptr || Session::ShowsAsFinishedRun(spec_name));
}

std::vector<ScenarioChoice> ScenarioChoices() {
  std::vector<ScenarioChoice> choices;
  bool after_kinds = false;
  for (const ScenarioSpec& spec : Scenarios()) {
    const ParamSpec* kind = IsCollective(spec) ? spec.FindParam(kCollectiveKindParam) : nullptr;
    if (kind != nullptr) {
      for (const std::string& k : kind->choices) {
        ScenarioChoice c;
        c.name = k;
        c.title = k;  // the panel words it ("ring all-reduce")
        c.summary = SpecSummary(spec);
        choices.push_back(c);
      }
      after_kinds = true;
      continue;
    }
    ScenarioChoice c;
    c.name = spec.name;
    c.title = SpecTitle(spec);  // in the app's language
    c.summary = SpecSummary(spec);
    c.runs_in_app = RunsInApp(spec.name);
    c.separator_before = after_kinds;
    after_kinds = false;
    choices.push_back(c);
  }
  return choices;
}

std::vector<PanelField> PanelFields(const ScenarioSettings& settings, int topology_gpus) {
  std::vector<PanelField> fields;
  const ScenarioSpec* spec = SpecOf(settings.scenario);
  if (spec == nullptr) return fields;
  for (const ParamSpec& p : spec->params) {
    if (p.name == "topology" || p.name == "timing_only") continue;
    if (IsCollective(*spec) && p.name == kCollectiveKindParam) continue;
    const std::string value = ParamText(settings, *spec, p);
    // Fields the other fields make meaningless.
    const ParamSpec* schedule = spec->FindParam("schedule");
    if (p.name == "chunks" && schedule != nullptr && ParamText(settings, *spec, *schedule) != "interleaved") continue;
    // "This machine" sets the placement and the issue costs from its model (this_machine_choice.h).
    if (IsCollective(*spec) && IsThisMachine(settings.topology) &&
        (p.name == "on_gpus" || p.name == "issue_us" || p.name == "graph_op_us")) {
      continue;
    }
    const ParamSpec* layer = spec->FindParam("layer");
    if (p.name == "heads" && layer != nullptr) {
      const std::string kind = ParamText(settings, *spec, *layer);
      if (kind != "attention" && kind != "transformer") continue;
    }
    PanelField f;
    f.name = p.name;
    f.label = ParamLabel(*spec, p, LabelOf(p.name));  // in the app's language
    const std::string help = ParamHelp(*spec, p);
    const std::string unit = UnitText(p.unit);
    f.value = value;
    f.unit = p.unit;
    f.default_text = p.default_text;
    if (p.min <= 0 && p.max >= 0) f.zero_text = ZeroMeaning(help);
    if (!p.auto_word.empty() && p.min > 0) f.zero_text = ZeroMeaning(help, p.auto_word);
    f.choices = p.choices;
    f.min = p.min;
    f.max = p.max;
    // A word in place of a number ("all") is the slider's 0.
    if (p.type == ParamType::kInteger && !p.auto_word.empty() && p.min > 0) f.min = 0;
    switch (p.type) {
      case ParamType::kInteger: {
        if (p.unit == "GPUs" && topology_gpus > 1 && topology_gpus < f.max) f.max = topology_gpus;
        const bool finite = std::isfinite(f.min) && std::isfinite(f.max);
        f.widget = finite && f.max - f.min <= kMaxSliderSpan ? FieldWidget::kSlider : FieldWidget::kInteger;
        f.format = "%d" + (unit.empty() ? std::string() : " " + unit);
        break;
      }
      case ParamType::kNumber: f.widget = FieldWidget::kNumber; break;
      case ParamType::kChoice: f.widget = FieldWidget::kChoice; break;
      case ParamType::kBool: f.widget = FieldWidget::kCheckbox; break;
      case ParamType::kSize:
      case ParamType::kCount:
      case ParamType::kText:
      case ParamType::kTopology: f.widget = FieldWidget::kText; break;
    }
    // The help says what the spec says: the line, the default, the range.
    f.help = help + "\n" + Format(Tr("default %s"), (p.default_text + (unit.empty() ? "" : " " + unit)).c_str());
    if (std::isfinite(p.min) || std::isfinite(p.max)) {
      f.help += "; ";
      if (std::isfinite(p.min) && std::isfinite(p.max)) {
        f.help += Format(Tr("%s to %s"), RealText(p.min).c_str(), RealText(p.max).c_str());
      } else if (std::isfinite(p.min)) {
        f.help += Format(Tr("at least %s"), RealText(p.min).c_str());
      } else {
        f.help += Format(Tr("at most %s"), RealText(p.max).c_str());
      }
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

std::string AsFlagMessage(const ScenarioSettings& settings, const std::string& message) {
  const ScenarioSpec* spec = SpecOf(settings.scenario);
  if (spec == nullptr) return message;
  if (message.rfind("scenario: ", 0) == 0) return "--" + message;
  // The engine's name for several parameters at once.
  if (message.rfind("grid: ", 0) == 0 && spec->FindParam("dp") && spec->FindParam("pp") && spec->FindParam("tp")) {
    return "--dp/--pp/--tp: " + message.substr(6);
  }
  for (const ParamSpec& p : spec->params) {
    std::vector<std::string> names = {p.name};
    names.insert(names.end(), p.old_names.begin(), p.old_names.end());
    // The engine's own messages sometimes write a name with spaces or dashes.
    std::string spaced = p.name;
    std::replace(spaced.begin(), spaced.end(), '_', ' ');
    names.push_back(spaced);
    std::string dashed = p.name;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    names.push_back(dashed);
    for (const std::string& name : names) {
      if (message.rfind(name + ": ", 0) == 0) return p.Flag() + message.substr(name.size());
    }
  }
  return message;
}

}  // namespace shardlab::gui
