// The critical path of a run: the chain of ops that sets its end time,
// read off the events of any backend.
//
//   rank 0  |F0|F1|....|B1|B0|          the last op to end is B0 on rank 0;
//   rank 1     |F0|F1|B1|B0|            it started when its input arrived
//                 ^  send ─┘            (a dependency), which started when
//                                       rank 1's B0 ended, ... back to time 0.
//
// From the op that ends last, each step goes back to what it waited for:
// the dependency (for a Recv, also its Send's dependencies) or the op
// before it on its own lane (a stream runs in order) that ended latest, no
// later than the op started. Ties go to a dependency, then the lower op
// id, so the path is the same on every run of the same events.
//
// The path's time splits into four parts that add up to the run's end:
//   compute        compute, reduce and copy ops on the path
//   communication  transfers and collective calls, at the speed of their route
//                  (latency + bytes / bottleneck bandwidth) when the topology is given
//   link wait      what a transfer took beyond that: it shared a link
//   idle           gaps on the path where nothing on it ran (waiting for
//                  the host, a launch, the start of the run)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/event.h"
#include "engine/plan/plan.h"
#include "engine/topology/topology.h"

namespace shardlab {

struct CriticalPathStep {
  OpId op = kNoOp;         // for a transfer: its Recv (the event the Send shares)
  std::int32_t rank = -1;
  std::int32_t peer = -1;  // the sender of a transfer, else -1
  OpKind kind = OpKind::kCompute;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  TimeNs idle_before_ns = 0;  // gap between what it waited for and its start
  TimeNs link_wait_ns = 0;    // a transfer's time beyond its route's speed
  bool after_dependency = false;  // reached from a dependency (else lane order or the start)
};

struct CriticalPathHop {
  std::int32_t src = -1;
  std::int32_t dst = -1;
  TimeNs ns = 0;  // time of this hop's transfers on the path
};

struct CriticalPath {
  std::vector<CriticalPathStep> steps;  // in time order; empty for a run without events
  TimeNs end_ns = 0;                    // the run's end: the last op's end
  TimeNs compute_ns = 0;
  TimeNs communication_ns = 0;
  TimeNs link_wait_ns = 0;
  TimeNs idle_ns = 0;
  /// The rank whose ops take the most time on the path (a pipeline's
  /// bounding stage), and that time; -1 when the path is empty.
  std::int32_t bounding_rank = -1;
  TimeNs bounding_rank_ns = 0;
  /// The sender -> receiver pair with the most transfer time on the path
  /// (a ring's slowest hop); src -1 when the path has no transfer.
  CriticalPathHop slowest_hop;
};

/// The critical path of `events` (one per op of `plan`, as any backend
/// reports them; ops without an event are skipped). With `topology`, a
/// transfer's time splits into communication and link wait by its route
/// (ranks index topology.gpus); without, all of it is communication.
/// Throws Error when an event names an op the plan does not have.
CriticalPath FindCriticalPath(const Plan& plan, const std::vector<Event>& events,
                              const Topology* topology = nullptr);

/// One line per part: "compute 1.20 ms (40%) · communication ... · link wait
/// ... · idle ...", then the bounding rank and the slowest hop.
std::string FormatCriticalPath(const CriticalPath& path);

}  // namespace shardlab
