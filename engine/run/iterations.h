// Warm-up and timed iterations, as nccl-tests runs them (-w N, -n N): the
// loop and its summary, shared by every scenario and front end. The CLI's
// flags are in app/cli/iterations.h; in a scenario spec they are two
// parameters with a default each (DefaultWarmup, 1) and this loop.
//
//   warm-up 1..W   run the plan from its inputs, events dropped (first
//                  launches, cuBLAS heuristics, a CUDA graph's capture)
//   timed  1..N    run it again from its inputs; each run's span is kept
//   reported       the average and the best span; the tables, the check and
//                  the timeline are those of the last timed run
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/core/event.h"
#include "engine/run/executor.h"

namespace shardlab {

class JsonWriter;

struct IterationSettings {
  int warmup = 0;  // runs before the timed ones, not reported
  int iters = 1;   // timed runs; the last one is shown
};

/// Warm-up by default, as the backend declares it (BackendTraits::
/// default_warmup; 0 for an undeclared name): 1 on GPUs (backend cuda), 0
/// on the simulator (its time does not change from run to run) and on mpi
/// (whose runs are numbered collectives: --inject-fault ...,iter=N counts them).
int DefaultWarmup(const std::string& backend);

/// Throws Error(kInvalidInput) "warmup: ..." / "iters: ..." for a warm-up
/// below 0 or fewer than 1 timed run.
void CheckIterationSettings(const IterationSettings& settings);

struct IterationTimes {
  IterationSettings settings;
  std::vector<TimeNs> spans_ns;  // one per timed run, in order
  TimeNs average_ns = 0;
  TimeNs best_ns = 0;
};

/// The average and the best of `spans_ns` (empty: zeros).
IterationTimes SummarizeIterations(const IterationSettings& settings,
                                   std::vector<TimeNs> spans_ns);

/// Runs the warm-up and the timed iterations of the executor's plan, each
/// from its inputs (Reset between runs); `last` receives the last timed
/// run's events. A run's span is the latest end of its events. A run that
/// does not finish throws Error(kRuntime) "the run failed: ...".
IterationTimes RunIterations(Executor& executor, EventSink& last,
                             const IterationSettings& settings);

/// For a front end that runs the last timed run itself (stepped and
/// streamed: the app's worker process): runs the warm-up runs and every
/// timed run but the last, each from the plan's inputs (RunToEnd, then
/// Reset), and returns those timed runs' spans; the last run's span is
/// appended by the caller, and SummarizeIterations of all of them is what
/// RunIterations would report. A run that fails throws its Error (kind
/// kept) as "warm-up run 2 failed: ..." or "timed run 1 of 3 failed: ...".
/// `after_each`, when given, is called after each of those runs with the
/// number done so far (1, 2, ...): a worker's sign of life.
std::vector<TimeNs> RunBeforeTheLast(Executor& executor, const IterationSettings& settings,
                                     const std::function<void(int runs_done)>& after_each = {});

/// "# iterations: 1 warm-up (not timed), 10 timed: average 1.23 ms, best
/// 1.10 ms; the tables and the timeline show the last", or "" for a
/// single run without warm-up (the output of a plain run is unchanged).
std::string DescribeIterations(const IterationTimes& times);

/// The one --json form of the above, the same in every scenario's object:
///   "iterations": {"warmup": 1, "iters": 10, "average_us": 1230, "best_us": 1100}
/// written for every run (a single run: warmup 0, iters 1, average = best).
void WriteIterationsJson(JsonWriter& json, const IterationTimes& times);

}  // namespace shardlab
