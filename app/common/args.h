// A small flag parser shared by shardlab-cli and the shardlab app. Each
// command describes its flags in a CommandSpec; ParseArgs turns the words
// after the command into values, and FormatHelp prints the same table for
// --help.
//
//   --flag value   --flag=value   -b value   -b8   --switch
//
// Anything it cannot place (an unknown flag, a missing value, a value given
// to a switch, a stray word) throws a UsageError naming the flag as the user
// spelled it, so main() prints one line and exits with code 2.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <span>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/units.h"

namespace shardlab {

struct FlagSpec {
  std::string name;         // long name without dashes: "ranks"
  char short_name = 0;      // 'b' for -b; 0 = none
  std::string value_name;   // "N", "SIZE"; empty = a switch without a value
  std::string help;         // one line; mention the default here
  /// Earlier spellings still accepted for one release ("stage" for
  /// --zero-stage; one letter: a short flag, "n" for -n). Using one prints
  /// "PROGRAM: --stage is now --zero-stage; the old spelling goes in the next
  /// release" on stderr; Spelling() then returns the old spelling, so
  /// messages name the flag as the user typed it. Not listed in --help.
  std::vector<std::string> old_names = {};
};

struct CommandSpec {
  std::string program = "shardlab-cli";  // named in messages: "see 'shardlab-cli run --help'"
  std::string name;                 // "run"; empty for a program without commands
  std::string summary;              // one line for `shardlab-cli --help`
  std::string usage;                // "run COLLECTIVE [flags]"
  std::string description;          // paragraphs before the flag table
  std::vector<FlagSpec> flags;      // --help is added by the parser
  std::size_t max_positionals = 0;  // words that are not flags
  std::string examples;             // lines after the flag table
};

/// What the words after a command said.
class ParsedArgs {
 public:
  bool help() const { return help_; }
  bool Has(std::string_view flag) const { return values_.count(std::string(flag)) > 0; }
  /// The flag's value (last one wins), or `fallback` when it was not given.
  std::string Get(std::string_view flag, std::string_view fallback = "") const;
  /// How the user wrote the flag ("-b" or "--minbytes"), for error messages.
  std::string Spelling(std::string_view flag) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  friend ParsedArgs ParseArgs(const CommandSpec& spec, std::span<const std::string> args,
                              std::ostream* notices);
  bool help_ = false;
  std::map<std::string, std::string> values_;     // switches map to ""
  std::map<std::string, std::string> spellings_;
  std::vector<std::string> positionals_;
};

/// Parses `args` (the words after the command name) against `spec`. Old
/// spellings (FlagSpec::old_names) are stored under the new name; their
/// notice goes to `notices` (stderr when null), once per spelling.
ParsedArgs ParseArgs(const CommandSpec& spec, std::span<const std::string> args,
                     std::ostream* notices);
ParsedArgs ParseArgs(const CommandSpec& spec, std::span<const std::string> args);

/// Usage, description, flag table and examples, for `COMMAND --help`.
std::string FormatHelp(const CommandSpec& spec);

/// An Error of kind kInvalidInput: main() prints it and exits with code 2.
Error UsageError(const std::string& message);

/// The engine names a bad field ("ranks: 16 ranks but ..."); a front end
/// names the flag ("--ranks: 16 ranks but ..."). `field_flags` maps each
/// message prefix to its flag; other errors come back unchanged.
Error FieldErrorAsFlagError(const Error& error, const ParsedArgs& args,
                            std::span<const std::pair<const char*, const char*>> field_flags);

/// Integer flag values; messages read "--ranks: must be at least 1 (got 0)".
std::int64_t ParseIntValue(std::string_view flag, std::string_view text, std::int64_t min,
                           std::int64_t max);

/// A seed: any unsigned 64-bit integer.
std::uint64_t ParseSeedValue(std::string_view flag, std::string_view text);

/// A size (ParseSize) that must be at least `min_bytes`.
Bytes ParseSizeValue(std::string_view flag, std::string_view text, Bytes min_bytes);

/// "allreduce, reducescatter or allgather" for messages.
std::string JoinChoices(const std::vector<std::string>& choices);

}  // namespace shardlab
