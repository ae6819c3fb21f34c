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

using S = ScenarioSettings;

SettingsField Int(int S::*field) { return SettingsField{field, nullptr, nullptr, nullptr}; }
SettingsField Real(double S::*field) { return SettingsField{nullptr, field, nullptr, nullptr}; }
SettingsField Text(std::string S::*field) { return SettingsField{nullptr, nullptr, field, nullptr}; }
SettingsField Flag(bool S::*field) { return SettingsField{nullptr, nullptr, nullptr, field}; }

struct Binding {
  const char* spec;   // "" for every spec that has the parameter
  const char* param;
  SettingsField field;
};

/// The one table from the specs' parameters to the app's settings: which
/// member holds each. Defaults, ranges, units and help are the spec's.
const std::vector<Binding>& Table() {
  static const std::vector<Binding> table = {
      {"", "topology", Text(&S::topology)},
      {"", "timing_only", Flag(&S::timing_only)},
      {"collective", "algo", Text(&S::algo)},
      {"collective", "ranks", Int(&S::ranks)},
      {"collective", "size", Text(&S::size)},
      {"collective", "ring_order", Text(&S::ring_order)},
      {"pipeline", "schedule", Text(&S::schedule)},
      {"pipeline", "stages", Int(&S::stages)},
      {"pipeline", "microbatches", Int(&S::microbatches)},
      {"pipeline", "chunks", Int(&S::chunks)},
      {"pipeline", "layers", Int(&S::layers)},
      {"pipeline", "width", Int(&S::width)},
      {"pipeline", "batch", Int(&S::batch)},
      {"pipeline", "optimizer", Text(&S::optimizer)},
      {"tp", "layer", Text(&S::tp_layer)},
      {"tp", "tp", Int(&S::tp)},
      {"tp", "batch", Int(&S::tp_batch)},
      {"tp", "seq", Int(&S::tp_seq)},
      {"tp", "hidden", Int(&S::tp_hidden)},
      {"tp", "ffn", Int(&S::tp_ffn)},
      {"tp", "heads", Int(&S::tp_heads)},
      {"tp", "sequence_parallel", Flag(&S::sequence_parallel)},
      {"zero", "zero_stage", Int(&S::zero_stage)},
      {"zero", "ranks", Int(&S::zero_ranks)},
      {"zero", "layers", Int(&S::zero_layers)},
      {"zero", "width", Int(&S::zero_width)},
      {"zero", "batch", Int(&S::zero_batch)},
      {"zero", "steps", Int(&S::zero_steps)},
      {"zero", "bucket", Text(&S::zero_bucket)},
      {"zero", "overlap", Flag(&S::zero_overlap)},
      {"zero", "k", Int(&S::zero_k)},
      {"3d", "dp", Int(&S::dp)},
      {"3d", "pp", Int(&S::pp)},
      {"3d", "tp", Int(&S::tp3)},
      {"3d", "zero_stage", Int(&S::td_zero)},
      {"3d", "schedule", Text(&S::td_schedule)},
      {"3d", "microbatches", Int(&S::td_microbatches)},
      {"3d", "layers", Int(&S::td_layers)},
      {"3d", "width", Int(&S::td_width)},
      {"3d", "batch", Int(&S::td_batch)},
      {"3d", "optimizer", Text(&S::td_optimizer)},
      {"moe", "ranks", Int(&S::moe_ranks)},
      {"moe", "experts", Int(&S::moe_experts)},
      {"moe", "top_k", Int(&S::moe_top_k)},
      {"moe", "tokens", Int(&S::moe_tokens)},
      {"moe", "hidden", Int(&S::moe_hidden)},
      {"moe", "ffn", Int(&S::moe_ffn)},
      {"moe", "capacity_factor", Real(&S::moe_capacity)},
      {"moe", "skew", Text(&S::moe_skew)},
  };
  return table;
}

std::string RealText(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string OtherKey(const ScenarioSpec& spec, const ParamSpec& param) { return spec.name + "." + param.name; }

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

bool ScenarioSettings::is_collective() const {
  const ScenarioSpec* spec = SpecOf(scenario);
  return spec == nullptr || IsCollective(*spec);
}

ScenarioSettings::ScenarioSettings() {
  for (const ScenarioSpec& spec : Scenarios()) {
    if (!IsCollective(spec)) ApplySpecDefaults(spec, this);
  }
  if (const ScenarioSpec* collective = FindScenario(kCollectiveSpec)) ApplySpecDefaults(*collective, this);
}

const ScenarioSpec* SpecOf(std::string_view app_scenario) {
  if (const ScenarioSpec* spec = FindScenario(app_scenario)) return spec;
  return FindScenario(kCollectiveSpec);  // a kind, or a name the kind's check refuses
}

const SettingsField* BoundField(std::string_view spec, std::string_view param) {
  for (const Binding& b : Table()) {
    if (b.spec == spec && b.param == param) return &b.field;
  }
  for (const Binding& b : Table()) {
    if (b.spec[0] == '\0' && b.param == param) return &b.field;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> Bindings() {
  std::vector<std::pair<std::string, std::string>> all;
  for (const Binding& b : Table()) {
    if (b.spec[0] != '\0') all.emplace_back(b.spec, b.param);
  }
  return all;
}

std::string ParamText(const ScenarioSettings& s, const ScenarioSpec& spec, const ParamSpec& param) {
  if (IsCollective(spec) && param.name == kCollectiveKindParam) return s.scenario;
  if (const SettingsField* f = BoundField(spec.name, param.name)) {
    if (f->number != nullptr) {
      // A word in place of a number ("all" GPUs) is 0 in the field.
      if (!param.auto_word.empty() && s.*f->number == 0 && param.min > 0) return param.auto_word;
      return std::to_string(s.*f->number);
    }
    if (f->real != nullptr) return RealText(s.*f->real);
    if (f->text != nullptr) return s.*f->text;
    return s.*f->flag ? "true" : "false";
  }
  const auto it = s.other_params.find(OtherKey(spec, param));
  return it != s.other_params.end() ? it->second : param.default_text;
}

void SetParamText(ScenarioSettings* s, const ScenarioSpec& spec, const ParamSpec& param, const std::string& text) {
  if (IsCollective(spec) && param.name == kCollectiveKindParam) {
    s->scenario = text;
    return;
  }
  if (const SettingsField* f = BoundField(spec.name, param.name)) {
    if (f->number != nullptr) {
      if (!param.auto_word.empty() && text == param.auto_word) {
        s->*f->number = 0;
        return;
      }
      // A text that is no whole number leaves the field; ParamsOf refuses it
      // where it comes from (flags and labs check before they set).
      long long v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && end == text.data() + text.size()) s->*f->number = static_cast<int>(v);
    } else if (f->real != nullptr) {
      double v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && end == text.data() + text.size()) s->*f->real = v;
    } else if (f->text != nullptr) {
      s->*f->text = text;
    } else {
      s->*f->flag = text == "true";
    }
    return;
  }
  s->other_params[OtherKey(spec, param)] = text;
}

void ApplySpecDefaults(const ScenarioSpec& spec, ScenarioSettings* settings) {
  for (const ParamSpec& p : spec.params) SetParamText(settings, spec, p, p.default_text);
}

ScenarioSettings DefaultSettings(const std::string& app_scenario) {
  ScenarioSettings s;
  if (const ScenarioSpec* spec = SpecOf(app_scenario)) {
    ApplySpecDefaults(*spec, &s);
    if (!IsCollective(*spec)) s.scenario = spec->name;
  }
  if (s.is_collective() && SpecOf(app_scenario) != nullptr && FindScenario(app_scenario) == nullptr) {
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
    if (spec->name == "tp" && p.name == "heads" && settings.tp_layer != "attention" &&
        settings.tp_layer != "transformer") {
      continue;
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
