#include "engine/launch/mpi_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "engine/core/error.h"

extern char** environ;

namespace shardlab {
namespace {

// What OpenMPI needs in a container, as NAME=VALUE, for the variables the
// caller did not set.
std::vector<std::string> EnvironmentDefaults(bool several_hosts) {
  std::vector<std::string> env;
  auto set_default = [&env](const char* name, const char* value) {
    if (std::getenv(name) == nullptr) env.push_back(std::string(name) + "=" + value);
  };
  if (geteuid() == 0) {
    set_default("OMPI_ALLOW_RUN_AS_ROOT", "1");
    set_default("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  // Without ssh/rsh OpenMPI's launcher refuses to start even a local job.
  // Other hosts need the rsh launcher (ssh, or an agent the caller names).
  if (!several_hosts &&
      std::system("command -v ssh >/dev/null 2>&1 || command -v rsh >/dev/null 2>&1") != 0)
    set_default("OMPI_MCA_plm", "isolated");
  set_default("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
  return env;
}

// The job's environment: the caller's plus the defaults. Built before fork
// (the child of a threaded program may only exec).
std::vector<std::string> JobEnvironment(bool several_hosts) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (std::string& d : EnvironmentDefaults(several_hosts)) env.push_back(std::move(d));
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

std::vector<std::string> MpiJobEnvironmentDefaults(bool several_hosts) {
  return EnvironmentDefaults(several_hosts);
}

std::vector<MpiHost> ParseHostList(const std::string& text, const std::string& flag) {
  std::vector<MpiHost> hosts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t colon = item.rfind(':');
    MpiHost host;
    host.name = item.substr(0, colon);
    if (host.name.empty())
      throw Error(flag + ": empty host name in '" + text + "' (use e.g. a:4,b:4)");
    if (colon != std::string::npos) {
      const std::string n = item.substr(colon + 1);
      if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(n) < 1)
        throw Error(flag + ": '" + item + "': the slots after ':' must be a number from 1");
      host.slots = std::stoi(n);
    }
    hosts.push_back(host);
    start = comma + 1;
  }
  return hosts;
}

std::vector<MpiHost> LoadHostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read the hostfile (" + std::strerror(errno) + ")");
  std::vector<MpiHost> hosts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    MpiHost host;
    if (!(words >> host.name)) continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    for (std::string word; words >> word;) {
      const std::size_t eq = word.find('=');
      const std::string key = word.substr(0, eq);
      if (key == "max_slots" || key == "max-slots") continue;
      if (key != "slots" || eq == std::string::npos)
        throw Error(where + key + ": unknown (a line is NAME [slots=N])");
      const std::string n = word.substr(eq + 1);
      if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(n) < 1)
        throw Error(where + "slots: must be a number from 1 (got '" + n + "')");
      host.slots = std::stoi(n);
    }
    hosts.push_back(host);
    if (hosts.size() > 4096) throw Error(where + "more than 4096 hosts");
  }
  if (hosts.empty()) throw Error(path + ": the hostfile names no host");
  return hosts;
}

std::vector<std::string> RanksToHosts(const std::vector<MpiHost>& hosts, int processes) {
  std::vector<std::string> ranks;
  for (const MpiHost& h : hosts) {
    for (int s = 0; s < h.slots && static_cast<int>(ranks.size()) < processes; ++s)
      ranks.push_back(h.name);
  }
  return ranks;
}

std::vector<std::string> MpirunArgv(const MpiLaunch& launch) {
  std::vector<std::string> argv = {launch.mpirun};
  if (launch.hosts.empty()) {
    argv.push_back("--oversubscribe");
  } else if (!launch.hostfile.empty()) {
    argv.insert(argv.end(), {"--hostfile", launch.hostfile});
  } else {
    std::string list;
    for (const MpiHost& h : launch.hosts)
      list += (list.empty() ? "" : ",") + h.name + ":" + std::to_string(h.slots);
    argv.insert(argv.end(), {"--host", list});
  }
  argv.insert(argv.end(), {"-np", std::to_string(launch.processes)});
  // Ranks in order over the hosts: a topology's box 0 is the first host.
  // (The caller's own --map-by, given in extra_args, comes later and wins.)
  const bool own_mapping =
      std::find(launch.extra_args.begin(), launch.extra_args.end(), "--map-by") !=
      launch.extra_args.end();
  if (!launch.hosts.empty() && !own_mapping) argv.insert(argv.end(), {"--map-by", "slot"});
  if (launch.timeout_s > 0) {
    argv.push_back("--timeout");
    argv.push_back(std::to_string(static_cast<long long>(launch.timeout_s + 0.999)));
  }
  argv.insert(argv.end(), launch.extra_args.begin(), launch.extra_args.end());
  argv.insert(argv.end(), launch.command.begin(), launch.command.end());
  return argv;
}

std::string DescribeMpirunFailure(const std::string& text,
                                  const std::vector<std::string>& rank_hosts) {
  std::smatch m;
  auto rank = [&rank_hosts](const std::string& r) {
    const int i = std::stoi(r);
    if (i >= 0 && i < static_cast<int>(rank_hosts.size()))
      return "rank " + r + " (host " + rank_hosts[static_cast<std::size_t>(i)] + ")";
    return "rank " + r;
  };
  // A whole host gone (its daemon lost: the machine, its network or every
  // process on it): OpenMPI names the node.
  // Either its daemon's connection ("lost communication with a remote
  // daemon") or its ranks' ("peer process has unexpectedly disconnected").
  const std::regex lost_re(
      R"(lost communication with a remote daemon[\s\S]*?Remote daemon:\s*\S+ on node (\S+))");
  const std::regex peer_re(R"(unexpectedly disconnected[\s\S]*?Peer host:\s*(\S+))");
  if (std::regex_search(text, m, lost_re) || std::regex_search(text, m, peer_re))
    return "host " + m[1].str() + " stopped answering during the run (its OpenMPI daemon or "
           "ranks were lost); mpirun stopped the other ranks";
  const std::regex exit_re(R"(Process name:\s*\[\[\d+,\d+\],(\d+)\][\s\S]*?Exit code:\s*(-?\d+))");
  const std::regex signal_re(R"(process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)(?: \(([^)]*)\))?)");
  const std::regex abort_re(R"(MPI_ABORT was invoked on rank (\d+) in communicator \S+\s+with errorcode (-?\d+))");
  const std::regex timeout_re(R"(The user-provided time limit for job execution has been reached)");
  if (std::regex_search(text, m, signal_re)) {
    std::string how = "was killed by signal " + m[2].str();
    if (m[3].matched) how += " (" + m[3].str() + ")";
    return rank(m[1].str()) + " " + how + " during the run; mpirun stopped the other ranks";
  }
  if (std::regex_search(text, m, abort_re))
    return rank(m[1].str()) + " aborted the job (MPI_Abort, error code " + m[2].str() +
           "); mpirun stopped the other ranks";
  if (std::regex_search(text, m, exit_re))
    return rank(m[1].str()) + " exited with code " + m[2].str() +
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
  std::vector<std::string> env = JobEnvironment(!launch.hosts.empty());
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
    result.failure = DescribeMpirunFailure(
        result.stderr_text,
        launch.hosts.empty() ? std::vector<std::string>{} : RanksToHosts(launch.hosts, launch.processes));
    // A rank that exits 1, 2 or 130, or aborts the job, is shardlab-cli
    // ending on its own terms (wrong result, bad input, cancelled, a
    // timeout it reported): nothing to add.
    const std::regex own(R"(^rank \d+ (\(host \S+\) )?(exited with code (1|2|130) |aborted the job))");
    if (std::regex_search(result.failure, own)) result.failure.clear();
    if (result.failure.empty() && launch.find_lost_hosts && launch.hosts.size() > 1 &&
        result.stderr_text.find("unable to reliably start one or more daemons") !=
            std::string::npos) {
      const std::vector<std::string> lost = HostsThatDoNotAnswer(launch);
      if (!lost.empty()) {
        std::string names;
        for (const std::string& h : lost) names += (names.empty() ? "" : ", ") + h;
        result.failure = (lost.size() == 1 ? "host " : "hosts ") + names +
                         " cannot be reached (OpenMPI lost or could not start its daemon "
                         "there, and a new one does not start); mpirun stopped the other ranks";
      } else {
        result.failure = "OpenMPI lost the daemon of one of the hosts and does not say which; "
                         "every host answers again now (mpirun exit code " +
                         std::to_string(result.exit_code) + ")";
      }
    }
    if (result.failure.empty() && !result.shardlab_reported)
      result.failure = "mpirun failed with exit code " + std::to_string(result.exit_code);
  }
  return result;
}

std::vector<std::string> HostsThatDoNotAnswer(const MpiLaunch& launch) {
  std::vector<std::string> lost;
  for (const MpiHost& host : launch.hosts) {
    MpiLaunch probe;
    probe.mpirun = launch.mpirun;
    probe.hosts = {MpiHost{host.name, 1}};
    probe.processes = 1;
    probe.command = {"true"};
    probe.timeout_s = 20;
    probe.echo_stderr = false;
    probe.capture_stdout = true;
    probe.find_lost_hosts = false;
    try {
      if (RunMpiJob(probe).exit_code != 0) lost.push_back(host.name);
    } catch (const Error&) {
      lost.push_back(host.name);
    }
  }
  return lost;
}

std::string CheckSameVersionOnEveryHost(const MpiLaunch& launch, const std::string& own_version) {
  if (launch.hosts.empty() || launch.command.empty()) return "";
  MpiLaunch probe;
  probe.mpirun = launch.mpirun;
  probe.hosts = launch.hosts;
  probe.hostfile = launch.hostfile;
  probe.processes = static_cast<int>(launch.hosts.size());
  probe.command = {launch.command.front(), "--version"};
  probe.extra_args = {"--map-by", "node", "--tag-output"};
  probe.timeout_s = launch.timeout_s > 0 ? launch.timeout_s : 60;
  probe.capture_stdout = true;
  probe.echo_stderr = false;
  const MpiLaunchResult r = RunMpiJob(probe);
  // --tag-output: "[1,R]<stdout>:shardlab-cli 0.1.0"; rank R is on host R.
  std::vector<std::string> answers(launch.hosts.size());
  const std::regex line_re(R"(\[\d+,(\d+)\]<stdout>:(.*))");
  std::istringstream lines(r.stdout_text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    const std::size_t host = std::stoul(m[1].str());
    if (host < answers.size()) answers[host] = m[2].str();
  }
  // A host found unreachable after the probe failed is the answer itself.
  if (r.failure.find(" cannot be reached ") != std::string::npos) return r.failure;
  for (std::size_t h = 0; h < answers.size(); ++h) {
    const std::string& name = launch.hosts[h].name;
    if (answers[h].empty()) {
      const std::string why = r.failure.empty() ? DescribeMpirunFailure(r.stderr_text) : r.failure;
      return "host " + name + " did not say which ShardLab it runs (" + launch.command.front() +
             " --version)" + (why.empty() ? "" : ": " + why);
    }
    if (answers[h] != own_version)
      return "host " + name + " runs '" + answers[h] + "' but this host runs '" + own_version +
             "': every host needs the same ShardLab build at " + launch.command.front();
  }
  return "";
}

}  // namespace shardlab
