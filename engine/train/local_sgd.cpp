#include "engine/train/local_sgd.h"

#include <algorithm>
#include <limits>

namespace shardlab {

bool LocalSgdAverages(int step, int local_steps, int steps) {
  return (step + 1) % local_steps == 0 || step + 1 == steps;
}

std::vector<StaleStep> StaleSyncSchedule(const std::vector<double>& step_time, int steps, int staleness) {
  const int n = static_cast<int>(step_time.size());
  std::vector<int> next(static_cast<std::size_t>(n), 0);                // next clock per rank
  std::vector<double> free_at(static_cast<std::size_t>(n), 0.0);        // when its last step ends
  std::vector<std::vector<double>> done_at(static_cast<std::size_t>(n)); // end of each finished step
  std::vector<StaleStep> order;
  // Steps start in time order: pick the rank that can start earliest.
  for (int placed = 0; placed < n * steps; ++placed) {
    int best = -1;
    double best_start = std::numeric_limits<double>::infinity();
    for (int r = 0; r < n; ++r) {
      if (next[r] >= steps) continue;
      // It needs every rank to have finished clock − S steps: the time the
      // (clock − S)-th step of the slowest rank ended.
      const int need = next[r] - staleness;
      double ready = free_at[r];
      for (int q = 0; q < n && need > 0; ++q) {
        if (static_cast<int>(done_at[q].size()) < need) {
          // Not yet finished: its step need−1 ends at a time we can compute,
          // as each rank's steps are back to back once started; wait for it
          // by taking another rank first.
          ready = std::numeric_limits<double>::infinity();
          break;
        }
        ready = std::max(ready, done_at[q][need - 1]);
      }
      if (ready < best_start || (ready == best_start && best >= 0 && r < best)) {
        best = r;
        best_start = ready;
      }
    }
    StaleStep s;
    s.rank = best;
    s.clock = next[best];
    s.start = best_start;
    s.end = best_start + step_time[best];
    int slowest = std::numeric_limits<int>::max();
    for (int q = 0; q < n; ++q) {
      int finished = 0;
      for (const double t : done_at[q]) finished += t <= best_start ? 1 : 0;
      slowest = std::min(slowest, finished);
    }
    s.slowest_done = slowest;
    order.push_back(s);
    done_at[best].push_back(s.end);
    free_at[best] = s.end;
    ++next[best];
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const StaleStep& a, const StaleStep& b) { return a.start < b.start; });
  return order;
}

}  // namespace shardlab
