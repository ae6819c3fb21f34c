// FlowNetwork: the simulator's model of bandwidth sharing.
//
//   flow A ──► [gpu0→sw] ──► [sw→gpu1]        each bracket is a resource:
//   flow B ──► [gpu2→sw] ──► [sw→gpu1]        one direction of a link, or a
//                                  ▲           node with a forward capacity
//                       A and B share it: each gets half
//
// A flow moves its bytes as a fluid. Its rate is the smallest fair share
// along its path: min over its resources of capacity / active flows there.
// This is simpler than max-min fairness (a flow held back elsewhere does not
// hand its unused share to others), but it is exact for the cases the labs
// teach: equal flows on a shared bus, one flow per link in a ring, and it
// never oversubscribes a resource. Rates change only when a flow starts or
// ends, and only for flows that share a resource with it, so the cost of an
// event is the number of flows it touches, not the number in flight.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

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
  void CollectNeighbours(std::span<const std::int32_t> resources, std::vector<std::int32_t>& out);
  void Recompute(TimeNs now, std::int32_t flow);

  std::vector<Gbps> capacity_;
  std::vector<std::vector<std::int32_t>> on_resource_;  // active flows per resource
  std::vector<Flow> flows_;
  std::vector<std::int32_t> free_;
  std::uint32_t stamp_ = 0;
  std::size_t active_count_ = 0;
};

}  // namespace shardlab
