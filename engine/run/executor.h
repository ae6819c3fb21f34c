// Executor: drives a Backend through a Plan one logical step at a time.
//
//   Executor ex(CreateBackend("sim"), std::move(plan), topology, options);
//   while (ex.StepOnce(sink)) { /* inspect ex.backend().BufferData(...) */ }
//   ex.Reset(); ex.RunToEnd(sink);
//
// The synchronous calls run on the caller's thread. The asynchronous ones
// (Play, Pause, Cancel) let a UI thread drive a background run: Play starts
// a worker that runs step after step until the end or a Pause; Pause takes
// effect at the next step boundary; Cancel stops inside a step. State and
// progress may be read from any thread. A failed run keeps its message in
// error() and leaves the executor usable after Reset().
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/run/backend.h"

namespace shardlab {

enum class ExecutorState { kReady, kRunning, kPaused, kDone, kFailed, kCancelled };
const char* ExecutorStateName(ExecutorState state);

class Executor {
 public:
  /// Validates the plan (throws shardlab::Error) and loads it on the backend.
  Executor(std::unique_ptr<Backend> backend, Plan plan, Topology topology, RunOptions options = {});
  ~Executor();  // cancels and joins a background run
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // --- Synchronous (caller's thread; not while a background run is active).
  /// Runs the next logical step. Returns false when there was none left.
  bool StepOnce(EventSink& sink);
  /// Runs every remaining step in one call to the backend (a GPU backend
  /// enqueues them all before it waits on anything).
  void RunToEnd(EventSink& sink);

  // --- Asynchronous (any thread).
  /// Starts (or resumes) a background run to the end; events go to `sink`,
  /// which must outlive the run. No-op when already running or done.
  void Play(EventSink& sink);
  /// Stops a background run at the next step boundary.
  void Pause();
  /// Stops a background run inside its current step and waits for it.
  void Cancel();
  /// Waits for a background run to stop (done, paused, failed or cancelled).
  void Wait();
  /// Stops any background run, then returns to the state after loading.
  void Reset();

  ExecutorState state() const { return state_.load(); }
  /// Logical steps completed so far (0 .. plan().num_steps).
  int steps_done() const { return steps_done_.load(); }
  std::string error() const;

  const Plan& plan() const { return plan_; }
  const Topology& topology() const { return topology_; }
  const RunOptions& options() const { return options_; }
  /// The backend, for reading buffers between steps (not during a run).
  const Backend& backend() const { return *backend_; }

 private:
  void RunSteps(EventSink& sink, bool stop_on_pause);
  bool RunThrough(int last_step, EventSink& sink);
  void JoinWorker();

  std::unique_ptr<Backend> backend_;
  Plan plan_;
  Topology topology_;
  RunOptions options_;

  std::atomic<ExecutorState> state_{ExecutorState::kReady};
  std::atomic<int> steps_done_{0};
  std::atomic<bool> cancel_{false};
  std::atomic<bool> pause_{false};
  mutable std::mutex mutex_;  // guards error_ and worker_
  std::string error_;
  std::thread worker_;
};

}  // namespace shardlab
