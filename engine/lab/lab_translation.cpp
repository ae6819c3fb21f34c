// Lab translations: lab.<lang>.toml read, checked field by field against
// the English lab, and its text put in place of the English.
#include "engine/lab/lab_translation.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/core/toml.h"

namespace shardlab {
namespace {

namespace fs = std::filesystem;

std::string Indexed(const std::string& name, std::size_t index) {
  return name + "[" + std::to_string(index + 1) + "]";
}

std::string Join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

/// Fields a translation never holds: numbers, formulas, units, checks.
bool IsSourceOnlyField(const std::string& key) {
  static const std::set<std::string> kFields = {
      "minutes", "prerequisites", "scenario",      "params",     "locked", "variant",
      "kind",    "points",        "expected",      "measured",   "units",  "tolerance",
      "tolerance_abs", "answer",  "correct_if"};
  return kFields.count(key) > 0;
}

class TranslationReader {
 public:
  TranslationReader(std::string path, std::string dir, std::vector<LabProblem>* problems)
      : path_(std::move(path)), dir_(std::move(dir)), problems_(problems) {}

  void Problem(int line, const std::string& field, const std::string& message) {
    problems_->push_back(LabProblem{path_, line, field, message});
  }

  void CheckKnown(const TomlValue& table, const std::string& prefix,
                  std::initializer_list<const char*> allowed) {
    for (const TomlEntry& e : table.entries) {
      bool known = false;
      for (const char* a : allowed) known = known || e.key == a;
      if (known) continue;
      if (IsSourceOnlyField(e.key)) {
        Problem(e.line, Join(prefix, e.key),
                "only lab.toml sets this (a translation holds text only: numbers, formulas, "
                "units and checks are the English lab's)");
      } else {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        Problem(e.line, Join(prefix, e.key), "unknown field (known: " + list + ")");
      }
    }
  }

  /// A text field that the translation has exactly when the English has it.
  /// `out` is set only when the field is there and valid.
  void Text(const TomlValue& table, const std::string& prefix, const char* key,
            bool english_has, std::string* out) {
    const TomlEntry* e = table.Find(key);
    const std::string field = Join(prefix, key);
    if (e == nullptr) {
      if (english_has) Problem(table.line, field, "missing: lab.toml has it here, so the translation needs it");
      return;
    }
    if (!english_has) {
      Problem(e->line, field, "lab.toml has no such text here (a translation holds only the text lab.toml has)");
      return;
    }
    if (e->value.type != TomlType::kString) {
      Problem(e->line, field, std::string("must be a string, not ") + TomlTypeName(e->value.type));
      return;
    }
    if (e->value.string_value.empty()) {
      Problem(e->line, field, "must not be empty");
      return;
    }
    *out = e->value.string_value;
  }

  /// A list of texts with the English list's count (options, goals).
  void Texts(const TomlValue& table, const std::string& prefix, const char* key,
             const std::vector<std::string>& english, std::vector<std::string>* out) {
    const TomlEntry* e = table.Find(key);
    const std::string field = Join(prefix, key);
    if (e == nullptr) {
      if (!english.empty()) {
        Problem(table.line, field,
                "missing: lab.toml has " + std::to_string(english.size()) + " here, so the translation needs them");
      }
      return;
    }
    if (english.empty()) {
      Problem(e->line, field, "lab.toml has no such list here (a translation holds only the text lab.toml has)");
      return;
    }
    if (e->value.type != TomlType::kArray) {
      Problem(e->line, field, std::string("must be an array of strings, not ") + TomlTypeName(e->value.type));
      return;
    }
    const std::vector<TomlValue>& items = e->value.items;
    if (items.size() != english.size()) {
      Problem(e->line, field,
              "has " + std::to_string(items.size()) + ", lab.toml has " + std::to_string(english.size()) +
                  " (the same count, in the same order)");
      return;
    }
    std::vector<std::string> texts;
    std::set<std::string> seen;
    bool ok = true;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const int line = items[i].line > 0 ? items[i].line : e->line;
      if (items[i].type != TomlType::kString) {
        Problem(line, Indexed(field, i), std::string("must be a string, not ") + TomlTypeName(items[i].type));
        ok = false;
      } else if (items[i].string_value.empty()) {
        Problem(line, Indexed(field, i), "must not be empty");
        ok = false;
      } else if (!seen.insert(items[i].string_value).second) {
        Problem(line, Indexed(field, i), "'" + items[i].string_value + "' is listed twice");
        ok = false;
      } else {
        texts.push_back(items[i].string_value);
      }
    }
    if (ok) *out = std::move(texts);
  }

  /// The table's `id` as a string, or "" (with a problem).
  std::string Id(const TomlValue& table, const std::string& prefix) {
    const TomlEntry* e = table.Find("id");
    if (e == nullptr) {
      Problem(table.line, prefix + ".id", "missing (the id of the thing in lab.toml this translates)");
      return {};
    }
    if (e->value.type != TomlType::kString || e->value.string_value.empty()) {
      Problem(e->line, prefix + ".id", "must be a non-empty string");
      return {};
    }
    return e->value.string_value;
  }

  static int IdLine(const TomlValue& table) {
    const TomlEntry* id = table.Find("id");
    return id != nullptr ? id->line : table.line;
  }

  void ReadTop(const TomlValue& root, const Lab& english, Lab* lab) {
    CheckKnown(root, "", {"format", "title", "summary", "goals", "step"});
    const TomlEntry* format = root.Find("format");
    if (format == nullptr) {
      Problem(0, "format", "missing (a whole number: " + std::to_string(kLabFormatVersion) + ")");
    } else if (format->value.type != TomlType::kInteger || format->value.int_value != kLabFormatVersion) {
      Problem(format->line, "format", "this ShardLab reads format " + std::to_string(kLabFormatVersion));
    }
    Text(root, "", "title", !english.title.empty(), &lab->title);
    Text(root, "", "summary", !english.summary.empty(), &lab->summary);
    Texts(root, "", "goals", english.goals, &lab->goals);

    const TomlEntry* steps = root.Find("step");
    if (steps == nullptr) {
      Problem(0, "step", "missing: the translation needs every step of lab.toml ([[step]] with its id)");
      return;
    }
    if (steps->value.type != TomlType::kArray || !steps->value.array_of_tables) {
      Problem(steps->line, "step", "must be [[step]] tables (one per step)");
      return;
    }
    std::set<std::string> done;
    for (std::size_t i = 0; i < steps->value.items.size(); ++i) {
      const TomlValue& table = steps->value.items[i];
      const std::string prefix = Indexed("step", i);
      const std::string id = Id(table, prefix);
      if (id.empty()) continue;
      const auto it = std::find_if(english.steps.begin(), english.steps.end(),
                                   [&](const LabStep& s) { return s.id == id; });
      if (it == english.steps.end()) {
        std::string ids;
        for (const LabStep& s : english.steps) ids += (ids.empty() ? "" : ", ") + s.id;
        Problem(IdLine(table), prefix + ".id", "'" + id + "' is not a step of lab.toml (its steps: " + ids + ")");
        continue;
      }
      if (!done.insert(id).second) {
        Problem(IdLine(table), prefix + ".id", "step '" + id + "' is translated twice");
        continue;
      }
      const std::size_t index = static_cast<std::size_t>(it - english.steps.begin());
      ReadStep(table, prefix, *it, &lab->steps[index]);
    }
    for (const LabStep& s : english.steps) {
      if (done.count(s.id) == 0) {
        Problem(steps->line, "step", "lab.toml's step '" + s.id + "' has no translation ([[step]] id = \"" + s.id + "\")");
      }
    }
  }

  void ReadStep(const TomlValue& t, const std::string& prefix, const LabStep& english, LabStep* step) {
    CheckKnown(t, prefix, {"id", "title", "text", "text_file", "question"});
    Text(t, prefix, "title", !english.title.empty(), &step->title);
    const bool english_file = !english.text_file.empty();
    if (!english_file) {
      // Inline text: required when the English has any.
      if (english.text.empty() && t.Find("text") == nullptr) {
        // nothing to translate
      } else {
        Text(t, prefix, "text", true, &step->text);
      }
      if (const TomlEntry* f = t.Find("text_file")) {
        Problem(f->line, prefix + ".text_file", "lab.toml gives this step's text inline: give text, not text_file");
      }
    } else {
      if (const TomlEntry* f = t.Find("text")) {
        Problem(f->line, prefix + ".text", "lab.toml reads this step's text from a file: give text_file, not text");
      }
      std::string name;
      Text(t, prefix, "text_file", true, &name);
      if (!name.empty()) {
        const int line = t.Find("text_file")->line;
        std::string text, error;
        if (name == english.text_file) {
          Problem(line, prefix + ".text_file", "'" + name + "' is lab.toml's own text file: name the translated one");
        } else if (!ReadLabFolderFile(dir_, name, kMaxLabTextBytes, &text, &error)) {
          Problem(line, prefix + ".text_file", error);
        } else if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
          Problem(line, prefix + ".text_file", "'" + name + "' is empty");
        } else {
          step->text = std::move(text);
          step->text_file = name;
        }
      }
    }

    const TomlEntry* questions = t.Find("question");
    std::set<std::string> done;
    if (questions != nullptr) {
      if (questions->value.type != TomlType::kArray || !questions->value.array_of_tables) {
        Problem(questions->line, prefix + ".question", "must be [[step.question]] tables");
        return;
      }
      for (std::size_t i = 0; i < questions->value.items.size(); ++i) {
        const TomlValue& table = questions->value.items[i];
        const std::string qprefix = prefix + "." + Indexed("question", i);
        const std::string id = Id(table, qprefix);
        if (id.empty()) continue;
        const auto it = std::find_if(english.questions.begin(), english.questions.end(),
                                     [&](const LabQuestion& q) { return q.id == id; });
        if (it == english.questions.end()) {
          std::string ids;
          for (const LabQuestion& q : english.questions) ids += (ids.empty() ? "" : ", ") + q.id;
          Problem(IdLine(table), qprefix + ".id",
                  "'" + id + "' is not a question of step '" + english.id + "' in lab.toml (its questions: " +
                      (ids.empty() ? "none" : ids) + ")");
          continue;
        }
        if (!done.insert(id).second) {
          Problem(IdLine(table), qprefix + ".id", "question '" + id + "' is translated twice");
          continue;
        }
        const std::size_t index = static_cast<std::size_t>(it - english.questions.begin());
        ReadQuestion(table, qprefix, *it, &step->questions[index]);
      }
    }
    for (const LabQuestion& q : english.questions) {
      if (done.count(q.id) == 0) {
        Problem(questions != nullptr ? questions->line : t.line, prefix + ".question",
                "lab.toml's question '" + q.id + "' of step '" + english.id + "' has no translation");
      }
    }
  }

  void ReadQuestion(const TomlValue& t, const std::string& prefix, const LabQuestion& english,
                    LabQuestion* q) {
    CheckKnown(t, prefix, {"id", "prompt", "feedback", "feedback_low", "feedback_high", "explain", "options"});
    Text(t, prefix, "prompt", !english.prompt.empty(), &q->prompt);
    Text(t, prefix, "feedback", !english.feedback.empty(), &q->feedback);
    Text(t, prefix, "feedback_low", !english.feedback_low.empty(), &q->feedback_low);
    Text(t, prefix, "feedback_high", !english.feedback_high.empty(), &q->feedback_high);
    Text(t, prefix, "explain", !english.explain.empty(), &q->explain);
    std::vector<std::string> options;
    Texts(t, prefix, "options", english.options, &options);
    if (!options.empty()) {
      // The correct option is the one at the English answer's place.
      const auto at = std::find(english.options.begin(), english.options.end(), english.answer);
      if (!english.answer.empty() && at != english.options.end()) {
        q->answer = options[static_cast<std::size_t>(at - english.options.begin())];
      }
      q->options = std::move(options);
    }
  }

 private:
  std::string path_;
  std::string dir_;
  std::vector<LabProblem>* problems_;
};

}  // namespace

const std::vector<std::string>& LabTranslationLanguages() {
  static const std::vector<std::string> kLanguages = {"zh-CN"};
  return kLanguages;
}

bool IsLabLanguage(std::string_view lang) {
  if (lang == kLabSourceLanguage) return true;
  const auto& all = LabTranslationLanguages();
  return std::find(all.begin(), all.end(), lang) != all.end();
}

std::string LabLanguagesText() {
  std::string out = kLabSourceLanguage;
  for (const std::string& lang : LabTranslationLanguages()) out += ", " + lang;
  return out;
}

std::string LabTranslationFileName(std::string_view lang) {
  return "lab." + std::string(lang) + ".toml";
}

std::string LabLanguageFromLocale(std::string_view locale) {
  if (locale.size() >= 2 && (locale[0] == 'z' || locale[0] == 'Z') && (locale[1] == 'h' || locale[1] == 'H') &&
      (locale.size() == 2 || locale[2] == '_' || locale[2] == '-' || locale[2] == '.' || locale[2] == '@')) {
    return "zh-CN";
  }
  return kLabSourceLanguage;
}

std::string LabLanguageFromEnvironment() {
  for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return LabLanguageFromLocale(value);
  }
  return kLabSourceLanguage;
}

Lab TranslateLabText(const Lab& english, std::string_view lang, std::string_view text,
                     const std::string& path, std::vector<LabProblem>* problems) {
  Lab lab = english;
  lab.lang = std::string(lang);
  TomlValue root;
  try {
    root = ParseToml(text, path);
  } catch (const Error& e) {
    // "path:12: message" -> a problem at line 12.
    std::string rest = e.what();
    if (rest.rfind(path + ":", 0) == 0) rest = rest.substr(path.size() + 1);
    int line = 0;
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    if (digits > 0 && rest.compare(digits, 2, ": ") == 0) {
      line = std::stoi(rest.substr(0, digits));
      rest = rest.substr(digits + 2);
    } else if (rest.rfind(" ", 0) == 0) {
      rest = rest.substr(1);
    }
    problems->push_back(LabProblem{path, line, "", rest});
    return lab;
  }
  std::vector<LabProblem> found;
  TranslationReader reader(path, english.dir, &found);
  reader.ReadTop(root, english, &lab);
  std::stable_sort(found.begin(), found.end(),
                   [](const LabProblem& a, const LabProblem& b) { return a.line < b.line; });
  problems->insert(problems->end(), found.begin(), found.end());
  return lab;
}

void ShareLabOptions(const std::vector<Lab*>& languages) {
  for (Lab* lab : languages) {
    Lab& to = *lab;
    for (const Lab* from : languages) {
      if (from == lab || from->steps.size() != to.steps.size()) continue;
      for (std::size_t s = 0; s < to.steps.size(); ++s) {
        std::vector<LabQuestion>& questions = to.steps[s].questions;
        if (from->steps[s].questions.size() != questions.size()) continue;
        for (std::size_t q = 0; q < questions.size(); ++q) {
          const std::vector<std::string>& options = from->steps[s].questions[q].options;
          if (!options.empty() && options.size() == questions[q].options.size() &&
              options != questions[q].options) {
            questions[q].other_options.push_back(options);
          }
        }
      }
    }
  }
}

Lab TranslateLab(const Lab& english, std::string_view lang, std::vector<LabProblem>* problems) {
  const std::string name = LabTranslationFileName(lang);
  const std::string path = (fs::path(english.dir.empty() ? "." : english.dir) / name).string();
  std::string text, error;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    problems->push_back(LabProblem{path, 0, "",
                                   "no " + std::string(lang) + " translation: every lab has " + name +
                                       " beside lab.toml (labs/README.md)"});
    Lab lab = english;
    lab.lang = std::string(lang);
    return lab;
  }
  if (!ReadLabFolderFile(english.dir, name, kMaxTomlBytes, &text, &error)) {
    problems->push_back(LabProblem{path, 0, "", error});
    Lab lab = english;
    lab.lang = std::string(lang);
    return lab;
  }
  return TranslateLabText(english, lang, text, path, problems);
}

}  // namespace shardlab
