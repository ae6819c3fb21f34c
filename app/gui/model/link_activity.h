// LinkActivity: what the topology view animates at replay time t: the load
// of every link direction, and the transfers in flight with where along
// their route each one is.
//
//   transfer 0->3 (chunk C), route gpu0 -> nvswitch -> gpu3, 40% done
//   => dot at 40% of the route's length, labelled "C"; each link on the
//      route gets its rate added to its load in the direction it is crossed
//
// A transfer's rate is its bytes over its duration (the average the
// simulator gave it), spread over every link direction of its route.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "app/gui/model/timeline_store.h"
#include "engine/plan/plan.h"
#include "engine/topology/topology.h"

namespace shardlab::gui {

struct InFlight {
  int from_rank = 0;
  int to_rank = 0;
  int route = -1;              // index into LinkActivity's routes
  double progress = 0;         // 0..1 of the transfer's duration
  std::string label;           // chunk letter(s) "C"; "F3"/"B3" for a pipeline's
                               // activation/gradient of micro-batch 3; "AR1 RS·B" for
                               // a named collective's chunk B; else the phase
  std::string compact_label;   // what the dot says where dots crowd: the chunk
                               // letter of a named collective's transfer, else label
  Phase phase = Phase::kNone;
  int microbatch = -1;         // pipelines: whose activation or gradient
  int collective_seq = -1;     // the op's collective call, -1 for none
};

/// How the transfers of one collective call are named on the machine view
/// when a scenario runs several (a tensor-parallel layer's all-reduces).
struct CollectiveLabel {
  std::string tag;             // "AR1", "RS2"
  bool two_passes = false;     // an all-reduce: name its RS and AG passes too
};

class LinkActivity {
 public:
  /// Keeps a pointer to `topology` and `plan`, which must outlive it.
  /// `rank_to_gpu` maps ranks to topology GPU indices (empty: identity).
  LinkActivity(const Topology& topology, const Plan& plan, std::vector<int> rank_to_gpu = {});

  /// Recomputes loads and in-flight transfers at time `t_ns` from the
  /// store's Recv events (one per transfer). O(events started by t) at
  /// worst; uses the rows' sort order to skip finished ones.
  void Update(const TimelineStore& store, TimeNs t_ns);

  /// Load in GB/s of link `link` in direction a->b (forward) or b->a.
  double LoadGbps(int link, bool forward) const;
  /// Load as a fraction of the link's bandwidth (may exceed 1 only by rounding).
  double Utilization(int link, bool forward) const;
  const std::vector<InFlight>& in_flight() const { return in_flight_; }
  /// Names transfers of collective call `seq` by labels[seq] from the next
  /// Update on (an empty tag keeps the plain label).
  void SetCollectiveLabels(std::vector<CollectiveLabel> labels) { collective_labels_ = std::move(labels); }
  /// The route (node ids along it) of an in-flight transfer.
  const Route& route(int index) const { return routes_[static_cast<std::size_t>(index)]; }

 private:
  const Topology* topology_;
  const Plan* plan_;
  std::vector<int> rank_to_gpu_;
  std::vector<Route> routes_;                 // cached by (from, to) pair
  std::vector<int> route_index_;              // ranks*ranks, -1 = not yet
  std::vector<double> load_forward_gbps_;     // per link
  std::vector<double> load_backward_gbps_;
  std::vector<InFlight> in_flight_;
  std::vector<CollectiveLabel> collective_labels_;  // by collective_seq
};

/// Chunk letters as the seed texts write them: 0 -> "A", 25 -> "Z", 26 -> "AA".
std::string ChunkLetter(int chunk);

/// What a transfer's dot says: "F3" (an activation of micro-batch 3 moving
/// forward), "B3" (its gradient moving back), the chunk letter, or the phase.
std::string TransferLabel(const OpTags& tags);
/// The same for a transfer of a named collective: "AR1 RS·B" (chunk B
/// in the reduce-scatter pass of all-reduce AR1), "AG2·C" (chunk C of
/// all-gather AG2), "PP g1 F2" (micro-batch 2's activation between two
/// stages); TransferLabel(tags) when the tag is empty.
std::string TransferLabel(const OpTags& tags, const CollectiveLabel& collective);

}  // namespace shardlab::gui
