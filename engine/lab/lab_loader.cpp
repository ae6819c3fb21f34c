// Lab loader and validator: TOML tree -> Lab, noting every problem with its
// line and field instead of stopping at the first.
#include "engine/lab/lab_loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/toml.h"
#include "engine/lab/formula.h"
#include "engine/lab/lab_scenario.h"
#include "engine/lab/lab_translation.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

bool IsIdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

std::string Indexed(const std::string& name, std::size_t index) {
  return name + "[" + std::to_string(index + 1) + "]";
}

class LabReader {
 public:
  LabReader(std::string path, std::vector<LabProblem>* problems)
      : path_(std::move(path)), problems_(problems) {}

  void Problem(int line, const std::string& field, const std::string& message) {
    problems_->push_back(LabProblem{path_, line, field, message});
  }

  // ---- typed fields -------------------------------------------------------

  /// Notes every key of `table` that is not in `allowed`.
  void CheckKnown(const TomlValue& table, const std::string& prefix,
                  std::initializer_list<const char*> allowed) {
    for (const TomlEntry& e : table.entries) {
      bool known = false;
      for (const char* a : allowed) known = known || e.key == a;
      if (!known) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        Problem(e.line, Join(prefix, e.key), "unknown field (known: " + list + ")");
      }
    }
  }

  static std::string Join(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
  }

  const TomlEntry* Typed(const TomlValue& table, const std::string& prefix, const char* key,
                         TomlType type, const char* what, bool required) {
    const TomlEntry* e = table.Find(key);
    if (e == nullptr) {
      if (required) Problem(table.line, Join(prefix, key), std::string("missing (") + what + ")");
      return nullptr;
    }
    if (e->value.type != type &&
        !(type == TomlType::kFloat && e->value.type == TomlType::kInteger)) {
      Problem(e->line, Join(prefix, key),
              std::string("must be ") + what + ", not " + TomlTypeName(e->value.type));
      return nullptr;
    }
    return e;
  }

  bool String(const TomlValue& table, const std::string& prefix, const char* key, bool required,
              std::string* out, bool non_empty = false) {
    const TomlEntry* e = Typed(table, prefix, key, TomlType::kString, "a string", required);
    if (e == nullptr) return false;
    if (non_empty && e->value.string_value.empty()) {
      Problem(e->line, Join(prefix, key), "must not be empty");
      return false;
    }
    *out = e->value.string_value;
    return true;
  }

  bool Integer(const TomlValue& table, const std::string& prefix, const char* key, bool required,
               long min, long max, int* out) {
    const TomlEntry* e = Typed(table, prefix, key, TomlType::kInteger, "a whole number", required);
    if (e == nullptr) return false;
    if (e->value.int_value < min || e->value.int_value > max) {
      Problem(e->line, Join(prefix, key),
              "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                  ", not " + std::to_string(e->value.int_value));
      return false;
    }
    *out = static_cast<int>(e->value.int_value);
    return true;
  }

  bool Number(const TomlValue& table, const std::string& prefix, const char* key, double min,
              double* out) {
    const TomlEntry* e = Typed(table, prefix, key, TomlType::kFloat, "a number", false);
    if (e == nullptr) return false;
    const double v = e->value.number();
    if (!std::isfinite(v) || v < min) {
      Problem(e->line, Join(prefix, key), "must be a number >= " + TomlNumber(min));
      return false;
    }
    *out = v;
    return true;
  }

  bool Strings(const TomlValue& table, const std::string& prefix, const char* key, bool required,
               std::vector<std::string>* out, int* line = nullptr) {
    const TomlEntry* e =
        Typed(table, prefix, key, TomlType::kArray, "an array of strings", required);
    if (e == nullptr) return false;
    if (line != nullptr) *line = e->line;
    out->clear();
    bool ok = true;
    for (std::size_t i = 0; i < e->value.items.size(); ++i) {
      const TomlValue& item = e->value.items[i];
      if (item.type != TomlType::kString) {
        Problem(item.line > 0 ? item.line : e->line, Indexed(Join(prefix, key), i),
                std::string("must be a string, not ") + TomlTypeName(item.type));
        ok = false;
        continue;
      }
      out->push_back(item.string_value);
    }
    return ok;
  }

  /// An id: letters, digits, '-', '_'.
  bool CheckId(int line, const std::string& field, const std::string& id) {
    if (id.empty() || id.size() > 64 || !std::all_of(id.begin(), id.end(), IsIdChar)) {
      Problem(line, field, "'" + id + "' is not an id (1 to 64 letters, digits, '-', '_')");
      return false;
    }
    return true;
  }

  /// The line of a table's `id`, or `fallback`.
  static int IdLine(const TomlValue& table, int fallback) {
    const TomlEntry* id = table.Find("id");
    return id != nullptr ? id->line : fallback;
  }

  // ---- the lab ------------------------------------------------------------

  void ReadTop(const TomlValue& root, Lab* lab) {
    CheckKnown(root, "",
               {"format", "title", "summary", "minutes", "goals", "prerequisites", "step"});
    if (Integer(root, "", "format", true, 0, 1000000, &lab->format) &&
        lab->format != kLabFormatVersion) {
      Problem(root.Find("format")->line, "format",
              "this ShardLab reads format " + std::to_string(kLabFormatVersion) + ", not " +
                  std::to_string(lab->format));
    }
    String(root, "", "title", true, &lab->title, true);
    String(root, "", "summary", false, &lab->summary);
    Integer(root, "", "minutes", true, 1, 600, &lab->minutes);
    int goals_line = 0;
    if (Strings(root, "", "goals", true, &lab->goals, &goals_line) && lab->goals.empty()) {
      Problem(goals_line, "goals", "must list at least one goal");
    }
    Strings(root, "", "prerequisites", false, &lab->prerequisites);

    const TomlEntry* steps = root.Find("step");
    if (steps == nullptr) {
      Problem(0, "step", "missing: a lab needs at least one [[step]]");
      return;
    }
    if (steps->value.type != TomlType::kArray || !steps->value.array_of_tables) {
      Problem(steps->line, "step", "must be [[step]] tables (one per step)");
      return;
    }
    if (static_cast<int>(steps->value.items.size()) > kMaxLabSteps) {
      Problem(steps->line, "step",
              "a lab has at most " + std::to_string(kMaxLabSteps) + " steps, this one " +
                  std::to_string(steps->value.items.size()));
      return;
    }
    std::set<std::string> step_ids, question_ids;
    for (std::size_t i = 0; i < steps->value.items.size(); ++i) {
      const TomlValue& table = steps->value.items[i];
      LabStep step;
      ReadStep(table, Indexed("step", i), lab->dir, &step);
      if (!step.id.empty() && !step_ids.insert(step.id).second) {
        Problem(IdLine(table, step.line), Indexed("step", i) + ".id",
                "'" + step.id + "' is used by an earlier step");
      }
      const TomlEntry* question_tables = table.Find("question");
      for (std::size_t q = 0; q < step.questions.size(); ++q) {
        const LabQuestion& question = step.questions[q];
        if (!question.id.empty() && !question_ids.insert(question.id).second) {
          Problem(IdLine(question_tables->value.items[q], question.line),
                  Indexed("step", i) + "." + Indexed("question", q) + ".id",
                  "'" + question.id + "' is used by an earlier question (ids are unique in a lab)");
        }
      }
      lab->steps.push_back(std::move(step));
    }
  }

  void ReadStep(const TomlValue& t, const std::string& prefix, const std::string& dir,
                LabStep* step) {
    step->line = t.line;
    CheckKnown(t, prefix,
               {"id", "title", "text", "text_file", "scenario", "params", "locked", "variant",
                "question"});
    if (String(t, prefix, "id", true, &step->id)) CheckId(t.Find("id")->line, prefix + ".id", step->id);
    String(t, prefix, "title", true, &step->title, true);
    const bool has_text = String(t, prefix, "text", false, &step->text);
    const bool has_file = String(t, prefix, "text_file", false, &step->text_file, true);
    if (has_text && has_file) {
      Problem(t.Find("text_file")->line, prefix + ".text_file",
              "give either text or text_file, not both");
    } else if (!has_text && !has_file && t.Find("text") == nullptr &&
               t.Find("text_file") == nullptr) {
      Problem(t.line, prefix + ".text", "missing (a string, or text_file naming a file)");
    } else if (has_file) {
      ReadTextFile(t.Find("text_file")->line, prefix + ".text_file", dir, step);
    }

    const bool has_scenario = String(t, prefix, "scenario", false, &step->scenario, true);
    const ScenarioSpec* spec = nullptr;
    if (has_scenario) {
      spec = FindLabScenario(step->scenario);
      if (spec == nullptr) {
        Problem(t.Find("scenario")->line, prefix + ".scenario",
                "unknown scenario '" + step->scenario + "' (" + LabScenarioNames() + ")");
      }
    }
    bool params_ok = ReadParams(t, prefix, spec, &step->params);
    if (!has_scenario && t.Find("params") != nullptr) {
      Problem(t.Find("params")->line, prefix + ".params", "parameters need a scenario");
      params_ok = false;
    }

    int locked_line = 0;
    if (Strings(t, prefix, "locked", false, &step->locked, &locked_line)) {
      if (!has_scenario && !step->locked.empty()) {
        Problem(locked_line, prefix + ".locked", "locked parameters need a scenario");
      }
      for (std::size_t i = 0; i < step->locked.size() && spec != nullptr; ++i) {
        if (const ParamSpec* ps = LabSettableParam(*spec, step->locked[i]); ps == nullptr) {
          Problem(locked_line, Indexed(prefix + ".locked", i),
                  "'" + step->locked[i] + "' is not a parameter of scenario '" + spec->name + "'");
        } else {
          step->locked[i] = ps->name;
        }
      }
    }

    // Variants are checked by the engine only on top of a step that passes,
    // so one bad step parameter is reported once.
    const bool engine_ok = spec != nullptr && params_ok &&
                           CheckEngine(t.Find("params"), t.line, prefix, *spec, step->params);

    if (const TomlEntry* variants = t.Find("variant")) {
      if (!has_scenario) {
        Problem(variants->line, prefix + ".variant", "variants need a scenario");
      } else if (variants->value.type != TomlType::kArray || !variants->value.array_of_tables) {
        Problem(variants->line, prefix + ".variant", "must be [[step.variant]] tables");
      } else if (static_cast<int>(variants->value.items.size()) > kMaxLabVariantsPerStep) {
        Problem(variants->line, prefix + ".variant",
                "a step has at most " + std::to_string(kMaxLabVariantsPerStep) + " variants");
      } else {
        std::set<std::string> ids;
        for (std::size_t i = 0; i < variants->value.items.size(); ++i) {
          LabVariant v;
          ReadVariant(variants->value.items[i], Indexed(prefix + ".variant", i),
                      engine_ok ? spec : nullptr, spec, *step, &ids, &v);
          step->variants.push_back(std::move(v));
        }
      }
    }

    if (const TomlEntry* questions = t.Find("question")) {
      if (questions->value.type != TomlType::kArray || !questions->value.array_of_tables) {
        Problem(questions->line, prefix + ".question", "must be [[step.question]] tables");
      } else if (static_cast<int>(questions->value.items.size()) > kMaxLabQuestionsPerStep) {
        Problem(questions->line, prefix + ".question",
                "a step has at most " + std::to_string(kMaxLabQuestionsPerStep) + " questions");
      } else {
        const std::vector<std::string> names = LabStepValueNames(*step);
        for (std::size_t i = 0; i < questions->value.items.size(); ++i) {
          LabQuestion q;
          ReadQuestion(questions->value.items[i], Indexed(prefix + ".question", i), *step, names,
                       &q);
          step->questions.push_back(std::move(q));
        }
      }
    }
  }

  void ReadTextFile(int line, const std::string& field, const std::string& dir, LabStep* step) {
    std::string error;
    if (!ReadLabFolderFile(dir, step->text_file, kMaxLabTextBytes, &step->text, &error)) {
      Problem(line, field, error);
    }
  }

  /// `[...params]`: each parameter's type checked against the scenario.
  bool ReadParams(const TomlValue& t, const std::string& prefix, const ScenarioSpec* spec,
                  std::vector<LabParam>* params) {
    const TomlEntry* e = t.Find("params");
    if (e == nullptr) return true;
    const std::string field = prefix + ".params";
    if (e->value.type != TomlType::kTable) {
      Problem(e->line, field, "must be a table ([step.params])");
      return false;
    }
    bool ok = true;
    for (const TomlEntry& p : e->value.entries) {
      LabParam param;
      param.name = p.key;
      param.line = p.line;
      switch (p.value.type) {
        case TomlType::kString:
          param.type = LabParamType::kString;
          param.text = p.value.string_value;
          break;
        case TomlType::kInteger:
        case TomlType::kFloat:
          param.type = LabParamType::kNumber;
          param.number = p.value.number();
          break;
        case TomlType::kBool:
          param.type = LabParamType::kBool;
          param.flag = p.value.bool_value;
          break;
        default:
          Problem(p.line, field + "." + p.key,
                  std::string("must be a string, number or boolean, not ") +
                      TomlTypeName(p.value.type));
          ok = false;
          continue;
      }
      if (spec != nullptr) {
        const ParamSpec* ps = LabSettableParam(*spec, p.key);
        if (ps == nullptr) {
          std::string names;
          for (const ParamSpec& s : spec->params)
            if (s.lab) names += (names.empty() ? "" : ", ") + s.name;
          Problem(p.line, field + "." + p.key,
                  "unknown parameter of scenario '" + spec->name + "' (" + names + ")");
          ok = false;
          continue;
        }
        try {
          CheckLabParam(*ps, param);
        } catch (const Error& err) {
          Problem(p.line, field + "." + p.key, err.what());
          ok = false;
          continue;
        }
        param.name = ps->name;  // an old spelling ("stage") is stored by its new name
        if (ps->type == ParamType::kChoice)
          param.text = CanonicalParamValue(*ps, param.text);  // "f32" -> "fp32"
      }
      params->push_back(std::move(param));
    }
    return ok;
  }

  /// The engine's own checks of the whole set (ranks fit the topology, ...).
  bool CheckEngine(const TomlEntry* params_entry, int step_line, const std::string& prefix,
                   const ScenarioSpec& spec, const std::vector<LabParam>& params) {
    try {
      CheckLabScenario(spec.name, params);
      return true;
    } catch (const Error& e) {
      // The engine's message starts with the parameter's name: point at it.
      std::string message = e.what();
      std::string field = prefix + ".params";
      int line = params_entry != nullptr ? params_entry->line : step_line;
      const std::size_t colon = message.find(": ");
      if (colon != std::string::npos) {
        std::string name = message.substr(0, colon);
        std::replace(name.begin(), name.end(), '-', '_');
        if (spec.FindParam(name) != nullptr) {
          field += "." + name;
          message = message.substr(colon + 2);
          if (const LabParam* p = FindLabParam(params, name); p != nullptr && p->line > 0) {
            line = p->line;
          }
        }
      }
      Problem(line, field, message);
      return false;
    }
  }

  /// `engine_spec` is null when the step's own parameters failed (the
  /// variant's parameters are then checked one by one only).
  void ReadVariant(const TomlValue& t, const std::string& prefix,
                   const ScenarioSpec* engine_spec, const ScenarioSpec* spec,
                   const LabStep& step, std::set<std::string>* ids, LabVariant* v) {
    v->line = t.line;
    CheckKnown(t, prefix, {"id", "params"});
    if (String(t, prefix, "id", true, &v->id)) {
      const int line = t.Find("id")->line;
      const bool name_like = !v->id.empty() &&
                             (std::isalpha(static_cast<unsigned char>(v->id[0])) || v->id[0] == '_') &&
                             std::all_of(v->id.begin(), v->id.end(), [](char c) {
                               return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                             });
      if (!name_like) {
        Problem(line, prefix + ".id",
                "'" + v->id + "' is not a variant id (a letter or '_', then letters, digits, '_': "
                "formulas write it as " + v->id + ".time_ms)");
      } else if (!ids->insert(v->id).second) {
        Problem(line, prefix + ".id", "'" + v->id + "' is used by an earlier variant of this step");
      } else if (spec != nullptr && (spec->FindParam(v->id) != nullptr || spec->FindQuantity(v->id))) {
        Problem(line, prefix + ".id", "'" + v->id + "' is already the name of a parameter or quantity");
      }
    }
    const bool ok = ReadParams(t, prefix, spec, &v->params);
    if (t.Find("params") == nullptr) {
      Problem(t.line, prefix + ".params", "missing: a variant changes at least one parameter");
    } else if (ok && engine_spec != nullptr) {
      CheckEngine(t.Find("params"), t.line, prefix, *engine_spec,
                  MergeLabParams(step.params, v->params));
    }
  }

  /// Parses `text` as a formula and checks the names it reads.
  void CheckFormula(int line, const std::string& field, const std::string& text,
                    const LabStep& step, const std::vector<std::string>& names) {
    Formula formula;
    try {
      formula = Formula::Parse(text);
    } catch (const Error& e) {
      Problem(line, field, std::string("formula '") + text + "': " + e.what());
      return;
    }
    // An unknown scenario is already reported; its names cannot be checked.
    if (step.runs() && FindLabScenario(step.scenario) == nullptr) return;
    for (const std::string& name : formula.Variables()) {
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      if (!step.runs()) {
        Problem(line, field, "formula reads '" + name + "', but the step has no scenario to give it");
      } else {
        Problem(line, field, "formula reads '" + name + "', which is not a parameter or measured quantity of scenario '" +
                                 step.scenario + "' (or of a variant of this step)");
      }
    }
  }

  void ReadQuestion(const TomlValue& t, const std::string& prefix, const LabStep& step,
                    const std::vector<std::string>& names, LabQuestion* q) {
    q->line = t.line;
    CheckKnown(t, prefix,
               {"id", "kind", "prompt", "points", "expected", "measured", "units", "tolerance",
                "tolerance_abs", "options", "answer", "correct_if", "feedback", "feedback_low",
                "feedback_high", "explain"});
    if (String(t, prefix, "id", true, &q->id)) CheckId(t.Find("id")->line, prefix + ".id", q->id);
    std::string kind = "number";
    if (String(t, prefix, "kind", false, &kind)) {
      if (kind != "number" && kind != "choice") {
        Problem(t.Find("kind")->line, prefix + ".kind", "must be \"number\" or \"choice\", not '" + kind + "'");
        return;  // the other fields depend on the kind
      }
    }
    q->kind = kind == "choice" ? LabQuestionKind::kChoice : LabQuestionKind::kNumber;
    String(t, prefix, "prompt", true, &q->prompt, true);
    Integer(t, prefix, "points", false, 1, 100, &q->points);
    String(t, prefix, "feedback", false, &q->feedback);
    String(t, prefix, "explain", false, &q->explain);

    auto only_for = [&](const char* key, const char* kind_name) {
      if (const TomlEntry* e = t.Find(key)) {
        Problem(e->line, prefix + "." + key, std::string("only for ") + kind_name + " questions");
      }
    };

    if (q->kind == LabQuestionKind::kNumber) {
      for (const char* key : {"options", "answer", "correct_if"}) only_for(key, "choice");
      String(t, prefix, "units", false, &q->units);
      String(t, prefix, "feedback_low", false, &q->feedback_low);
      String(t, prefix, "feedback_high", false, &q->feedback_high);
      Number(t, prefix, "tolerance", 0, &q->tolerance);
      Number(t, prefix, "tolerance_abs", 0, &q->tolerance_abs);
      const bool has_expected = String(t, prefix, "expected", false, &q->expected, true);
      const bool has_measured = String(t, prefix, "measured", false, &q->measured, true);
      const bool tried = t.Find("expected") != nullptr || t.Find("measured") != nullptr;
      if (has_expected && has_measured) {
        Problem(t.Find("measured")->line, prefix + ".measured", "give either expected or measured, not both");
      } else if (!tried) {
        Problem(t.line, prefix + ".expected", "missing: a number question needs expected (a formula) or measured (a quantity)");
      } else if (has_expected) {
        CheckFormula(t.Find("expected")->line, prefix + ".expected", q->expected, step, names);
      } else if (has_measured) {
        const int line = t.Find("measured")->line;
        if (!step.runs()) {
          Problem(line, prefix + ".measured", "'" + q->measured + "' needs a scenario in this step");
        } else if (FindLabScenario(step.scenario) != nullptr &&
                   std::find(names.begin(), names.end(), q->measured) == names.end()) {
          Problem(line, prefix + ".measured",
                  "'" + q->measured + "' is not a measured quantity of scenario '" + step.scenario +
                      "' (or of a variant of this step)");
        }
      }
      return;
    }

    for (const char* key : {"expected", "measured", "units", "tolerance", "tolerance_abs",
                            "feedback_low", "feedback_high"}) {
      only_for(key, "number");
    }
    int options_line = t.line;
    if (Strings(t, prefix, "options", true, &q->options, &options_line)) {
      std::set<std::string> seen;
      if (q->options.size() < 2 || static_cast<int>(q->options.size()) > kMaxLabOptions) {
        Problem(options_line, prefix + ".options",
                "a choice has 2 to " + std::to_string(kMaxLabOptions) + " options, not " +
                    std::to_string(q->options.size()));
      }
      for (std::size_t i = 0; i < q->options.size(); ++i) {
        if (q->options[i].empty()) {
          Problem(options_line, Indexed(prefix + ".options", i), "must not be empty");
        } else if (!seen.insert(q->options[i]).second) {
          Problem(options_line, Indexed(prefix + ".options", i), "'" + q->options[i] + "' is listed twice");
        }
      }
    }
    const bool has_answer = String(t, prefix, "answer", false, &q->answer, true);
    int cond_line = 0;
    const bool has_conditions = Strings(t, prefix, "correct_if", false, &q->correct_if, &cond_line);
    if (has_answer && has_conditions) {
      Problem(cond_line, prefix + ".correct_if", "give either answer or correct_if, not both");
    } else if (t.Find("answer") == nullptr && t.Find("correct_if") == nullptr) {
      Problem(t.line, prefix + ".answer", "missing: a choice question needs answer (an option) or correct_if (one condition per option)");
    } else if (has_answer) {
      if (!q->options.empty() &&
          std::find(q->options.begin(), q->options.end(), q->answer) == q->options.end()) {
        Problem(t.Find("answer")->line, prefix + ".answer", "'" + q->answer + "' is not one of the options");
      }
    } else if (has_conditions) {
      if (q->options.size() >= 2 && q->correct_if.size() != q->options.size()) {
        Problem(cond_line, prefix + ".correct_if",
                "has " + std::to_string(q->correct_if.size()) + " conditions for " +
                    std::to_string(q->options.size()) + " options (one per option, in order)");
      }
      for (std::size_t i = 0; i < q->correct_if.size(); ++i) {
        CheckFormula(cond_line, Indexed(prefix + ".correct_if", i), q->correct_if[i], step, names);
      }
    }
  }

 private:
  std::string path_;
  std::vector<LabProblem>* problems_;
};

}  // namespace

bool ReadLabFolderFile(const std::string& dir, const std::string& name, std::size_t max_bytes,
                       std::string* text, std::string* error) {
  const fs::path rel(name);
  bool bad = rel.is_absolute() || name.find('\\') != std::string::npos;
  for (const fs::path& part : rel) bad = bad || part == ".." || part == ".";
  if (bad) {
    *error = "'" + name + "' must be a path inside the lab's folder (no '..', not absolute)";
    return false;
  }
  const fs::path full = fs::path(dir.empty() ? "." : dir) / rel;
  std::error_code ec;
  const auto size = fs::file_size(full, ec);
  if (ec || !fs::is_regular_file(full, ec)) {
    *error = "cannot read '" + full.string() + "' (no such file)";
    return false;
  }
  // A symbolic link in a downloaded lab must not read files outside it.
  const fs::path real = fs::weakly_canonical(full, ec);
  const fs::path root = fs::weakly_canonical(fs::path(dir.empty() ? "." : dir), ec);
  const auto [root_end, real_it] = std::mismatch(root.begin(), root.end(), real.begin(), real.end());
  (void)real_it;
  if (ec || root_end != root.end()) {
    *error = "'" + name + "' leads outside the lab's folder (a symbolic link?)";
    return false;
  }
  if (size > max_bytes) {
    *error = "'" + full.string() + "' is " + std::to_string(size) + " bytes; " +
             (max_bytes == kMaxLabTextBytes ? "text files" : "lab files") + " are at most " +
             std::to_string(max_bytes);
    return false;
  }
  std::ifstream in(full, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in.good() && !in.eof()) {
    *error = "cannot read '" + full.string() + "'";
    return false;
  }
  std::string all = bytes.str();
  if (all.find('\0') != std::string::npos) {
    *error = "'" + full.string() + "' is not text (it holds NUL bytes)";
    return false;
  }
  *text = std::move(all);
  return true;
}

namespace {

std::string ReadWholeFile(const std::string& path, std::string* error) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    *error = "no such file";
    return {};
  }
  const auto size = fs::file_size(path, ec);
  if (ec) {
    *error = ec.message();
    return {};
  }
  if (size > kMaxTomlBytes) {
    *error = "the file is " + std::to_string(size) + " bytes; lab files are at most " +
             std::to_string(kMaxTomlBytes);
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    if (!in.eof()) *error = "cannot read the file";
  }
  return text.str();
}

/// A parse error "path:12: message" as a problem with its line.
LabProblem ProblemFromParseError(const std::string& path, const std::string& message) {
  LabProblem p;
  p.path = path;
  std::string rest = message;
  if (rest.rfind(path + ":", 0) == 0) rest = rest.substr(path.size() + 1);
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits > 0 && rest.compare(digits, 2, ": ") == 0) {
    p.line = std::stoi(rest.substr(0, digits));
    rest = rest.substr(digits + 2);
  } else if (rest.rfind(" ", 0) == 0) {
    rest = rest.substr(1);
  }
  p.message = rest;
  return p;
}

}  // namespace

std::string LabProblem::text() const {
  std::string out = path;
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

std::string LabLoadResult::ProblemsText() const {
  std::string out;
  for (const LabProblem& p : problems) out += p.text() + "\n";
  return out;
}

LabLoadResult ReadLabText(std::string_view text, const std::string& path) {
  LabLoadResult result;
  Lab& lab = result.lab;
  lab.path = path;
  const fs::path p(path);
  lab.dir = p.parent_path().string();
  lab.id = p.parent_path().filename().string();
  if (lab.id.empty() || lab.id == ".") lab.id = fs::absolute(p).parent_path().filename().string();
  TomlValue root;
  try {
    root = ParseToml(text, path);
  } catch (const Error& e) {
    result.problems.push_back(ProblemFromParseError(path, e.what()));
    return result;
  }
  LabReader reader(path, &result.problems);
  reader.ReadTop(root, &lab);
  std::stable_sort(result.problems.begin(), result.problems.end(),
                   [](const LabProblem& a, const LabProblem& b) { return a.line < b.line; });
  return result;
}

bool IsLabFolder(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / kLabFileName, ec);
}

LabLoadResult ReadLab(const std::string& path, std::string_view lang) {
  if (!IsLabLanguage(lang)) {
    throw Error("unknown lab language '" + std::string(lang) + "' (" + LabLanguagesText() + ")");
  }
  std::error_code ec;
  const std::string file =
      fs::is_directory(path, ec) ? (fs::path(path) / kLabFileName).string() : path;
  std::string error;
  const std::string text = ReadWholeFile(file, &error);
  if (!error.empty()) {
    LabLoadResult result;
    result.lab.path = file;
    result.problems.push_back(LabProblem{file, 0, "", error});
    return result;
  }
  LabLoadResult result = ReadLabText(text, file);
  // Every translation is read, so that a choice may be answered in any of
  // the lab's languages; one with problems lends nothing (only the language
  // asked for reports them: `lab check` reports them all, ValidateLab).
  std::vector<Lab> languages = {result.lab};
  // A lab.toml that gave no steps (a TOML error) has nothing to translate.
  if (result.lab.steps.empty() && !result.ok()) return result;
  for (const std::string& other : LabTranslationLanguages()) {
    std::vector<LabProblem> problems;
    Lab translated = TranslateLab(result.lab, other, &problems);
    if (other == lang) {
      result.problems.insert(result.problems.end(), problems.begin(), problems.end());
      languages.front() = std::move(translated);  // the lab shown comes first
      if (problems.empty()) languages.push_back(result.lab);
    } else if (problems.empty()) {
      languages.push_back(std::move(translated));
    }
  }
  std::vector<Lab*> all;
  for (Lab& l : languages) all.push_back(&l);
  ShareLabOptions(all);
  result.lab = std::move(languages.front());
  return result;
}

Lab LoadLab(const std::string& path, std::string_view lang) {
  LabLoadResult result = ReadLab(path, lang);
  if (!result.ok()) {
    std::string text = result.ProblemsText();
    if (!text.empty() && text.back() == '\n') text.pop_back();
    throw Error(text);
  }
  return std::move(result.lab);
}

LabLoadResult ValidateLab(const std::string& path) {
  LabLoadResult result = ReadLab(path);
  std::error_code ec;
  if (!fs::is_regular_file(result.lab.path, ec)) return result;  // lab.toml itself is missing
  if (result.lab.steps.empty() && !result.ok()) return result;    // nothing to check against
  for (const std::string& lang : LabTranslationLanguages()) {
    TranslateLab(result.lab, lang, &result.problems);
  }
  return result;
}

std::vector<std::string> FindLabFolders(const std::string& labs_dir) {
  std::error_code ec;
  if (!fs::is_directory(labs_dir, ec)) {
    throw Error(labs_dir + ": not a folder of labs");
  }
  std::vector<std::string> folders;
  for (const fs::directory_entry& e : fs::directory_iterator(labs_dir, ec)) {
    if (e.is_directory(ec) && IsLabFolder(e.path().string())) folders.push_back(e.path().string());
  }
  if (ec) throw Error(labs_dir + ": " + ec.message());
  std::sort(folders.begin(), folders.end());
  return folders;
}

}  // namespace shardlab
