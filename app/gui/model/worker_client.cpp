#include "app/gui/model/worker_client.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "engine/core/error.h"

extern char** environ;

namespace shardlab::gui {
namespace {

constexpr std::size_t kStderrTailBytes = 4096;

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void SetNonBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace

std::string DefaultWorkerProgram() {
  if (const char* env = std::getenv("SHARDLAB_CLI"); env != nullptr && *env != '\0') return env;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const std::filesystem::path& candidate :
         {self.parent_path() / "shardlab-cli", self.parent_path() / ".." / "cli" / "shardlab-cli"}) {
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal().string();
    }
  }
  return "shardlab-cli";
}

std::string SignalDescription(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGKILL: return "SIGKILL (killed)";
    case SIGABRT: return "SIGABRT (aborted)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGTERM: return "SIGTERM (terminated)";
    case SIGINT: return "SIGINT (interrupted)";
    case SIGPIPE: return "SIGPIPE (broken pipe)";
  }
  return "signal " + std::to_string(signal);
}

WorkerClient::~WorkerClient() { Kill(); }

void WorkerClient::CloseFds() {
  CloseFd(stdin_fd_);
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
}

void WorkerClient::Start(const std::vector<std::string>& argv) {
  Kill();
  CloseFds();
  pid_ = -1;
  stdout_closed_ = ended_ = reaped_ = killed_by_us_ = false;
  exit_code_ = term_signal_ = 0;
  reader_ = RecordReader();
  protocol_error_.clear();
  stderr_tail_.clear();
  if (argv.empty()) throw Error("worker: no program to run", ErrorKind::kRuntime);

  // A write to a worker that just died must be an error, not the app's death.
  ::signal(SIGPIPE, SIG_IGN);

  int in_pipe[2] = {-1, -1};
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  auto fail = [&](const std::string& what, int err) {
    for (int* p : {in_pipe, out_pipe, err_pipe}) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
    return Error("worker: " + what + ": " + std::strerror(err), ErrorKind::kRuntime);
  };
  // O_CLOEXEC: no other worker (or thread's child) inherits these ends.
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw fail("cannot create pipes", errno);
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The worker gets default SIGPIPE (dies when the app is gone) and its
  // own process group, so a Ctrl-C meant for the app reaches it only
  // through the app.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawn_error = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0) throw fail("cannot start " + argv[0], spawn_error);

  CloseFd(in_pipe[0]);
  CloseFd(out_pipe[1]);
  CloseFd(err_pipe[1]);
  pid_ = pid;
  stdin_fd_ = in_pipe[1];
  stdout_fd_ = out_pipe[0];
  stderr_fd_ = err_pipe[0];
  SetNonBlocking(stdin_fd_);
  SetNonBlocking(stdout_fd_);
  SetNonBlocking(stderr_fd_);
}

bool WorkerClient::Send(const WorkerRecord& command) {
  if (stdin_fd_ < 0 || ended_) return false;
  std::vector<std::uint8_t> bytes;
  EncodeRecord(command, bytes);
  std::size_t at = 0;
  // Commands are a few bytes and the worker drains them between steps;
  // a full pipe means it stopped reading, and the command is dropped.
  while (at < bytes.size()) {
    const ssize_t n = ::write(stdin_fd_, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<std::size_t>(n);
  }
  return true;
}

void WorkerClient::Poll(std::vector<WorkerRecord>& out, std::size_t max_bytes) {
  if (pid_ <= 0 || ended_) return;
  std::uint8_t buffer[65536];
  // stderr first: a worker that dies says why there.
  while (stderr_fd_ >= 0) {
    const ssize_t n = ::read(stderr_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) CloseFd(stderr_fd_);
      break;
    }
    stderr_tail_.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
    if (stderr_tail_.size() > kStderrTailBytes) {
      stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
    }
  }
  std::size_t read_bytes = 0;
  while (!stdout_closed_ && read_bytes < max_bytes) {
    const ssize_t n = ::read(stdout_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      stdout_closed_ = true;
      break;
    }
    read_bytes += static_cast<std::size_t>(n);
    reader_.Feed(std::span<const std::uint8_t>(buffer, static_cast<std::size_t>(n)));
  }
  WorkerRecord record;
  DecodeStatus status;
  while ((status = reader_.Next(&record)) == DecodeStatus::kRecord) out.push_back(std::move(record));
  if (status == DecodeStatus::kBad) {
    protocol_error_ = reader_.error();
    Kill();
    return;
  }
  if (stdout_closed_) {
    if (protocol_error_.empty()) protocol_error_ = reader_.EndOfStreamError();
    if (TryReap(/*block=*/false)) {
      ended_ = true;
      CloseFds();
    }
  }
}

bool WorkerClient::TryReap(bool block) {
  if (reaped_) return true;
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got == 0) return false;
  reaped_ = true;
  if (got < 0) return true;  // not our child any more: nothing to reap
  if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) term_signal_ = WTERMSIG(status);
  return true;
}

void WorkerClient::Kill() {
  if (pid_ <= 0 || ended_) return;
  if (!TryReap(/*block=*/false)) {
    ::kill(-pid_, SIGKILL);  // its process group: mpirun's ranks too
    ::kill(pid_, SIGKILL);
    killed_by_us_ = true;
    TryReap(/*block=*/true);  // SIGKILL cannot be caught: this returns at once
  }
  ended_ = true;
  CloseFds();
}

std::string WorkerClient::DescribeEnd() const {
  if (!ended_) return "running";
  if (term_signal_ != 0) {
    return std::string(killed_by_us_ ? "stopped by the app with " : "killed by ") +
           SignalDescription(term_signal_);
  }
  return "exited with code " + std::to_string(exit_code_);
}

}  // namespace shardlab::gui
