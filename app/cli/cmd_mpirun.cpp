// `shardlab-cli mpirun -np N [--timeout S] -- run allreduce ... --backend mpi`:
// starts the job under OpenMPI's mpirun (with the environment a root
// container needs) and, when a rank dies, says which one and how instead of
// leaving the user to read mpirun's report. No rank outlives the command.
#include <climits>
#include <iostream>
#include <unistd.h>

#include "app/cli/commands.h"
#include "engine/run/mpi_launcher.h"

namespace shardlab::cli {
namespace {

std::string SelfPath() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return kProgram;
  return std::string(path, static_cast<std::size_t>(n));
}

}  // namespace

const CommandSpec& MpirunSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "mpirun";
    s.summary = "run a command on the mpi backend under mpirun, one process per rank";
    s.usage = "mpirun -np N [--timeout S] -- COMMAND [flags]";
    s.description =
        "Starts N copies of shardlab-cli under OpenMPI's mpirun (--oversubscribe, and as\n"
        "root in a container the environment OpenMPI needs) and passes their output on.\n"
        "COMMAND should be a run with --backend mpi (--ranks defaults to N). When a rank dies,\n"
        "mpirun stops the others; this command then names the rank and its exit code or signal,\n"
        "and makes sure no process of the job is left. Flags of the mpi backend, given\n"
        "after COMMAND: --mpi-timeout DURATION bounds every wait (default 30s; 500ms, 5s,\n"
        "2m); --inject-fault exit|kill|stall:rank=R,op=N or skip:rank=R,iter=N (tests);\n"
        "--device gpu keeps each rank's buffers on a GPU (needed by --algo nccl).";
    s.flags = {
        {"np", 'n', "N", "processes to start (one per rank)"},
        {"timeout", 0, "S", "mpirun --timeout: kill the job after S seconds (last resort)"},
    };
    s.max_positionals = 0;
    s.examples =
        "  shardlab-cli mpirun -np 4 -- run allreduce --algo ring --ranks 4 --size 64M --backend mpi\n"
        "  shardlab-cli mpirun -np 4 -- run allreduce --ranks 4 --size 1K --backend mpi \\\n"
        "      --iters 5 --inject-fault skip:rank=2,iter=3 --mpi-timeout 5s\n";
    return s;
  }();
  return spec;
}

int MpirunMain(std::span<const std::string> words) {
  std::size_t split = 0;
  while (split < words.size() && words[split] != "--") ++split;
  // "-np" is OpenMPI's spelling; the parser knows "--np" and "-n".
  std::vector<std::string> own(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(split));
  for (std::string& w : own)
    if (w == "-np") w = "--np";
  const ParsedArgs args = ParseArgs(MpirunSpec(), own);
  if (args.help()) {
    std::cout << FormatHelp(MpirunSpec());
    return 0;
  }
  if (!args.Has("np")) throw UsageError("mpirun: -np N is required");
  if (split >= words.size() || split + 1 == words.size())
    throw UsageError("mpirun: give the command after '--' (e.g. -- run allreduce --backend mpi)");
  MpiLaunch launch;
  launch.processes = static_cast<int>(ParseIntValue(args.Spelling("np"), args.Get("np"), 1, 4096));
  if (args.Has("timeout"))
    launch.timeout_s =
        static_cast<double>(ParseIntValue(args.Spelling("timeout"), args.Get("timeout"), 1, INT_MAX));
  launch.command.push_back(SelfPath());
  launch.command.insert(launch.command.end(), words.begin() + static_cast<std::ptrdiff_t>(split) + 1,
                        words.end());
  const MpiLaunchResult result = RunMpiJob(launch);
  if (!result.failure.empty()) std::cerr << kProgram << ": error: " << result.failure << "\n";
  return result.exit_code;
}

}  // namespace shardlab::cli
