// `shardlab-cli mpirun -np N [--timeout S] [--host a:4,b:4 | --hostfile F]
// -- run allreduce ... --backend mpi`: starts the job under OpenMPI's mpirun
// (with the environment a root container needs) and, when a rank dies, says
// which one and how, and on which host, instead of leaving the user to read
// mpirun's report. No rank outlives the command. With hosts it first checks
// that every host runs this ShardLab, and that a topology's boxes fall on
// the hosts in order (rank r on the host its GPU's box is).
#include <climits>
#include <iostream>
#include <unistd.h>

#include "app/cli/commands.h"
#include "engine/launch/mpi_launcher.h"
#include "engine/topology/presets.h"
#include "engine/topology/topology.h"

namespace shardlab::cli {
namespace {

std::string SelfPath() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return kProgram;
  return std::string(path, static_cast<std::size_t>(n));
}

// The value of `--topology` in the command after '--', or "".
std::string CommandTopology(const std::vector<std::string>& command) {
  for (std::size_t i = 1; i < command.size(); ++i) {
    if (command[i] == "--topology" && i + 1 < command.size()) return command[i + 1];
    if (command[i].rfind("--topology=", 0) == 0) return command[i].substr(11);
  }
  return "";
}

// With hosts and a topology of several boxes: rank r must land on the host
// of its GPU's box (box b = the b-th host), so that the topology's links
// between boxes are the network between the hosts.
void CheckTopologyFitsHosts(const std::string& name, const std::vector<MpiHost>& hosts,
                            int processes) {
  const Topology topology = LoadTopology(name);
  if (topology.num_hosts() <= 1) return;
  const std::vector<std::string> rank_hosts = RanksToHosts(hosts, processes);
  std::vector<std::string> box_host;  // host name of each box, as ranks reach it
  for (int r = 0; r < processes && r < topology.num_gpus(); ++r) {
    const int box = topology.nodes[static_cast<std::size_t>(topology.gpus[static_cast<std::size_t>(r)])].host;
    const std::size_t want = static_cast<std::size_t>(box);
    if (want >= hosts.size()) {
      throw UsageError("mpirun: --topology " + name + " puts rank " + std::to_string(r) +
                       " in box " + std::to_string(box) + ", but only " +
                       std::to_string(hosts.size()) + " hosts are given");
    }
    if (rank_hosts[static_cast<std::size_t>(r)] != hosts[want].name) {
      throw UsageError("mpirun: --topology " + name + " puts rank " + std::to_string(r) +
                       " in box " + std::to_string(box) + " (host " + hosts[want].name +
                       "), but the host list places it on " + rank_hosts[static_cast<std::size_t>(r)] +
                       ": give each host as many slots as its box has GPUs");
    }
  }
}

}  // namespace

CommandSpec MpirunSpec() {
  CommandSpec s;
  s.name = "mpirun";
  s.summary = "run a command on the mpi backend under mpirun, one process per rank";
  s.usage = "mpirun -np N [--timeout S] [--host LIST | --hostfile FILE] -- COMMAND [flags]";
  s.description =
      "Starts N copies of shardlab-cli under OpenMPI's mpirun (--oversubscribe, and as\n"
      "root in a container the environment OpenMPI needs) and passes their output on.\n"
      "COMMAND should be a run with --backend mpi (--ranks defaults to N). When a rank dies,\n"
      "mpirun stops the others; this command then names the rank and its exit code or signal,\n"
      "and makes sure no process of the job is left. Flags of the mpi backend, given\n"
      "after COMMAND: --mpi-timeout DURATION bounds every wait (default 30s; 500ms, 5s,\n"
      "2m); --inject-fault exit|kill|stall:rank=R,op=N or skip:rank=R,iter=N (tests);\n"
      "--device gpu keeps each rank's buffers on a GPU (needed by --algo nccl).\n"
      "Across machines, --host a:4,b:4 or --hostfile FILE places ranks in order (the\n"
      "first host's slots first; with a topology of several boxes, box b on the b-th\n"
      "host); mpirun reaches the hosts by ssh (or OMPI_MCA_plm_rsh_agent), without\n"
      "--oversubscribe, after checking that every host runs this same ShardLab.";
  s.flags = {
      {"np", 'n', "N", "processes to start (one per rank)"},
      {"timeout", 0, "S", "mpirun --timeout: kill the job after S seconds (last resort)"},
      {"host", 0, "LIST", "hosts and their slots, e.g. node-a:4,node-b:4 (ranks fill them "
                          "in order)"},
      {"hostfile", 0, "FILE", "an OpenMPI hostfile: one 'NAME slots=N' per line"},
  };
  s.max_positionals = 0;
  s.examples =
      "  shardlab-cli mpirun -np 4 -- run allreduce --algo ring --ranks 4 --size 64M --backend mpi\n"
      "  shardlab-cli mpirun -np 4 -- run allreduce --ranks 4 --size 1K --backend mpi \\\n"
      "      --iters 5 --inject-fault skip:rank=2,iter=3 --mpi-timeout 5s\n"
      "  shardlab-cli mpirun -np 16 --host node-a:8,node-b:8 -- run allreduce --backend mpi \\\n"
      "      --topology 2x-dgx-a100-ib\n";
  return s;
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
  if (args.Has("host") && args.Has("hostfile"))
    throw UsageError("mpirun: give --host or --hostfile, not both");
  try {
    if (args.Has("host")) launch.hosts = ParseHostList(args.Get("host"), args.Spelling("host"));
    if (args.Has("hostfile")) {
      launch.hostfile = args.Get("hostfile");
      launch.hosts = LoadHostfile(launch.hostfile);
    }
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (!launch.hosts.empty()) {
    int slots = 0;
    for (const MpiHost& h : launch.hosts) slots += h.slots;
    if (slots < launch.processes)
      throw UsageError("mpirun: -np " + std::to_string(launch.processes) + " but the hosts have " +
                       std::to_string(slots) + " slots (one process per slot; no oversubscribing "
                       "across machines)");
    if (const std::string topology = CommandTopology(launch.command); !topology.empty()) {
      CheckTopologyFitsHosts(topology, launch.hosts, launch.processes);
    }
    const std::string version = std::string(kProgram) + " " + kVersion;
    if (const std::string problem = CheckSameVersionOnEveryHost(launch, version); !problem.empty()) {
      std::cerr << kProgram << ": error: " << problem << "\n";
      return 1;
    }
  }
  const MpiLaunchResult result = RunMpiJob(launch);
  if (!result.failure.empty()) std::cerr << kProgram << ": error: " << result.failure << "\n";
  return result.exit_code;
}

}  // namespace shardlab::cli
