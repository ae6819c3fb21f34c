#include "engine/run/executor.h"

#include <algorithm>

#include "engine/core/error.h"
#include "engine/plan/validate.h"

namespace shardlab {

const char* ExecutorStateName(ExecutorState state) {
  switch (state) {
    case ExecutorState::kReady: return "ready";
    case ExecutorState::kRunning: return "running";
    case ExecutorState::kPaused: return "paused";
    case ExecutorState::kDone: return "done";
    case ExecutorState::kFailed: return "failed";
    case ExecutorState::kCancelled: return "cancelled";
  }
  return "unknown";
}

Executor::Executor(std::unique_ptr<Backend> backend, Plan plan, Topology topology,
                   RunOptions options)
    : backend_(std::move(backend)),
      plan_(std::move(plan)),
      topology_(std::move(topology)),
      options_(std::move(options)) {
  if (!backend_) throw Error("executor: no backend");
  ValidatePlan(plan_);
  backend_->Load(plan_, topology_, options_);
  if (plan_.num_steps == 0) state_ = ExecutorState::kDone;
}

Executor::~Executor() {
  cancel_ = true;
  JoinWorker();
}

std::string Executor::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void Executor::RunSteps(EventSink& sink, bool stop_on_pause) {
  try {
    while (steps_done_ < plan_.num_steps) {
      if (stop_on_pause && pause_) {
        state_ = ExecutorState::kPaused;
        return;
      }
      backend_->RunThroughStep(steps_done_, sink, cancel_);
      ++steps_done_;
    }
    state_ = ExecutorState::kDone;
  } catch (const Error& e) {
    std::lock_guard lock(mutex_);
    error_ = e.what();
    state_ = e.kind() == ErrorKind::kCancelled ? ExecutorState::kCancelled : ExecutorState::kFailed;
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    error_ = e.what();
    state_ = ExecutorState::kFailed;
  }
}

bool Executor::StepOnce(EventSink& sink) { return RunThrough(steps_done_, sink); }

// One backend call for every remaining step: a device backend enqueues the
// whole plan before it waits on anything (and replays it as a CUDA graph
// on later runs), so a run times the GPU and not the host between steps.
void Executor::RunToEnd(EventSink& sink) { RunThrough(plan_.num_steps - 1, sink); }

bool Executor::RunThrough(int last_step, EventSink& sink) {
  const ExecutorState s = state_;
  if (s == ExecutorState::kRunning) throw Error("executor: a run is in progress", ErrorKind::kRuntime);
  if (s == ExecutorState::kFailed || s == ExecutorState::kCancelled)
    throw Error("executor: the run stopped (" + error() + "); reset it first", ErrorKind::kRuntime);
  if (steps_done_ >= plan_.num_steps) return false;
  state_ = ExecutorState::kRunning;
  try {
    backend_->RunThroughStep(last_step, sink, cancel_);
  } catch (const Error& e) {
    {
      std::lock_guard lock(mutex_);
      error_ = e.what();
    }
    state_ = e.kind() == ErrorKind::kCancelled ? ExecutorState::kCancelled : ExecutorState::kFailed;
    throw;
  }
  steps_done_ = std::max(steps_done_.load(), last_step + 1);
  state_ = steps_done_ == plan_.num_steps ? ExecutorState::kDone : ExecutorState::kPaused;
  return true;
}

void Executor::Play(EventSink& sink) {
  std::lock_guard lock(mutex_);
  const ExecutorState s = state_;
  if (s == ExecutorState::kRunning || s == ExecutorState::kDone || s == ExecutorState::kFailed ||
      s == ExecutorState::kCancelled)
    return;
  if (worker_.joinable()) worker_.join();  // a finished (paused) worker
  pause_ = false;
  cancel_ = false;
  state_ = ExecutorState::kRunning;
  worker_ = std::thread([this, &sink] { RunSteps(sink, /*stop_on_pause=*/true); });
}

void Executor::Pause() { pause_ = true; }

void Executor::Cancel() {
  cancel_ = true;
  JoinWorker();
}

void Executor::Wait() { JoinWorker(); }

void Executor::JoinWorker() {
  std::thread worker;
  {
    std::lock_guard lock(mutex_);
    worker.swap(worker_);
  }
  if (worker.joinable()) worker.join();
}

void Executor::Reset() {
  cancel_ = true;
  JoinWorker();
  backend_->Reset();
  cancel_ = false;
  pause_ = false;
  steps_done_ = 0;
  {
    std::lock_guard lock(mutex_);
    error_.clear();
  }
  state_ = plan_.num_steps == 0 ? ExecutorState::kDone : ExecutorState::kReady;
}

}  // namespace shardlab
