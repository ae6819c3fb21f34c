// Warm-up and timed iterations of an app run, as the CLI's -w/--warmup and
// -n/--iters (engine/run/iterations.h): real hardware's first run pays for
// first launches, cuBLAS's heuristics and a CUDA graph's capture, so the
// app runs the plan `warmup` times untimed, then `iters` times timed, and
// shows the last timed run with the average and the best of all of them.
//
//   ScenarioSettings{backend, warmup (-1: the backend's default), iters}
//        └─ RunIterationsOf ─► IterationSettings (checked)
//   worker thread: RunBeforeTheShownRun (warm-up + iters-1 timed, RunToEnd)
//        └─ the shown run, stepped as always ─► SummarizeIterations
//   worker process (in_worker): the same there (`worker -w W -n N`); its
//        run-done record's spans ─► SummarizeIterations
//   metrics panel: DescribeRunIterations ─► "average of 5 runs: ..."
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "engine/run/executor.h"
#include "engine/run/iterations.h"

namespace shardlab::gui {

struct ScenarioSettings;

/// The settings' warm-up and timed runs: warmup -1 takes the backend's
/// default (DefaultWarmup: 1 on cuda, 0 on the simulator). Throws
/// Error(kInvalidInput) "warmup: must be 0 or more (got -2)" or "iters:
/// must be at least 1 (got 0)". A collective in the worker process
/// (in_worker) runs them there (`worker -w W -n N`), streams the last timed
/// run and sends every timed run's span (session_worker.cpp).
IterationSettings RunIterationsOf(const ScenarioSettings& settings);

/// Runs the warm-up runs and every timed run but the last (each from the
/// plan's inputs: RunToEnd, then Reset) and returns the timed runs' spans
/// (the latest end of each run's events). Stops early, returning what it
/// has, when `cancel` is set or a run does not finish.
std::vector<TimeNs> RunBeforeTheShownRun(Executor& executor, const IterationSettings& settings,
                                         const std::atomic<bool>& cancel);

/// The metrics panel's line: "" for a single run without warm-up, else
/// "average of 5 runs: 1.23 ms, best 1.10 ms; last iteration shown; 1
/// warm-up run excluded".
std::string DescribeRunIterations(const IterationTimes& times);

}  // namespace shardlab::gui
