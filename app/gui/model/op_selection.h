// Linked views: what a click on a Gantt bar or a link selects, and what
// the other views then light up (the prepare half; the views draw it).
//
//   click a bar (GPU3 recv, chunk C)    ──► OpSelection{op = 812}
//        │  LinkUsage: the transfer's route, GPU2 -> nvswitch -> GPU3
//        ├─► topology view: those two link directions lit, each with its
//        │   load at the op's midpoint ("171 GB/s, 57%")
//        ├─► buffer view: chunk C of GPU3 outlined
//        └─► details: bytes, start, duration, achieved GB/s, the alpha-beta
//            formula with its numbers, the ops it waited for (click: follow)
//
//   click a link ──► OpSelection{link = 5}: the ops that crossed it,
//                    busiest (most bytes) first
//
// A transfer is one Send and one Recv with the same span; either selects
// the transfer, whose route runs from the sender's GPU to the receiver's.
// Ranks are GPUs of the topology (rank r on GPU r), as the topology view
// draws them. Pure C++, no ImGui: tests/gui_model clicks through it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/model/gantt_layout.h"
#include "app/gui/model/timeline_store.h"
#include "engine/plan/plan.h"
#include "engine/run/faults.h"
#include "engine/topology/topology.h"

namespace shardlab::gui {

/// One transfer crossing one direction of a link.
struct LinkCrossing {
  OpId op = kNoOp;             // the transfer's Recv
  std::int32_t from_rank = -1;
  std::int32_t to_rank = -1;
  bool forward = true;         // crosses the link a -> b
  Bytes bytes = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
};

/// Every transfer of a run with the links its route crosses, built once
/// from the events (any backend's, or a trace's).
class LinkUsage {
 public:
  LinkUsage(const Plan& plan, const Topology& topology, const TimelineStore& store);

  /// The link directions the op's transfer crosses, in route order; empty
  /// for an op that moves nothing between GPUs (compute, a library call,
  /// a rank without a GPU). A Send answers for its Recv.
  const std::vector<LinkHop>& RouteOf(OpId op) const;
  /// The transfers that crossed link `link` (either direction), most bytes
  /// first, then the longer, then the lower op id.
  std::vector<LinkCrossing> CrossingsOf(int link) const;
  /// GB/s on one direction of a link at time t: each transfer in flight
  /// over it adds its bytes over its duration (as the topology view's
  /// colours do).
  double LoadGbpsAt(int link, bool forward, TimeNs t_ns) const;
  /// The op that stands for a transfer (its Recv) or the op itself.
  OpId Unit(OpId op) const;

 private:
  const Plan* plan_;
  std::vector<int> route_of_unit_;                  // by op id: index into routes_, -1 none
  std::vector<std::vector<LinkHop>> routes_;
  std::vector<std::vector<LinkCrossing>> by_link_;  // by link id, sorted by start
};

/// What is selected: an op, or a link, or nothing.
struct OpSelection {
  OpId op = kNoOp;
  int link = -1;
  bool empty() const { return op == kNoOp && link < 0; }
  void Clear() { *this = OpSelection{}; }
};

/// A link on the selected op's route, with its load at the op's midpoint.
struct LitLink {
  int link = -1;
  bool forward = true;
  double load_gbps = 0;
  double utilization = 0;      // of the link's bandwidth
};

/// An op the selected one waited for.
struct WaitedFor {
  OpId op = kNoOp;
  TimeNs end_ns = 0;
  bool dependency = true;      // a dependency (else the op before it on its lane)
  bool last = false;           // the one that ended last: what it really waited for
  std::string label;           // "op 811 recv GPU3 <- GPU2 (RS·B)"
};

struct OpDetails {
  OpId op = kNoOp;
  std::string title;           // the plan's long label of the op
  std::string where;           // "GPU2 -> GPU3" or "GPU3, compute lane"
  Bytes bytes = 0;
  TimeNs start_ns = 0;
  TimeNs duration_ns = 0;
  double achieved_gbps = 0;    // bytes / duration; 0 when it moves nothing
  /// The alpha-beta formula (or the roofline of a compute op) with its
  /// numbers: "t = α + n/β = 2.00 µs + 8.39 MB / 24.0 GB/s = 352 µs".
  std::string formula;
  TimeNs formula_ns = 0;       // the formula's time; 0 when there is none
  std::vector<LitLink> route;  // the links it crossed
  std::vector<WaitedFor> waited_for;
};

/// The op under pixel x of Gantt row `row` (a click), or kNoOp (a folded
/// block, empty space, an op the cursor has not reached).
OpId OpAtGanttPoint(const TimelineStore& store, const GanttFrame& frame, int row, double x_px);

/// The links a click on `op` lights: its route, with each link's load at
/// the op's midpoint. Empty for an op that crosses none.
std::vector<LitLink> LightRoute(const LinkUsage& usage, const Topology& topology, const TimelineStore& store,
                                OpId op);

/// The event of `op` in the store (a linear search per row; once per click).
const Event* FindEvent(const TimelineStore& store, OpId op);

/// Everything the details panel says about `op`. `faults` (may be null):
/// a slow sender's transfers expect FACTOR times the formula.
OpDetails DescribeOp(const Plan& plan, const Topology& topology, const TimelineStore& store,
                     const LinkUsage& usage, OpId op, const Faults* faults = nullptr);

/// Link `link` in words: "NVLink2 x2 GPU0 <-> GPU3, 48.0 GB/s per direction".
std::string LinkWords(const Topology& topology, int link);

}  // namespace shardlab::gui
