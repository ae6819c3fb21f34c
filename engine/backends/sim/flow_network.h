// FlowNetwork: the simulator's model of bandwidth sharing.
//
//   flow A ──► [gpu0→sw] ──► [sw→gpu1]        each bracket is a resource:
//   flow B ──► [gpu2→sw] ──► [sw→gpu1]        one direction of a link, a
//                                  ▲           node with a forward capacity,
//                       A and B share it       a GPU's memory system
//
// A flow moves its bytes as a fluid. Rates are max-min fair (water-filling,
// max_min_fair.h): a flow held back on one resource hands the share it
// cannot use on the others to the flows there, and no resource is ever
// oversubscribed. For equal flows on a shared bus, or one flow per link in
// a ring, that is the same as capacity / flows.
//
// Rates change only when a flow starts or ends, and only inside the
// connected component of flows that share resources with it (directly or
// through other flows): that component is re-filled, and only flows whose
// rate really changed are re-timed. A ring's flows never share a link, so
// each event costs its own path; the cost is near-linear in ops.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backends/sim/max_min_fair.h"
#include "engine/core/units.h"

namespace shardlab {

class FlowNetwork {
 public:
  /// Capacities in GB/s (== bytes per ns) of every resource.
  void Reset(std::vector<Gbps> capacities);

  /// Starts a flow of `bytes` over `resources` (a view that must stay valid
  /// while the flow lives). Returns its id; the flows whose rate changed
  /// (including the new one) are appended to `changed`.
  std::int32_t Add(TimeNs now, double bytes, std::span<const std::int32_t> resources,
                   std::vector<std::int32_t>& changed);

  /// Ends a flow; flows whose rate changed are appended to `changed`.
  void Remove(TimeNs now, std::int32_t flow, std::vector<std::int32_t>& changed);

  /// When the flow will finish at its current rate.
  TimeNs FinishTime(std::int32_t flow) const;
  /// Bumped each time the flow's rate changes (for lazy heap deletion).
  std::uint32_t version(std::int32_t flow) const { return flows_[flow].version; }
  std::size_t active_flows() const { return active_count_; }

 private:
  struct Flow {
    double remaining = 0;  // bytes, as of last_ns
    double rate = 0;       // bytes per ns
    TimeNs last_ns = 0;
    std::span<const std::int32_t> resources;
    std::uint32_t version = 0;
    std::uint32_t stamp = 0;
    bool active = false;
  };
  // Collects into component_ the active flows connected to `seeds` and to
  // the flows on `seed_resources`, re-fills them and re-times those whose
  // rate changed (`fresh`: a flow that has no rate yet, always re-timed).
  void Reshare(TimeNs now, std::int32_t fresh, std::span<const std::int32_t> seed_resources,
               std::vector<std::int32_t>& changed);
  void Retime(TimeNs now, std::int32_t flow, double rate);

  std::vector<Gbps> capacity_;
  std::vector<std::vector<std::int32_t>> on_resource_;  // active flows per resource
  std::vector<std::uint32_t> resource_stamp_;
  std::vector<Flow> flows_;
  std::vector<std::int32_t> free_;
  std::uint32_t stamp_ = 0;
  std::size_t active_count_ = 0;
  // Working memory of Reshare.
  std::vector<std::int32_t> component_;
  std::vector<std::int32_t> frontier_;
  std::vector<std::span<const std::int32_t>> paths_;
  std::vector<double> rates_;
  MaxMinScratch scratch_;
};

}  // namespace shardlab
