// WorkerClient: the app's end of a worker process (`shardlab-cli worker`).
//
//   Start(argv) ── posix_spawn ──► child: stdin  ◄── commands  (Send)
//                                         stdout ──► records   (Poll)
//                                         stderr ──► last lines kept (stderr_tail)
//
// Everything runs on the caller's (UI) thread and never blocks: the pipes
// are non-blocking, Poll reads what is there, and the child is reaped with
// waitpid(WNOHANG) once its stdout closes. Kill() (and the destructor)
// send SIGKILL and reap at once, so no worker outlives its client as a
// zombie or an orphan. A crashed worker is an ordinary end here: ended()
// turns true and DescribeEnd() says how ("killed by SIGSEGV (segmentation
// fault)", "exited with code 3"). Start() ignores SIGPIPE in the app's
// process (a write to a worker that just died must be an error, not the
// app's death); the worker itself gets the default SIGPIPE back.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/io/worker_protocol.h"

namespace shardlab::gui {

class WorkerClient {
 public:
  WorkerClient() = default;
  ~WorkerClient();  // kills and reaps a worker still running
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  /// Starts argv[0] (a path) with `argv`. Kills any previous worker first.
  /// Throws shardlab::Error (kRuntime) when the process cannot start.
  void Start(const std::vector<std::string>& argv);

  /// Writes a command; false when the worker no longer reads (it ended).
  bool Send(const WorkerRecord& command);

  /// Reads every record available now (at most `max_bytes` of stream per
  /// call, so one frame stays short) and appends it to `out`. A stream that
  /// is not valid records kills the worker and sets protocol_error().
  void Poll(std::vector<WorkerRecord>& out, std::size_t max_bytes = std::size_t{8} << 20);

  /// SIGKILL and reap (waits only for the kill to land). No-op when ended.
  void Kill();

  bool started() const { return pid_ > 0 || ended_; }
  /// The child has exited and was reaped, and its output is fully read.
  bool ended() const { return ended_; }
  pid_t pid() const { return pid_; }
  /// After ended(): the exit status, or the signal that ended it (0: none).
  int exit_code() const { return exit_code_; }
  int term_signal() const { return term_signal_; }
  bool killed_by_us() const { return killed_by_us_; }
  /// "exited with code 3", "killed by SIGSEGV (segmentation fault)".
  std::string DescribeEnd() const;
  const std::string& protocol_error() const { return protocol_error_; }
  /// The last few KiB the worker wrote to stderr (its log and error line).
  const std::string& stderr_tail() const { return stderr_tail_; }

 private:
  void CloseFds();
  /// waitpid(WNOHANG); records the status once the child is gone.
  bool TryReap(bool block);

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  bool stdout_closed_ = false;
  bool ended_ = false;
  bool reaped_ = false;
  bool killed_by_us_ = false;
  int exit_code_ = 0;
  int term_signal_ = 0;
  RecordReader reader_;
  std::string protocol_error_;
  std::string stderr_tail_;
};

/// The worker program: $SHARDLAB_CLI when set, else `shardlab-cli` beside
/// the running executable or in ../cli (the build tree), else plain
/// "shardlab-cli" (a clear spawn error names it when it is missing).
std::string DefaultWorkerProgram();

/// "SIGSEGV (segmentation fault)", "SIGKILL (killed)", "signal 42".
std::string SignalDescription(int signal);

}  // namespace shardlab::gui
