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
/// invoked on rank R ... errorcode C") and says which rank died and how.
/// Empty when the text names no failed rank.
std::string DescribeMpirunFailure(const std::string& stderr_text);

/// "NAME=VALUE" for each variable RunMpiJob adds to the caller's
/// environment (what OpenMPI needs in a container), for a front end that
/// starts mpirun itself (`env NAME=VALUE... mpirun ...`).
std::vector<std::string> MpiJobEnvironmentDefaults();

/// The argument vector RunMpiJob executes (mpirun first).
std::vector<std::string> MpirunArgv(const MpiLaunch& launch);

}  // namespace shardlab
