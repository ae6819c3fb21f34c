#include "engine/scenarios/scenario_spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>

#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/model/zero_memory.h"

namespace shardlab {
namespace {

std::string NumberText(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

std::string RangeProblem(const ParamSpec& p, double v, std::string_view text) {
  if (v < p.min) return "must be at least " + NumberText(p.min) + " (got " + std::string(text) + ")";
  if (v > p.max) return "must be at most " + NumberText(p.max) + " (got " + std::string(text) + ")";
  return "";
}

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i)
    out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return out;
}

// The value of a checked text, as a number (sizes in bytes, counts as counts).
double NumberOf(const ParamSpec& p, const std::string& text) {
  if (!p.auto_word.empty() && text == p.auto_word) return 0;
  switch (p.type) {
    case ParamType::kSize: return static_cast<double>(ParseSize(text, p.name));
    case ParamType::kCount: {
      // A plain number ("0": none given, as a lab file writes it), else "7.5B".
      double v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (!text.empty() && ec == std::errc() && end == text.data() + text.size() && v >= 0)
        return v;
      return ParseParameterCount(text);
    }
    case ParamType::kBool: return text == "true" ? 1 : 0;
    default: break;
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw Error(p.name + ": '" + text + "' is not a number");
  return v;
}

}  // namespace

const char* ParamTypeName(ParamType type) {
  switch (type) {
    case ParamType::kInteger: return "integer";
    case ParamType::kNumber: return "number";
    case ParamType::kSize: return "size";
    case ParamType::kCount: return "count";
    case ParamType::kChoice: return "choice";
    case ParamType::kText: return "text";
    case ParamType::kBool: return "bool";
    case ParamType::kTopology: return "topology";
  }
  return "?";
}

std::string ParamSpec::Flag() const {
  std::string flag = "--" + name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

const ParamSpec* ScenarioSpec::FindParam(std::string_view wanted) const {
  for (const ParamSpec& p : params)
    if (p.name == wanted) return &p;
  for (const ParamSpec& p : params)
    if (std::find(p.old_names.begin(), p.old_names.end(), wanted) != p.old_names.end()) return &p;
  return nullptr;
}

const QuantitySpec* ScenarioSpec::FindQuantity(std::string_view wanted) const {
  for (const QuantitySpec& q : measured)
    if (q.name == wanted) return &q;
  return nullptr;
}

std::string CanonicalParamValue(const ParamSpec& p, std::string_view text) {
  if (p.type == ParamType::kChoice)
    for (const auto& [alias, choice] : p.aliases)
      if (alias == text) return choice;
  return std::string(text);
}

std::string ParamValueName(const ParamSpec& p) {
  if (!p.value_name.empty()) return p.value_name;
  switch (p.type) {
    case ParamType::kInteger: return "N";
    case ParamType::kNumber: return "X";
    case ParamType::kSize: return "SIZE";
    case ParamType::kCount: return "COUNT";
    case ParamType::kChoice: return "NAME";
    case ParamType::kText: return "TEXT";
    case ParamType::kBool: return "";
    case ParamType::kTopology: return "NAME|FILE";
  }
  return "";
}

std::string ParamDefaultText(const ParamSpec& p) {
  std::string text = "default: " + (p.default_text.empty() ? std::string("none") : p.default_text);
  if (!p.unit.empty()) text += "; " + p.unit;
  const bool ranged = p.type == ParamType::kInteger || p.type == ParamType::kNumber ||
                      p.type == ParamType::kSize || p.type == ParamType::kCount;
  if (ranged && std::isfinite(p.min) && std::isfinite(p.max)) {
    text += "; " + NumberText(p.min) + " .. " + NumberText(p.max);
  } else if (ranged && std::isfinite(p.min)) {
    text += "; at least " + NumberText(p.min);
  } else if (ranged && std::isfinite(p.max)) {
    text += "; at most " + NumberText(p.max);
  }
  if (p.type == ParamType::kChoice) text += "; " + Joined(p.choices);
  return "(" + text + ")";
}

ParamSpec Param(std::string name, ParamType type, std::string default_text, std::string help) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.default_text = std::move(default_text);
  p.help = std::move(help);
  return p;
}

ParamSpec TopologyParam(std::string help) {
  return Param("topology", ParamType::kTopology, "dgx-a100", std::move(help)).Short('t');
}

ParamSpec TimingOnlyParam(std::string help) {
  return Param("timing_only", ParamType::kBool, "false", std::move(help));
}

ParamSpec DTypeParam(std::string help, std::vector<std::string> choices) {
  ParamSpec p = Param("dtype", ParamType::kChoice, "fp32", std::move(help))
                    .Choices(std::move(choices))
                    .ValueName("TYPE")
                    .Noun("type");
  for (const auto& [alias, choice] : {std::pair{"f32", "fp32"}, {"f16", "fp16"}})
    if (std::find(p.choices.begin(), p.choices.end(), choice) != p.choices.end())
      p.aliases.emplace_back(alias, choice);
  return p;
}

DType ParamDType(const ScenarioParams& params, std::string_view name) {
  const std::string& t = params.Text(name);
  if (t == "fp16") return DType::kF16;
  if (t == "bf16") return DType::kBF16;
  return DType::kF32;
}

std::string CheckParamValue(const ParamSpec& p, std::string_view text) {
  const std::string t = CanonicalParamValue(p, text);
  switch (p.type) {
    case ParamType::kInteger: {
      if (!p.auto_word.empty() && t == p.auto_word) return "";
      long long v = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (t.empty() || ec != std::errc() || end != t.data() + t.size())
        return "must be an integer (got '" + t + "')";
      return RangeProblem(p, static_cast<double>(v), t);
    }
    case ParamType::kNumber: {
      double v = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v))
        return "not a number: '" + t + "'";
      return RangeProblem(p, v, t);
    }
    case ParamType::kSize:
    case ParamType::kCount: {
      double v = 0;
      try {
        v = NumberOf(p, t);
      } catch (const Error& e) {
        std::string m = e.what();
        const std::string prefix = p.name + ": ";
        if (m.rfind(prefix, 0) == 0) m.erase(0, prefix.size());
        return m;
      }
      return RangeProblem(p, v, t);
    }
    case ParamType::kChoice:
      if (std::find(p.choices.begin(), p.choices.end(), t) == p.choices.end())
        return "unknown " + (p.noun.empty() ? p.name : p.noun) + " '" + t + "' (" +
               Joined(p.choices) + ")";
      return "";
    case ParamType::kBool:
      if (t != "true" && t != "false") return "'" + t + "' is not true or false";
      return "";
    case ParamType::kText:
      return "";
    case ParamType::kTopology:
      if (t.empty()) return "names no topology";
      return "";
  }
  return "";
}

ScenarioParams::ScenarioParams(const ScenarioSpec& spec) : spec_(&spec) {
  for (const ParamSpec& p : spec.params) values_[p.name] = p.default_text;
}

const ParamSpec& ScenarioParams::Find(std::string_view name) const {
  const ParamSpec* p = spec_->FindParam(name);
  if (p == nullptr)
    throw Error(std::string(name) + ": scenario '" + spec_->name + "' has no such parameter");
  return *p;
}

void ScenarioParams::Set(std::string_view name, std::string_view text) {
  const ParamSpec& p = Find(name);
  if (const std::string problem = CheckParamValue(p, text); !problem.empty())
    throw Error(p.name + ": " + problem);
  values_[p.name] = CanonicalParamValue(p, text);
  set_[p.name] = true;
}

void ScenarioParams::ApplyPreset(std::string_view name) {
  const auto it = spec_->presets.find(std::string(name));
  if (it == spec_->presets.end()) {
    std::string known;
    for (const auto& [preset, values] : spec_->presets) known += (known.empty() ? "" : ", ") + preset;
    throw Error("unknown preset '" + std::string(name) + "' of scenario " + spec_->name +
                (known.empty() ? " (it has none)" : " (" + known + ")"));
  }
  for (const auto& [param, text] : it->second) {
    const ParamSpec& p = Find(param);
    if (const std::string problem = CheckParamValue(p, text); !problem.empty())
      throw Error("preset " + it->first + ": " + p.name + ": " + problem);
    values_[p.name] = CanonicalParamValue(p, text);
  }
}

bool ScenarioParams::IsSet(std::string_view name) const {
  return set_.count(Find(name).name) > 0;
}

const std::string& ScenarioParams::Text(std::string_view name) const {
  return values_.find(Find(name).name)->second;
}

std::int64_t ScenarioParams::Int(std::string_view name) const {
  return static_cast<std::int64_t>(std::llround(Number(name)));
}

double ScenarioParams::Number(std::string_view name) const {
  const ParamSpec& p = Find(name);
  return NumberOf(p, values_.find(p.name)->second);
}

std::uint64_t ScenarioParams::Size(std::string_view name) const {
  return static_cast<std::uint64_t>(Number(name));
}

bool ScenarioParams::Bool(std::string_view name) const { return Text(name) == "true"; }

std::vector<std::pair<std::string, std::string>> ScenarioParams::All() const {
  std::vector<std::pair<std::string, std::string>> all;
  for (const ParamSpec& p : spec_->params) all.emplace_back(p.name, values_.find(p.name)->second);
  return all;
}

// ---- the registry ------------------------------------------------------------

void RegisterBuiltinScenarios();  // scenario_list.cpp, generated by CMake

namespace {

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::deque<ScenarioSpec>& Registry() {
  static std::deque<ScenarioSpec> all;
  return all;
}

void AddLocked(ScenarioSpec spec) {
  for (ScenarioSpec& s : Registry()) {
    if (s.name == spec.name) {
      s = std::move(spec);
      return;
    }
  }
  Registry().push_back(std::move(spec));
}

bool& BuiltinsLoading() {
  static bool loading = false;
  return loading;
}

// Built-ins go in first, once, before any lookup or run-time registration.
void EnsureBuiltinsLoaded() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::lock_guard lock(RegistryMutex());
    BuiltinsLoading() = true;
    RegisterBuiltinScenarios();
    BuiltinsLoading() = false;
  });
}

}  // namespace

void RegisterScenario(ScenarioSpec spec) {
  if (BuiltinsLoading()) {  // called from RegisterBuiltinScenarios (lock held)
    AddLocked(std::move(spec));
    return;
  }
  EnsureBuiltinsLoaded();
  std::lock_guard lock(RegistryMutex());
  AddLocked(std::move(spec));
}

const std::deque<ScenarioSpec>& Scenarios() {
  EnsureBuiltinsLoaded();
  return Registry();
}

const ScenarioSpec* FindScenario(std::string_view name) {
  for (const ScenarioSpec& s : Scenarios())
    if (s.name == name) return &s;
  return nullptr;
}

std::string ScenarioNames() {
  std::string names;
  for (const ScenarioSpec& s : Scenarios()) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

}  // namespace shardlab
