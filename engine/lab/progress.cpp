#include "engine/lab/progress.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/toml.h"

namespace shardlab {
namespace {

std::string StringArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + TomlQuote(items[i]);
  return out + "]";
}

const std::string& RequireString(const TomlValue& table, const char* key, const std::string& path,
                                 const std::string& prefix) {
  const TomlEntry* e = table.Find(key);
  if (e == nullptr) throw FileError(path, table.line, prefix + key, "missing");
  if (e->value.type != TomlType::kString) throw FileError(path, e->line, prefix + key, "must be a string");
  return e->value.string_value;
}

std::string OptionalString(const TomlValue& table, const char* key, const std::string& path,
                           const std::string& prefix) {
  return table.Find(key) == nullptr ? std::string() : RequireString(table, key, path, prefix);
}

}  // namespace

const LabProgressAnswer* LabProgress::Find(const std::string& question_id) const {
  for (const LabProgressAnswer& a : answers) {
    if (a.question_id == question_id) return &a;
  }
  return nullptr;
}

void LabProgress::SetAnswer(LabProgressAnswer answer) {
  for (LabProgressAnswer& a : answers) {
    if (a.question_id == answer.question_id) {
      a = std::move(answer);
      return;
    }
  }
  answers.push_back(std::move(answer));
}

std::string WriteLabProgress(const LabProgress& progress) {
  std::ostringstream out;
  out << "lab = " << TomlQuote(progress.lab_id) << "\n";
  out << "step = " << progress.step << "\n";
  out << "completed = " << StringArray(progress.completed) << "\n";
  for (const LabProgressAnswer& a : progress.answers) {
    out << "\n[[answer]]\n";
    out << "question = " << TomlQuote(a.question_id) << "\n";
    out << "value = " << TomlQuote(a.value) << "\n";
    out << "checked = " << (a.checked ? "true" : "false") << "\n";
    if (!a.verdict.empty()) out << "verdict = " << TomlQuote(a.verdict) << "\n";
    if (!a.expected.empty()) out << "expected = " << TomlQuote(a.expected) << "\n";
    if (!a.feedback.empty()) out << "feedback = " << TomlQuote(a.feedback) << "\n";
  }
  return out.str();
}

LabProgress ParseLabProgress(std::string_view text, const std::string& path) {
  const TomlValue root = ParseToml(text, path);
  LabProgress p;
  for (const TomlEntry& e : root.entries) {
    if (e.key != "lab" && e.key != "step" && e.key != "completed" && e.key != "answer") {
      throw FileError(path, e.line, e.key, "unknown field (lab, step, completed, [[answer]])");
    }
  }
  p.lab_id = RequireString(root, "lab", path, "");
  const TomlEntry* step = root.Find("step");
  if (step == nullptr) throw FileError(path, 0, "step", "missing");
  if (step->value.type != TomlType::kInteger || step->value.int_value < 0 ||
      step->value.int_value > 100000) {
    throw FileError(path, step->line, "step", "must be a whole number >= 0");
  }
  p.step = static_cast<int>(step->value.int_value);
  if (const TomlEntry* done = root.Find("completed")) {
    if (done->value.type != TomlType::kArray) {
      throw FileError(path, done->line, "completed", "must be an array of strings");
    }
    for (const TomlValue& item : done->value.items) {
      if (item.type != TomlType::kString) {
        throw FileError(path, done->line, "completed", "must be an array of strings");
      }
      p.completed.push_back(item.string_value);
    }
  }
  if (const TomlEntry* answers = root.Find("answer")) {
    if (answers->value.type != TomlType::kArray || !answers->value.array_of_tables) {
      throw FileError(path, answers->line, "answer", "must be [[answer]] tables");
    }
    for (std::size_t i = 0; i < answers->value.items.size(); ++i) {
      const TomlValue& t = answers->value.items[i];
      const std::string prefix = "answer[" + std::to_string(i + 1) + "].";
      for (const TomlEntry& e : t.entries) {
        if (e.key != "question" && e.key != "value" && e.key != "checked" && e.key != "verdict" &&
            e.key != "expected" && e.key != "feedback") {
          throw FileError(path, e.line, prefix + e.key, "unknown field");
        }
      }
      LabProgressAnswer a;
      a.question_id = RequireString(t, "question", path, prefix);
      a.value = RequireString(t, "value", path, prefix);
      if (const TomlEntry* c = t.Find("checked")) {
        if (c->value.type != TomlType::kBool) throw FileError(path, c->line, prefix + "checked", "must be true or false");
        a.checked = c->value.bool_value;
      }
      a.verdict = OptionalString(t, "verdict", path, prefix);
      a.expected = OptionalString(t, "expected", path, prefix);
      a.feedback = OptionalString(t, "feedback", path, prefix);
      p.answers.push_back(std::move(a));
    }
  }
  return p;
}

ProgressStore::ProgressStore(std::string dir, FileIo& io) : dir_(std::move(dir)), io_(io) {
  if (dir_.empty()) dir_ = ".";
  io_.MakeDirs(dir_);
  swept_ = SweepTemporaryFiles(io_, dir_);
}

std::string ProgressStore::PathFor(const std::string& lab_id) const {
  const bool plain = !lab_id.empty() && lab_id.size() <= 128 && lab_id[0] != '.' &&
                     std::all_of(lab_id.begin(), lab_id.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                              c == '_' || c == '.';
                     });
  if (!plain) {
    throw Error("lab id '" + lab_id + "' is not a plain name (letters, digits, '-', '_', '.')");
  }
  return dir_ + "/" + lab_id + ".progress.toml";
}

ProgressLoad ProgressStore::Load(const std::string& lab_id) {
  ProgressLoad load;
  load.progress.lab_id = lab_id;
  const std::string path = PathFor(lab_id);
  std::string bytes;
  std::string problem;
  try {
    if (!io_.ReadFile(path, kMaxProgressBytes, &bytes)) return load;  // never saved
    LabProgress saved = ParseLabProgress(bytes, path);
    if (saved.lab_id != lab_id) {
      problem = path + ": lab: the file is for lab '" + saved.lab_id + "'";
    } else {
      load.progress = std::move(saved);
      load.fresh = false;
      return load;
    }
  } catch (const Error& e) {
    problem = e.what();
  }
  // Unreadable: keep it aside under a name not yet taken, never delete it.
  const std::vector<std::string> names = io_.ListDir(dir_);
  const std::string base = lab_id + ".progress.toml.corrupt-";
  int n = 1;
  while (std::find(names.begin(), names.end(), base + std::to_string(n)) != names.end()) ++n;
  const std::string aside = path + ".corrupt-" + std::to_string(n);
  io_.Rename(path, aside);
  io_.SyncDir(dir_);
  load.warning = "progress for lab '" + lab_id + "' could not be read (" + problem +
                 "); it was kept as " + aside + " and the lab starts fresh";
  return load;
}

void ProgressStore::Save(const LabProgress& progress) {
  AtomicWriteFile(io_, PathFor(progress.lab_id), WriteLabProgress(progress));
}

}  // namespace shardlab
