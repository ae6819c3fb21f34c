#include "engine/backends/sim/max_min_fair.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

namespace shardlab {

void MaxMinFairRates(std::span<const Gbps> capacity,
                     std::span<const std::span<const std::int32_t>> paths,
                     std::vector<double>& rates, MaxMinScratch& s) {
  const std::size_t resources = capacity.size();
  if (s.stamp.size() < resources) {
    s.remaining.resize(resources);
    s.unfrozen.resize(resources);
    s.stamp.resize(resources, 0);
    s.local.resize(resources);
  }
  if (++s.call == 0) {  // the stamp wrapped: forget every old mark
    std::fill(s.stamp.begin(), s.stamp.end(), 0);
    s.call = 1;
  }
  const std::size_t n = paths.size();
  rates.assign(n, std::numeric_limits<double>::infinity());
  s.frozen.assign(n, 0);

  // The resources this call touches, with their flow counts.
  s.touched.clear();
  for (const auto& path : paths) {
    for (const std::int32_t r : path) {
      if (s.stamp[r] != s.call) {
        s.stamp[r] = s.call;
        s.local[r] = static_cast<std::int32_t>(s.touched.size());
        s.touched.push_back(r);
        s.remaining[r] = capacity[r];
        s.unfrozen[r] = 0;
      }
      ++s.unfrozen[r];
    }
  }
  // Local CSR: the flows on each touched resource.
  const std::size_t local_count = s.touched.size();
  s.flows_begin.assign(local_count + 1, 0);
  for (const auto& path : paths)
    for (const std::int32_t r : path) ++s.flows_begin[s.local[r] + 1];
  for (std::size_t i = 0; i < local_count; ++i) s.flows_begin[i + 1] += s.flows_begin[i];
  s.flows_on.resize(s.flows_begin[local_count]);
  {
    std::vector<std::uint32_t>& fill = s.flows_begin;  // shifted back below
    for (std::size_t f = 0; f < n; ++f)
      for (const std::int32_t r : paths[f]) s.flows_on[fill[s.local[r]]++] = static_cast<std::int32_t>(f);
    for (std::size_t i = local_count; i > 0; --i) fill[i] = fill[i - 1];
    fill[0] = 0;
  }

  // Progressive filling: lowest fair level first; ties by resource id, so
  // runs are deterministic.
  using Entry = std::pair<double, std::int32_t>;  // (level, resource)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto level_of = [&](std::int32_t r) {
    return std::max(0.0, s.remaining[r]) / static_cast<double>(s.unfrozen[r]);
  };
  for (const std::int32_t r : s.touched) heap.emplace(level_of(r), r);
  while (!heap.empty()) {
    const auto [level, r] = heap.top();
    heap.pop();
    if (s.unfrozen[r] == 0 || level != level_of(r)) continue;  // stale entry
    const std::int32_t li = s.local[r];
    for (std::uint32_t i = s.flows_begin[li]; i < s.flows_begin[li + 1]; ++i) {
      const std::int32_t f = s.flows_on[i];
      if (s.frozen[f]) continue;
      s.frozen[f] = 1;
      rates[f] = level;
      for (const std::int32_t q : paths[f]) {
        s.remaining[q] -= level;
        if (--s.unfrozen[q] > 0 && q != r) heap.emplace(level_of(q), q);
      }
    }
  }
}

}  // namespace shardlab
