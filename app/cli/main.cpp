// shardlab-cli: the headless front end of the engine.
//
//   shardlab-cli run allreduce --ranks 8 --size 64M --topology dgx-a100
//   shardlab-cli sweep allreduce -b 8 -e 1G -f 2
//   shardlab-cli topo --list
//   shardlab-cli memory --params 175B --ranks 64 --stage 3
//   shardlab-cli plan --model gpt3-175b --gpus 512 --topology 64x-dgx-a100-ib
//   shardlab-cli inspect nccl-topo.xml run.log.gz
//
// Exit codes: 0 success, 1 runtime failure (wrong result, backend error,
// out of memory), 2 bad input. Every failure prints exactly one line,
// "shardlab-cli: error: ...", on stderr; nothing escapes as a crash.
#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/process_flags.h"
#include "engine/core/error.h"
#ifdef SHARDLAB_HAVE_CUDA
#include "engine/backends/cuda/cuda_backend.h"
#endif
#ifdef SHARDLAB_HAVE_MPI_GPU
#include "engine/backends/mpi_gpu/gpu_rank_device.h"
#endif

namespace shardlab::cli {
namespace {

/// A command: its spec, and either its body on the parsed flags or the
/// whole of it on the words.
struct CommandEntry {
  CommandSpec (*spec)();
  int (*parsed)(const ParsedArgs& args) = nullptr;
  int (*main)(std::span<const std::string> words) = nullptr;

  int Run(std::span<const std::string> words) const {
    if (main != nullptr) return main(words);
    ParsedArgs args;
    if (HelpPrinted(spec(), words, args)) return 0;
    return parsed(args);
  }
};

const std::vector<CommandEntry>& Commands() {
  static const std::vector<CommandEntry> commands = {
      {RunSpec, nullptr, RunMain},   {SweepSpec, nullptr, SweepMain}, {TopoSpec, TopoMain},
      {DemoSpec, DemoMain},          {MemorySpec, MemoryMain},        {PlanSpec, PlanMain},
      {LabSpec, LabMain},            {WorkerSpec, WorkerMain},        {CalibrateSpec, CalibrateMain},
      {MpirunSpec, nullptr, MpirunMain}, {CompareSpec, CompareMain}, {InspectSpec, InspectMain}};
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
  std::size_t width = 0;
  for (const CommandEntry& c : Commands()) width = std::max(width, c.spec().name.size());
  for (const CommandEntry& c : Commands()) {
    const CommandSpec& spec = c.spec();
    out << "  " << spec.name << std::string(width + 2 - spec.name.size(), ' ') << spec.summary
        << "\n";
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
  return command->Run(std::span<const std::string>(words).subspan(1));
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

namespace shardlab::cli {
namespace {

int RunGuarded(std::vector<std::string> words, ProcessSetup& process) {
  // Ranks other than 0 of an mpi job leave bad-input messages (the same
  // on every rank) to rank 0; their own runtime failures they report.
  auto fail = [&process](const std::string& message, int code) {
    if (process.group.rank != 0 && code == 2) return code;
    return Fail(message, code);
  };
  try {
#ifdef SHARDLAB_HAVE_CUDA
    shardlab::RegisterCudaBackend();
    shardlab::SetGpuCounter([] { return shardlab::CudaDeviceCountOrThrow(); });
#endif
#ifdef SHARDLAB_HAVE_MPI_GPU
    shardlab::RegisterMpiGpuDevice();
#endif
    // `mpirun` passes the words after "--" to its ranks untouched.
    if (words.empty() || words.front() != "mpirun") process = TakeProcessFlags(words);
    return Dispatch(words);
  } catch (const shardlab::JobWideError& e) {
    // Every rank failed alike: rank 0's message stands for the job.
    const int code = e.kind() == shardlab::ErrorKind::kInvalidInput ? 2 : 1;
    return process.group.rank == 0 ? Fail(e.what(), code) : code;
  } catch (const shardlab::Error& e) {
    switch (e.kind()) {
      case shardlab::ErrorKind::kInvalidInput: return fail(e.what(), 2);
      case shardlab::ErrorKind::kCancelled: return fail(e.what(), 130);
      case shardlab::ErrorKind::kRuntime: return fail(e.what(), 1);
    }
    return fail(e.what(), 1);
  } catch (const std::bad_alloc&) {
    return fail("out of host memory (try --timing-only, a smaller --size or fewer --ranks)", 1);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  } catch (...) {
    return fail("unknown failure", 1);
  }
}

}  // namespace
}  // namespace shardlab::cli

int main(int argc, char** argv) {
  using namespace shardlab::cli;
  ProcessSetup process;
  const int code = RunGuarded(std::vector<std::string>(argv + 1, argv + argc), process);
  if (process.joined) shardlab::LeaveProcessGroup(code);
  return code;
}
