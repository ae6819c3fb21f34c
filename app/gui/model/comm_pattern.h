// The algorithm on the machine: a run's communication pattern as logical
// hops (who sends to whom, in which group), each laid along the physical
// route the router gives it, so the topology view can draw a ring crossing
// the slow links of a cube-mesh or a PCIe root complex.
//
//   ring 0 3 2 1 5 6 7 4 on a DGX-1:   hop 1: GPU0 -> GPU3 (one NVLink)
//                                      hop 4: GPU1 -> GPU5 (NVLink across)
//   double binary tree:  group "tree A" parent -> child edges, group "tree B"
//   all-to-all:          every ordered pair, one group
//   pipeline:            stage s -> s+1
//   3D (dp x pp x tp):   TP groups (a ring each), PP chains, DP groups
//   anything else:       the distinct sender -> receiver pairs of the plan
//
// Ranks are GPUs of the topology (rank r on GPU r). Pure, tested.
#pragma once

#include <string>
#include <vector>

#include "engine/algorithms/double_binary_tree.h"
#include "engine/algorithms/parallel_grid.h"
#include "engine/plan/plan.h"
#include "engine/topology/topology.h"

namespace shardlab::gui {

struct PatternHop {
  int from_rank = -1;
  int to_rank = -1;
  int group = 0;               // index into CommPattern::groups
  int order = 0;               // 1-based position within its group (a ring's hop number)
  Route route;                 // the physical route; no hops when there is none
};

struct PatternGroup {
  std::string name;            // "ring 0 3 2 1 5 6 7 4", "tree A", "TP group 1 = ranks 2,3"
  int kind = 0;                // colour family: 0 ring/tree A/TP, 1 tree B/PP, 2 DP, 3 mesh
  std::string family;          // a grid's groups: "TP groups", "PP chains", "DP groups"; else ""
  std::string members;         // its ranks, "2,3"
};

struct CommPattern {
  std::string title;           // "ring (auto order)", "double binary tree", ...
  std::vector<PatternGroup> groups;
  std::vector<PatternHop> hops;
  bool empty() const { return hops.empty(); }
  /// Every link direction some hop's route crosses (a link may be used by
  /// several hops): for tests and the view's "links used" line.
  std::vector<LinkHop> LinksUsed() const;
  /// The slowest hop's bottleneck GB/s (0 when there are no hops).
  Gbps SlowestGbps() const;
};

CommPattern RingPattern(const Topology& topology, const std::vector<int>& ring_order, const std::string& title);
/// Both trees of NCCL's double binary tree over `rank_at` (ring positions).
CommPattern DoubleTreePattern(const Topology& topology, const std::vector<int>& rank_at);
/// Every ordered pair of `ranks` ranks (all-to-all).
CommPattern MeshPattern(const Topology& topology, int ranks);
/// Stage s -> stage s+1 (a pipeline's forward order; backward runs it back).
CommPattern StageChainPattern(const Topology& topology, int stages);
/// A DP x PP x TP grid: each TP group as a ring, each PP chain, each DP
/// group as a ring.
CommPattern GridPattern(const Topology& topology, const ParallelGrid& grid);
/// The distinct sender -> receiver pairs of the plan's transfers.
CommPattern TransferPattern(const Topology& topology, const Plan& plan, const std::string& title);

}  // namespace shardlab::gui
