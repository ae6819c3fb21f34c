// Local SGD and stale-synchronous SGD (seed 001, 003): two ways to talk less
// often, or to stop waiting for the slowest rank.
//
// Local SGD (`local_steps` H): every rank trains its own copy on its own
// rows for H steps (θ_r ← θ_r − lr·N·g_r, g_r its rows' share of the batch
// gradient, so N·g_r is the mean over its rows), then the copies are
// averaged with one all-reduce of the Ψ parameters:
//
//   rank 0  s s s A s s s A        s: a local step, A: average (2(N−1)/N·4Ψ bytes)
//   rank 1  s s s A s s s A        communication per step: 2(N−1)/N·4Ψ / H
//
// With H = 1 it is synchronous SGD: the average of θ − lr·N·g_r over r is
// θ − lr·Σg_r (equal up to the rounding of the average, the test's bound).
//
// Stale-synchronous SGD (staleness S; Ho et al.'s SSP, a parameter server):
// each rank reads the shared θ, computes its gradient, and pushes
// θ ← θ − lr·g_r as soon as it is done; a rank may start its step c only
// while the slowest rank has finished at least c − S steps. A fast rank
// runs up to S steps ahead of a slow one; S = 0 is lock-step.
//
//   clock:   rank 0 (fast)  |c0|c1|c2|c3|....wait....|c4|
//            rank 1 (slow)  |  c0  |  c1  |  c2  |
//   S = 2: rank 0 may start c4 only once rank 1 has finished c1 (4 − 2 = 2 steps).
#pragma once

#include <vector>

namespace shardlab {

/// True when step `step` (0-based) ends with the average of H local steps.
bool LocalSgdAverages(int step, int local_steps, int steps);

/// One step of one rank in a stale-synchronous run.
struct StaleStep {
  int rank = 0;
  int clock = 0;             // the rank's step number c (0-based)
  double start = 0, end = 0; // in units of one fast step's time
  int slowest_done = 0;      // steps the slowest rank had finished when this one started
  int staleness() const { return clock - slowest_done; }  // never above S
};

/// The schedule of `steps` steps on every rank: rank r's step takes
/// `step_time[r]`, and starts when its previous step is done and the
/// slowest rank has finished at least clock − S steps. In start order.
std::vector<StaleStep> StaleSyncSchedule(const std::vector<double>& step_time, int steps, int staleness);

}  // namespace shardlab
