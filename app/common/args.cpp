#include "app/common/args.h"

#include <algorithm>
#include <charconv>
#include <iostream>
#include <set>
#include <limits>
#include <sstream>

namespace shardlab {
namespace {

/// Help text is wrapped to fit a terminal of this many columns.
constexpr std::size_t kHelpColumns = 96;

bool IsOldName(const FlagSpec& f, std::string_view name) {
  return std::find(f.old_names.begin(), f.old_names.end(), name) != f.old_names.end();
}

/// The flag named `name`; an old spelling (longer than one letter) when no
/// flag is named so now, with *old set.
const FlagSpec* FindLong(const CommandSpec& spec, std::string_view name, bool* old) {
  *old = false;
  for (const FlagSpec& f : spec.flags) {
    if (f.name == name) return &f;
  }
  if (name.size() < 2) return nullptr;
  for (const FlagSpec& f : spec.flags) {
    if (IsOldName(f, name)) {
      *old = true;
      return &f;
    }
  }
  return nullptr;
}

const FlagSpec* FindShort(const CommandSpec& spec, char name, bool* old) {
  *old = false;
  for (const FlagSpec& f : spec.flags) {
    if (f.short_name != 0 && f.short_name == name) return &f;
  }
  for (const FlagSpec& f : spec.flags) {
    if (IsOldName(f, std::string(1, name))) {
      *old = true;
      return &f;
    }
  }
  return nullptr;
}

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// "shardlab-cli run --help", or "shardlab --help" for a program without commands.
std::string HelpCommand(const CommandSpec& spec) {
  return spec.program + (spec.name.empty() ? "" : " " + spec.name) + " --help";
}

/// " for 'run'", or nothing for a program without commands.
std::string ForCommand(const CommandSpec& spec) {
  return spec.name.empty() ? "" : " for '" + spec.name + "'";
}

Error UnknownFlag(const CommandSpec& spec, std::string_view word) {
  std::string message = "unknown flag " + std::string(word) + ForCommand(spec);
  // A typo of a real flag ("--rank") gets a suggestion; anything else the help.
  std::string_view bare = word;
  while (!bare.empty() && bare.front() == '-') bare.remove_prefix(1);
  bare = bare.substr(0, bare.find('='));
  const FlagSpec* best = nullptr;
  std::size_t best_distance = 3;
  for (const FlagSpec& f : spec.flags) {
    const std::size_t d = EditDistance(bare, f.name);
    if (d < best_distance) {
      best = &f;
      best_distance = d;
    }
  }
  if (best != nullptr) return UsageError(message + " (did you mean --" + best->name + "?)");
  return UsageError(message + " (see '" + HelpCommand(spec) + "')");
}

bool IsHelpWord(std::string_view word) { return word == "--help" || word == "-h"; }

}  // namespace

Error UsageError(const std::string& message) { return Error(message, ErrorKind::kInvalidInput); }

Error FieldErrorAsFlagError(const Error& error, const ParsedArgs& args,
                            std::span<const std::pair<const char*, const char*>> field_flags) {
  const std::string message = error.what();
  for (const auto& [prefix, flag] : field_flags) {
    const std::string field = prefix;
    if (message.rfind(field, 0) == 0) {
      return UsageError(args.Spelling(flag) + ": " + message.substr(field.size()));
    }
  }
  return error;
}

std::string ParsedArgs::Get(std::string_view flag, std::string_view fallback) const {
  const auto it = values_.find(std::string(flag));
  return it == values_.end() ? std::string(fallback) : it->second;
}

std::string ParsedArgs::Spelling(std::string_view flag) const {
  const auto it = spellings_.find(std::string(flag));
  return it == spellings_.end() ? "--" + std::string(flag) : it->second;
}

ParsedArgs ParseArgs(const CommandSpec& spec, std::span<const std::string> args) {
  return ParseArgs(spec, args, nullptr);
}

ParsedArgs ParseArgs(const CommandSpec& spec, std::span<const std::string> args,
                     std::ostream* notices) {
  ParsedArgs parsed;
  std::set<std::string> noticed;
  const auto notice = [&](const std::string& spelling, const FlagSpec& flag) {
    if (!noticed.insert(spelling).second) return;
    (notices != nullptr ? *notices : std::cerr)
        << spec.program << ": " << spelling << " is now --" << flag.name
        << "; the old spelling goes in the next release\n";
  };
  // --help wins over everything else on the line, even over bad flags.
  for (const std::string& word : args) {
    if (word == "--") break;
    if (IsHelpWord(word)) {
      parsed.help_ = true;
      return parsed;
    }
  }

  const auto store = [&](const FlagSpec& flag, std::string spelling, std::string value) {
    parsed.values_[flag.name] = std::move(value);
    parsed.spellings_[flag.name] = std::move(spelling);
  };
  const auto add_positional = [&](const std::string& word) {
    if (parsed.positionals_.size() >= spec.max_positionals) {
      throw UsageError("unexpected argument '" + word + "'" + ForCommand(spec) + " (see '" +
                       HelpCommand(spec) + "')");
    }
    parsed.positionals_.push_back(word);
  };
  // The next word is a value unless it is missing or is itself a long flag;
  // "-1" stays a value so that "--ranks -1" gets a range error, not a
  // confusing "unknown flag -1".
  const auto take_value = [&](std::size_t& i, const std::string& spelling,
                              const FlagSpec& flag) -> std::string {
    if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
      throw UsageError(spelling + ": missing value (" + flag.value_name + ")");
    }
    return args[++i];
  };

  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      for (++i; i < args.size(); ++i) add_positional(args[i]);
      break;
    }
    if (word.rfind("--", 0) == 0) {
      const std::size_t eq = word.find('=');
      const std::string name = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const std::string spelling = "--" + name;
      bool old = false;
      const FlagSpec* flag = FindLong(spec, name, &old);
      if (flag == nullptr) throw UnknownFlag(spec, word);
      if (old) notice(spelling, *flag);
      if (flag->value_name.empty()) {
        if (eq != std::string::npos) throw UsageError(spelling + ": takes no value");
        store(*flag, spelling, "");
      } else if (eq != std::string::npos) {
        store(*flag, spelling, word.substr(eq + 1));
      } else {
        store(*flag, spelling, take_value(i, spelling, *flag));
      }
      continue;
    }
    if (word.size() >= 2 && word[0] == '-') {
      const std::string spelling = word.substr(0, 2);
      bool old = false;
      const FlagSpec* flag = FindShort(spec, word[1], &old);
      if (flag == nullptr) throw UnknownFlag(spec, word);
      if (old) notice(spelling, *flag);
      if (flag->value_name.empty()) {
        if (word.size() > 2) throw UnknownFlag(spec, word);
        store(*flag, spelling, "");
      } else if (word.size() > 2) {
        // "-b8" and "-b=8", as getopt users expect.
        std::string value = word.substr(2);
        if (value.front() == '=') value.erase(0, 1);
        store(*flag, spelling, value);
      } else {
        store(*flag, spelling, take_value(i, spelling, *flag));
      }
      continue;
    }
    add_positional(word);
  }
  return parsed;
}

std::string FormatHelp(const CommandSpec& spec) {
  std::ostringstream out;
  out << "Usage: " << spec.program << " " << spec.usage << "\n";
  if (!spec.description.empty()) out << "\n" << spec.description << "\n";

  std::vector<std::pair<std::string, std::string>> rows;
  for (const FlagSpec& f : spec.flags) {
    std::string left = f.short_name != 0 ? std::string("-") + f.short_name + ", " : "    ";
    left += "--" + f.name;
    if (!f.value_name.empty()) left += " " + f.value_name;
    rows.emplace_back(std::move(left), f.help);
  }
  rows.emplace_back("-h, --help", "print this help");
  std::size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  out << "\nFlags:\n";
  const std::size_t indent = 2 + width + 2;
  for (const auto& [left, help] : rows) {
    out << "  " << left << std::string(width - left.size() + 2, ' ');
    // Wrap at word boundaries so no line passes kHelpColumns.
    std::size_t column = indent;
    std::istringstream words(help);
    bool first = true;
    for (std::string word; words >> word; first = false) {
      if (!first && column + 1 + word.size() > kHelpColumns) {
        out << "\n" << std::string(indent, ' ');
        column = indent;
      } else if (!first) {
        out << ' ';
        ++column;
      }
      out << word;
      column += word.size();
    }
    out << "\n";
  }
  if (!spec.examples.empty()) out << "\nExamples:\n" << spec.examples;
  return out.str();
}

std::int64_t ParseIntValue(std::string_view flag, std::string_view text, std::int64_t min,
                           std::int64_t max) {
  std::int64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  const std::string got = " (got '" + std::string(text) + "')";
  if (ec == std::errc::result_out_of_range) {
    throw UsageError(std::string(flag) + ": out of range" + got);
  }
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(std::string(flag) + ": must be an integer" + got);
  }
  if (value < min) {
    throw UsageError(std::string(flag) + ": must be at least " + std::to_string(min) + " (got " +
                     std::to_string(value) + ")");
  }
  if (value > max) {
    throw UsageError(std::string(flag) + ": must be at most " + std::to_string(max) + " (got " +
                     std::to_string(value) + ")");
  }
  return value;
}

std::uint64_t ParseSeedValue(std::string_view flag, std::string_view text) {
  std::uint64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(std::string(flag) + ": must be an integer from 0 to " +
                     std::to_string(std::numeric_limits<std::uint64_t>::max()) + " (got '" +
                     std::string(text) + "')");
  }
  return value;
}

Bytes ParseSizeValue(std::string_view flag, std::string_view text, Bytes min_bytes) {
  const Bytes bytes = ParseSize(text, flag);
  if (bytes < min_bytes) {
    throw UsageError(std::string(flag) + ": must be at least " + FormatBytes(min_bytes) +
                     " (got " + std::string(text) + ")");
  }
  return bytes;
}

std::string JoinChoices(const std::vector<std::string>& choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += (i + 1 == choices.size()) ? " or " : ", ";
    out += choices[i];
  }
  return out;
}

}  // namespace shardlab
