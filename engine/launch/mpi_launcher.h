// Starting an MPI job as a child and turning mpirun's report of a dead rank
// into ShardLab's own message. No MPI library needed: it runs `mpirun`.
//
//   MpiLaunch launch;
//   launch.processes = 4;
//   launch.command = {"/path/shardlab-cli", "run", "allreduce", "--ranks", "4",
//                     "--backend", "mpi"};
//   MpiLaunchResult r = RunMpiJob(launch);   // stdout passes through (or
//                                            // capture_stdout: r.stdout_text)
//   if (!r.failure.empty()) std::cerr << r.failure << "\n";
//
// The job runs in its own process group; whatever is left of it when mpirun
// ends is killed, so no rank outlives the call. The environment a root
// container needs (OMPI_ALLOW_RUN_AS_ROOT..., plm=isolated without ssh, no
// single-copy shared memory) is set unless the caller's environment already
// sets those variables.
#pragma once

#include <string>
#include <vector>

namespace shardlab {

/// One host of a job across machines and the processes it takes.
struct MpiHost {
  std::string name;  // a host name or address mpirun reaches (ssh, or plm_rsh_agent)
  int slots = 1;
};

/// `a:4,b:4` (a name without `:N` takes one slot). Throws Error naming `flag`.
std::vector<MpiHost> ParseHostList(const std::string& text, const std::string& flag);

/// An OpenMPI hostfile: one host per line, `NAME [slots=N]`, `#` comments.
/// Throws Error as `path:line: slots: message`, or when it cannot be read.
std::vector<MpiHost> LoadHostfile(const std::string& path);

/// The host of each rank when mpirun maps by slot (the first host's slots
/// first, in order): what `--map-by slot` does.
std::vector<std::string> RanksToHosts(const std::vector<MpiHost>& hosts, int processes);

struct MpiLaunch {
  int processes = 1;                  // mpirun -np
  std::vector<std::string> command;   // program and arguments, run on every rank
  double timeout_s = 0;               // mpirun --timeout (a last-resort guard); 0: none
  std::string mpirun = "mpirun";      // searched in PATH
  std::vector<std::string> extra_args;  // more mpirun flags, before the command
  bool echo_stderr = true;            // pass the ranks' stderr through (mpirun's
                                      // own framed reports are replaced by `failure`)
  bool capture_stdout = false;        // keep the job's stdout in stdout_text instead
                                      // of passing it through (a front end reading --json)
  /// Other machines: empty runs on this one (--oversubscribe, and the
  /// isolated launcher where there is no ssh). With hosts, mpirun gets
  /// `--host` (or `--hostfile` when set) and `--map-by slot`, never
  /// --oversubscribe, and launches through ssh or OMPI_MCA_plm_rsh_agent.
  std::vector<MpiHost> hosts;
  std::string hostfile;               // passed as given when the hosts came from one
  /// When OpenMPI says it lost a daemon without naming its host ("unable
  /// to reliably start one or more daemons", which it also prints when a
  /// daemon dies mid-run), start a trivial one-process job on each host in
  /// turn and name those that no longer answer. Off for the probes themselves.
  bool find_lost_hosts = true;
};

struct MpiLaunchResult {
  int exit_code = 0;          // mpirun's exit status (128 + signal when it was killed)
  std::string failure;        // empty on success; else one line: "rank 1 exited with code 3 ..."
  bool shardlab_reported = false;  // a rank printed its own "shardlab-cli: error:" line
  std::string stderr_text;    // everything the job wrote on stderr
  std::string stdout_text;    // with capture_stdout: everything on stdout (rank 0's report)
};

/// Runs the job to its end. Throws shardlab::Error when mpirun cannot start.
MpiLaunchResult RunMpiJob(const MpiLaunch& launch);

/// Reads OpenMPI's report of a failed job ("Process name: [[x,y],R]" with
/// "Exit code: C", "process rank R ... exited on signal S", "MPI_ABORT was
/// invoked on rank R ... errorcode C", "lost communication with a remote
/// daemon ... on node H") and says which rank or host died and how; with
/// `rank_hosts` (RanksToHosts) a rank is named with its host. Empty when
/// the text names no failed rank or host.
std::string DescribeMpirunFailure(const std::string& stderr_text,
                                  const std::vector<std::string>& rank_hosts = {});

/// "NAME=VALUE" for each variable RunMpiJob adds to the caller's
/// environment (what OpenMPI needs in a container), for a front end that
/// starts mpirun itself (`env NAME=VALUE... mpirun ...`).
std::vector<std::string> MpiJobEnvironmentDefaults(bool several_hosts = false);

/// The hosts of `launch` on which a one-process job (`true`) does not start
/// and end within 20 s: after a failure, the machines that are gone.
std::vector<std::string> HostsThatDoNotAnswer(const MpiLaunch& launch);

/// With `launch.hosts`: runs `COMMAND_PROGRAM --version` once per host
/// (mpirun --map-by node) and compares each answer with `own_version`.
/// Returns "" when every host agrees, else one line naming the first host
/// that differs or did not answer.
std::string CheckSameVersionOnEveryHost(const MpiLaunch& launch, const std::string& own_version);

/// The argument vector RunMpiJob executes (mpirun first).
std::vector<std::string> MpirunArgv(const MpiLaunch& launch);

}  // namespace shardlab
