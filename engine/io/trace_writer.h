// Chrome Trace Event Format export: every run opens in Perfetto
// (ui.perfetto.dev) and chrome://tracing.
//
//   GPU 0        compute  [fwd mb0]          [fwd mb1]
//                send       [send c3 →1]─┐
//   GPU 1        recv                    └─►[recv+ c3 ←0]
//   ...
//   Links        gpu0→nvswitch NVLink3 GB/s  ▁▁▇▇▇▁▁▇▇▁
//
// One process per rank ("GPU r"; "rank r (GPU g)" when ranks share or skip
// GPUs), one thread per lane. Each event becomes a complete ("X") slice with
// its op's facts in args; each transfer whose Send and Recv both ran gets a
// flow arrow ("s" inside the Send slice, "f" with "bp":"e" inside the Recv
// slice, id = the Send's op id). A "Links" process holds one counter per link direction
// that carried traffic: the GB/s in flight over time, where each transfer
// adds bytes/duration on every hop of its route for as long as it lasts.
// Only the 64 busiest directions (by bytes) get a counter; otherData says
// how many were left out.
//
// Pids are rank + 1 and tids lie in a range of their own, because Perfetto
// treats pid 0 as the idle process and names threads by tid alone.
//
// Each slice's args carry the event's facts (op, kind, step, seq, bytes,
// peer, clock, tags), and otherData the plan's name and size, the clock and
// the topology as a topology file, so engine/io/trace_reader.h can read a
// trace back into the same views.
//
// The file is written as it goes (no document tree): four million events
// cost memory only for one flag per op and one counter track's change points.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "engine/core/event.h"
#include "engine/plan/plan.h"
#include "engine/topology/this_machine.h"
#include "engine/topology/topology.h"

namespace shardlab {

struct TraceInfo {
  std::string title;               // shown in otherData, e.g. the CLI command
  std::string backend;             // "sim", "cuda", ...
  std::vector<int> rank_to_gpu;    // GPU index of each rank; empty = rank r on GPU r
  std::vector<std::string> rank_labels;  // appended to each rank's process name ("dp0 pp1 tp1")
  /// The machine the run used (GPU model, count, placement, profile), as
  /// otherData.machine: what `--topology this` rebuilds the model from.
  std::optional<MachineRecord> machine;
  /// otherData.plan_settings: the scenario and the parameters the run set
  /// ("pipeline schedule=1f1b stages=4"), from which `compare TRACE
  /// --model` rebuilds the plan (engine/compare/model_trace.h); "" = none.
  std::string plan_settings;
  /// The CPU's enqueue calls (Backend::host_lane): a "host (enqueue)"
  /// thread per rank, slices of category "host" (clock "host"; the
  /// simulator's modelled issues: "simulated") that the reader keeps
  /// beside the events (LoadedTrace::host_lane).
  std::vector<HostEnqueueSpan> host_lane;
};

/// Writes `events` of a run of `plan` on `topology` as a Chrome trace JSON
/// object. Events may come in any order; ones whose op is not in the plan
/// still get a slice, without tags, flow or link load.
void WriteChromeTrace(std::ostream& out, const Plan& plan, const Topology& topology,
                      std::span<const Event> events, const TraceInfo& info);

/// The same into `path`, through `path`.tmp renamed into place, so a failed
/// write never leaves half a trace. Throws shardlab::Error (kRuntime) naming
/// the path and the system's reason.
void WriteChromeTraceFile(const std::string& path, const Plan& plan, const Topology& topology,
                          std::span<const Event> events, const TraceInfo& info);

}  // namespace shardlab
