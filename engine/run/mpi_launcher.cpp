#include "engine/run/mpi_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <regex>
#include <sstream>

#include "engine/core/error.h"

extern char** environ;

namespace shardlab {
namespace {

// What OpenMPI needs in a container, as NAME=VALUE, for the variables the
// caller did not set.
std::vector<std::string> EnvironmentDefaults() {
  std::vector<std::string> env;
  auto set_default = [&env](const char* name, const char* value) {
    if (std::getenv(name) == nullptr) env.push_back(std::string(name) + "=" + value);
  };
  if (geteuid() == 0) {
    set_default("OMPI_ALLOW_RUN_AS_ROOT", "1");
    set_default("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  // Without ssh/rsh OpenMPI's launcher refuses to start even a local job.
  if (std::system("command -v ssh >/dev/null 2>&1 || command -v rsh >/dev/null 2>&1") != 0)
    set_default("OMPI_MCA_plm", "isolated");
  set_default("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
  return env;
}

// The job's environment: the caller's plus the defaults. Built before fork
// (the child of a threaded program may only exec).
std::vector<std::string> JobEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (std::string& d : EnvironmentDefaults()) env.push_back(std::move(d));
  return env;
}

// Drops OpenMPI's framed reports (between lines of dashes) from what is
// echoed: the launcher says the same in one line.
class StderrFilter {
 public:
  void Feed(const char* data, std::size_t n, bool echo) {
    pending_.append(data, n);
    std::size_t newline;
    while ((newline = pending_.find('\n')) != std::string::npos) {
      Line(pending_.substr(0, newline + 1), echo);
      pending_.erase(0, newline + 1);
    }
  }
  void Flush(bool echo) {
    if (!pending_.empty()) Line(pending_ + "\n", echo);
    pending_.clear();
  }
  std::string text;

 private:
  void Line(const std::string& line, bool echo) {
    text += line;
    const bool rule = line.rfind("-----", 0) == 0;
    if (rule) in_frame_ = !in_frame_;
    const bool noise = rule || in_frame_ || line.find("ORTE_ERROR_LOG") != std::string::npos ||
                       line.rfind("[warn]", 0) == 0;
    if (echo && !noise) std::cerr << line << std::flush;
  }
  std::string pending_;
  bool in_frame_ = false;
};

}  // namespace

std::vector<std::string> MpiJobEnvironmentDefaults() { return EnvironmentDefaults(); }

std::vector<std::string> MpirunArgv(const MpiLaunch& launch) {
  std::vector<std::string> argv = {launch.mpirun, "--oversubscribe", "-np",
                                   std::to_string(launch.processes)};
  if (launch.timeout_s > 0) {
    argv.push_back("--timeout");
    argv.push_back(std::to_string(static_cast<long long>(launch.timeout_s + 0.999)));
  }
  argv.insert(argv.end(), launch.extra_args.begin(), launch.extra_args.end());
  argv.insert(argv.end(), launch.command.begin(), launch.command.end());
  return argv;
}

std::string DescribeMpirunFailure(const std::string& text) {
  std::smatch m;
  const std::regex exit_re(R"(Process name:\s*\[\[\d+,\d+\],(\d+)\][\s\S]*?Exit code:\s*(-?\d+))");
  const std::regex signal_re(R"(process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)(?: \(([^)]*)\))?)");
  const std::regex abort_re(R"(MPI_ABORT was invoked on rank (\d+) in communicator \S+\s+with errorcode (-?\d+))");
  const std::regex timeout_re(R"(The user-provided time limit for job execution has been reached)");
  if (std::regex_search(text, m, signal_re)) {
    std::string how = "was killed by signal " + m[2].str();
    if (m[3].matched) how += " (" + m[3].str() + ")";
    return "rank " + m[1].str() + " " + how + " during the run; mpirun stopped the other ranks";
  }
  if (std::regex_search(text, m, abort_re))
    return "rank " + m[1].str() + " aborted the job (MPI_Abort, error code " + m[2].str() +
           "); mpirun stopped the other ranks";
  if (std::regex_search(text, m, exit_re))
    return "rank " + m[1].str() + " exited with code " + m[2].str() +
           " during the run; mpirun stopped the other ranks";
  if (std::regex_search(text, m, timeout_re))
    return "mpirun --timeout expired; mpirun stopped every rank";
  return "";
}

MpiLaunchResult RunMpiJob(const MpiLaunch& launch) {
  if (launch.processes < 1)
    throw Error("mpirun: -np must be at least 1 (got " + std::to_string(launch.processes) + ")");
  if (launch.command.empty()) throw Error("mpirun: no command to run");
  const std::vector<std::string> args = MpirunArgv(launch);

  int pipe_fds[2];
  if (pipe(pipe_fds) != 0)
    throw Error(std::string("mpirun: pipe: ") + std::strerror(errno), ErrorKind::kRuntime);
  int out_fds[2] = {-1, -1};
  if (launch.capture_stdout && pipe(out_fds) != 0)
    throw Error(std::string("mpirun: pipe: ") + std::strerror(errno), ErrorKind::kRuntime);
  int exec_check[2];  // closed on exec; carries errno when exec fails
  if (pipe(exec_check) != 0)
    throw Error(std::string("mpirun: pipe: ") + std::strerror(errno), ErrorKind::kRuntime);
  fcntl(exec_check[1], F_SETFD, FD_CLOEXEC);
  std::vector<std::string> env = JobEnvironment();
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> words = args;
  std::vector<char*> argv;
  for (std::string& a : words) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();

  const pid_t child = fork();
  if (child < 0)
    throw Error(std::string("mpirun: fork: ") + std::strerror(errno), ErrorKind::kRuntime);
  if (child == 0) {
    setpgid(0, 0);  // the job's own group: killed as a whole afterwards
    close(pipe_fds[0]);
    close(exec_check[0]);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[1]);
    if (launch.capture_stdout) {
      close(out_fds[0]);
      dup2(out_fds[1], STDOUT_FILENO);
      close(out_fds[1]);
    }
    execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    (void)!write(exec_check[1], &err, sizeof err);
    _exit(127);
  }
  setpgid(child, child);  // also here: no race with the child's own call
  close(pipe_fds[1]);
  close(exec_check[1]);
  int exec_errno = 0;
  const bool exec_failed = read(exec_check[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  close(exec_check[0]);

  if (launch.capture_stdout) close(out_fds[1]);

  // Both pipes are drained together: a job blocked on a full stdout pipe
  // would never close its stderr.
  StderrFilter filter;
  std::string captured;
  char buffer[4096];
  pollfd fds[2] = {{pipe_fds[0], POLLIN, 0}, {out_fds[0], POLLIN, 0}};
  int open_fds = launch.capture_stdout ? 2 : 1;
  while (open_fds > 0) {
    if (poll(fds, launch.capture_stdout ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else if (i == 0) {
        filter.Feed(buffer, static_cast<std::size_t>(n), launch.echo_stderr);
      } else {
        captured.append(buffer, static_cast<std::size_t>(n));
      }
    }
  }
  filter.Flush(launch.echo_stderr);

  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  kill(-child, SIGKILL);  // whatever mpirun left behind (ESRCH when nothing)

  if (exec_failed)
    throw Error("mpirun: cannot run '" + launch.mpirun + "': " + std::strerror(exec_errno) +
                    " (install OpenMPI: scripts/install-deps.sh)",
                ErrorKind::kRuntime);
  MpiLaunchResult result;
  result.stderr_text = filter.text;
  result.stdout_text = std::move(captured);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.shardlab_reported = result.stderr_text.find("shardlab-cli: error:") != std::string::npos;
  if (result.exit_code != 0) {
    result.failure = DescribeMpirunFailure(result.stderr_text);
    // A rank that exits 1, 2 or 130, or aborts the job, is shardlab-cli
    // ending on its own terms (wrong result, bad input, cancelled, a
    // timeout it reported): nothing to add.
    const std::regex own(R"(^rank \d+ (exited with code (1|2|130) |aborted the job))");
    if (std::regex_search(result.failure, own)) result.failure.clear();
    if (result.failure.empty() && !result.shardlab_reported)
      result.failure = "mpirun failed with exit code " + std::to_string(result.exit_code);
  }
  return result;
}

}  // namespace shardlab
