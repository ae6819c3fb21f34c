// Max-min fair sharing (water-filling) of capacities among flows.
//
//   capacity:   link A→B 100 GB/s      link B→C 20 GB/s
//   flows:      f0 crosses A→B and B→C;  f1, f2 cross A→B only
//
//   the level rises for all unfrozen flows at once; the resource whose
//   remaining capacity / unfrozen flows is lowest fills first:
//     B→C: 20 / 1 = 20  <  A→B: 100 / 3 = 33.3  ->  f0 frozen at 20
//     A→B: (100 - 20) / 2 = 40                  ->  f1, f2 frozen at 40
//   an equal split per resource (capacity / flows) would give f1 and f2
//   only 33.3 and leave 26.7 GB/s of A→B idle: the share f0 cannot use
//   (it is held back on B→C) is handed to the others.
//
// Every resource is just a capacity a flow crosses: one direction of a
// link, a switch's forwarding limit, a GPU's memory system. The solver
// knows nothing else.
//
// Progressive filling, with the resources in a min-heap keyed by their fair
// level (remaining capacity / unfrozen flows): pop the lowest, freeze every
// unfrozen flow on it at that level, take their rates off the other
// resources they cross, push those resources' new levels (stale entries are
// skipped when popped). Cost O((P + R) log R) for P path entries and R
// resources, per call. The result: no resource is oversubscribed, and every
// flow crosses at least one full resource on which no flow gets more than
// it (its bottleneck) — the definition of max-min fairness.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/units.h"

namespace shardlab {

/// Reusable working memory of MaxMinFairRates (sized to the resource
/// count on first use; nothing is cleared per call but what it touched).
struct MaxMinScratch {
  std::vector<double> remaining;       // per resource: capacity not yet given out
  std::vector<std::int32_t> unfrozen;  // per resource: flows still rising
  std::vector<std::uint32_t> stamp;    // per resource: == call id when touched
  std::vector<std::uint32_t> flows_begin;  // local CSR: resource -> flows crossing it
  std::vector<std::int32_t> flows_on;
  std::vector<std::int32_t> touched;   // resources of this call
  std::vector<std::int32_t> local;     // per resource: index in touched
  std::vector<char> frozen;            // per flow of this call
  std::uint32_t call = 0;
};

/// Max-min fair rates of `paths.size()` flows; flow i crosses the resources
/// paths[i] (ids into `capacity`, each at most once per path). A flow with
/// an empty path gets an infinite rate. Rates are written to `rates`
/// (resized to the flow count). `paths` may be any subset of the flows in a
/// network as long as it is closed: every other flow on a resource it
/// touches must be included (the sim passes connected components).
void MaxMinFairRates(std::span<const Gbps> capacity,
                     std::span<const std::span<const std::int32_t>> paths,
                     std::vector<double>& rates, MaxMinScratch& scratch);

}  // namespace shardlab
