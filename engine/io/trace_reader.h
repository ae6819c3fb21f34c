// Reads a Chrome trace that ShardLab wrote (trace_writer.h) back into a
// run the app's views can show: File > Open trace, so a run recorded on a
// cluster (any backend) is studied on a laptop.
//
//   trace.json ── JsonParser (capped) ──► slices "X"  ──► Events + one Op each
//                                          otherData   ──► plan name, ranks, steps,
//                                                           clock, backend, topology file
//
// What comes back, and why this shape:
//  - Events exactly as written: rank (pid - 1), lane (from the tid), kind,
//    peer, step, collective seq, bytes, clock, status, start and end (from
//    ts and dur in microseconds, to the writer's 9 significant digits).
//  - A Plan rebuilt from the slices, one op per event, so the views that
//    read an op's tags (phase from the slice's category, chunk,
//    micro-batch, layer, reduction, FLOPs) work unchanged. Ops are numbered
//    by event (events[i].op == i); the written op id is kept in
//    original_op. The plan has no buffers or dependencies: a trace records
//    what ran, not the data, so it cannot be re-run or checked.
//  - The collective calls' notes (args.call, call_what, call_passes), so
//    the ops' labels (op_label.h) read back are the ones written.
//  - The host lane (category "host" slices) beside the events, not among
//    them: a trace with one reads back to the same events as without.
//  - The Topology from otherData.topology_file (the writer embeds the
//    machine as a topology file), so the topology view is the recorded
//    machine even where its file or preset does not exist; older traces
//    that only name it get the preset of that name.
// Anything else is refused with one message naming the file and what is
// wrong: a Chrome trace from another tool ("not a ShardLab trace: ..."),
// broken JSON ("run.json:3:17: ..."), a slice that is not on a rank's lane.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/event.h"
#include "engine/plan/plan.h"
#include "engine/topology/this_machine.h"
#include "engine/topology/topology.h"

namespace shardlab {

struct LoadedTrace {
  std::string source;        // the path (or name) it was read from
  std::string title;         // otherData.title, e.g. the CLI command's run
  std::string backend;       // "sim", "cuda", "mpi", ...
  std::string clock;         // "simulated", "cuda-event", "mixed", ...
  std::string topology_note; // how the topology was found, when not embedded
  Plan plan;                 // one op per event, the calls' notes; no buffers, no dependencies
  Topology topology;
  std::vector<Event> events; // in file order; events[i].op == i
  std::vector<std::int32_t> original_op;  // the op id each event had when written
  /// otherData.machine: the machine the run used; absent in traces written
  /// before ShardLab recorded it. Its placement lets ranks outnumber the
  /// topology's GPUs (virtual devices).
  std::optional<MachineRecord> machine;
  /// otherData.plan_settings: the scenario and parameters the run set
  /// ("pipeline stages=4"); "" in traces written before ShardLab recorded them.
  std::string plan_settings;
  /// The host lane (the writer's "host (enqueue)" threads, slices of
  /// category "host"): a real run's CPU enqueue calls, or the simulator's
  /// modelled issues. unit: the event index of the op it issued (a
  /// transfer's send), -1 for a whole-plan graph launch or an op the trace
  /// does not hold. Not events: the views show them on rows of their own.
  std::vector<HostEnqueueSpan> host_lane;
  std::vector<std::string> host_names;  // each span's slice name, as written
  std::string host_clock;               // "host" or "simulated"; "" with no host lane
};

/// Caps: a trace file larger than this is refused before it is read.
inline constexpr std::size_t kMaxTraceFileBytes = std::size_t{1} << 30;
/// Ranks and steps above these are taken for a broken file.
inline constexpr int kMaxTraceRanks = 1 << 16;
inline constexpr int kMaxTraceSteps = 1 << 24;
/// Collective calls with a name (args.call) must number below this.
inline constexpr std::size_t kMaxTraceCalls = std::size_t{1} << 20;

/// Reads trace text; `source` names it in errors. Throws shardlab::Error.
LoadedTrace ReadChromeTrace(std::string_view text, const std::string& source);

/// Reads the file at `path`. Throws shardlab::Error naming the path.
LoadedTrace ReadChromeTraceFile(const std::string& path);

}  // namespace shardlab
