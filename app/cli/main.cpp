// shardlab-cli: the headless front end of the engine.
//
//   shardlab-cli run allreduce --ranks 8 --size 64M --topology dgx-a100
//   shardlab-cli sweep allreduce -b 8 -e 1G -f 2
//   shardlab-cli topo --list
//   shardlab-cli memory --params 175B --ranks 64 --stage 3
//   shardlab-cli plan --model gpt3-175b --gpus 512 --topology 64x-dgx-a100-ib
//
// Exit codes: 0 success, 1 runtime failure (wrong result, backend error,
// out of memory), 2 bad input. Every failure prints exactly one line,
// "shardlab-cli: error: ...", on stderr; nothing escapes as a crash.
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "engine/core/error.h"

#ifndef SHARDLAB_VERSION
#define SHARDLAB_VERSION "0.1.0"
#endif

namespace shardlab::cli {
namespace {

struct CommandEntry {
  const CommandSpec& (*spec)();
  int (*main)(std::span<const std::string> args);
};

const std::vector<CommandEntry>& Commands() {
  static const std::vector<CommandEntry> commands = {
      {RunSpec, RunMain},   {SweepSpec, SweepMain},   {TopoSpec, TopoMain},
      {DemoSpec, DemoMain}, {MemorySpec, MemoryMain}, {LabSpec, LabMain},
      {WorkerSpec, WorkerMain}, {PlanSpec, PlanMain}};
  return commands;
}

const CommandEntry* FindCommand(const std::string& name) {
  for (const CommandEntry& c : Commands()) {
    if (c.spec().name == name) return &c;
  }
  return nullptr;
}

std::string CommandNames() {
  std::vector<std::string> names;
  for (const CommandEntry& c : Commands()) names.push_back(c.spec().name);
  return JoinChoices(names);
}

void PrintTopHelp(std::ostream& out) {
  out << "Usage: " << kProgram << " COMMAND [flags]\n"
      << "\n"
      << "ShardLab runs multi-GPU collectives as plans of sends, receives and reductions,\n"
      << "on a simulator of real machines (DGX-1, DGX A100, ...), step by step.\n"
      << "\n"
      << "Commands:\n";
  for (const CommandEntry& c : Commands()) {
    const CommandSpec& spec = c.spec();
    out << "  " << spec.name << std::string(8 - spec.name.size(), ' ') << spec.summary << "\n";
  }
  out << "\n"
      << "Flags:\n"
      << "  -h, --help   print this help ('" << kProgram << " COMMAND --help' for a command)\n"
      << "  --version    print the version\n"
      << "\n"
      << "Exit codes: 0 success, 1 runtime failure (e.g. a wrong result), 2 bad input.\n";
}

int Dispatch(const std::vector<std::string>& words) {
  if (words.empty()) {
    throw UsageError("missing command (" + CommandNames() + "; see '" + kProgram + " --help')");
  }
  const std::string& first = words.front();
  if (first == "--help" || first == "-h") {
    PrintTopHelp(std::cout);
    return 0;
  }
  if (first == "help") {
    if (words.size() == 1) {
      PrintTopHelp(std::cout);
      return 0;
    }
    const CommandEntry* command = FindCommand(words[1]);
    if (command == nullptr) {
      throw UsageError("help: unknown command '" + words[1] + "' (" + CommandNames() + ")");
    }
    std::cout << FormatHelp(command->spec());
    return 0;
  }
  if (first == "--version") {
    std::cout << kProgram << " " << SHARDLAB_VERSION << "\n";
    return 0;
  }
  if (first.rfind("-", 0) == 0) {
    throw UsageError("unknown flag " + first + " (flags go after the command; see '" + kProgram +
                     " --help')");
  }
  const CommandEntry* command = FindCommand(first);
  if (command == nullptr) {
    throw UsageError("unknown command '" + first + "' (" + CommandNames() + "; see '" +
                     kProgram + " --help')");
  }
  return command->main(std::span<const std::string>(words).subspan(1));
}

/// Messages are printed on one line whatever they contain.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

int Fail(const std::string& message, int code) {
  std::cout.flush();
  std::cerr << kProgram << ": error: " << OneLine(message) << "\n";
  return code;
}

}  // namespace
}  // namespace shardlab::cli

int main(int argc, char** argv) {
  using namespace shardlab::cli;
  try {
    const std::vector<std::string> words(argv + 1, argv + argc);
    return Dispatch(words);
  } catch (const shardlab::Error& e) {
    switch (e.kind()) {
      case shardlab::ErrorKind::kInvalidInput: return Fail(e.what(), 2);
      case shardlab::ErrorKind::kCancelled: return Fail(e.what(), 130);
      case shardlab::ErrorKind::kRuntime: return Fail(e.what(), 1);
    }
    return Fail(e.what(), 1);
  } catch (const std::bad_alloc&) {
    return Fail("out of host memory (try --timing-only, a smaller --size or fewer --ranks)", 1);
  } catch (const std::exception& e) {
    return Fail(e.what(), 1);
  } catch (...) {
    return Fail("unknown failure", 1);
  }
}
