// Two runs of one plan, op by op: where the model (the simulator) and the
// measurement (a GPU) agree, where they do not, and why.
//
//   trace A ─┐                     per op:    duration A, duration B, error
//            ├─► RunRecord ×2 ──►  per phase / step / stage:  span A, span B, ratio
//   trace B ─┘   (op id, kind,     totals:    communication, compute, idle
//   or a live     rank, bytes,     explanation: the (kind, size) group of ops
//   run           start, end)                   whose time differs most, in words
//
// Same plan means the same ops by id with the same kind, rank, peer and
// bytes; anything else is refused with the first difference, because an op
// of one run has no counterpart in the other and every number below would
// compare unlike things.
//
// The numbers, and what they mean:
//  - a row's time is its span: the first start to the last end of its ops;
//    ratio = B / A; error = (B - A) / A.
//  - op error of a row: the mean of |B - A| / A over its ops' durations. A
//    model that runs eight copies at once at an eighth of the bandwidth
//    each, where the GPU ran them one after another, has large op errors
//    and the right span: the two columns say different things on purpose.
//  - communication: the summed durations of receives and library
//    collectives (a transfer is counted once, at its receiver); compute: of
//    compute, copy and reduce ops; idle: summed over ranks, the time within
//    the run's span when a rank has no op running (the bubble of a
//    pipeline).
//  - explanation: ops grouped by kind (a receive that reduces is its own
//    kind) and size (bytes rounded down to a power of two); the group whose
//    summed durations differ most is named with both mean times, its share
//    of the gap, and the cause its numbers point to: concurrency (one side
//    overlaps the ops, the other serialises them), a fixed per-op cost
//    (small ops), or the rate (bytes over time).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/core/event.h"
#include "engine/plan/plan.h"

namespace shardlab {

struct LoadedTrace;

/// One op of a run, with the facts that identify it and its time.
struct RunOp {
  std::int32_t id = -1;          // op id in the plan (a trace's written op id)
  OpKind kind = OpKind::kCompute;
  Lane lane = Lane::kCompute;
  ReduceOp reduce = ReduceOp::kNone;
  Phase phase = Phase::kNone;
  std::int32_t rank = 0;
  std::int32_t peer = -1;
  std::int32_t step = 0;
  std::int32_t microbatch = -1;
  std::int32_t collective_seq = -1;
  Bytes bytes = 0;
  Flops flops = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  TimeNs duration_ns() const { return end_ns - start_ns; }
};

/// A run of a plan: its ops sorted by id, each id once.
struct RunRecord {
  std::string source;      // the file, or "simulator"
  std::string clock;       // "simulated", "cuda-event", ...
  std::string backend;     // "sim", "cuda", ...
  std::string plan_name;
  std::int32_t num_ranks = 0;
  std::vector<RunOp> ops;

  /// "cuda-event" or "simulated", with the source when set: how tables name it.
  std::string Label() const;
  bool simulated() const { return clock == "simulated"; }
};

/// Which run is A, the reference, for every front end (`shardlab-cli
/// compare`, the app's overlay): the measurement. True when `first` is
/// simulated and `second` measured, so the two swap (A = measured, B = the
/// model); two runs of one kind keep their order.
inline bool SwapForMeasuredFirst(const RunRecord& first, const RunRecord& second) {
  return first.simulated() && !second.simulated();
}

/// The ops of a trace (by their written op ids). Throws Error when an op id
/// is missing or appears twice ("op 17 appears twice").
RunRecord RunFromTrace(const LoadedTrace& trace);

/// The ops of a live run: `events[i].op` indexes `plan.ops`.
RunRecord RunFromEvents(const Plan& plan, std::span<const Event> events, const std::string& source,
                        const std::string& backend);

/// The first way `b` is not a run of `a`'s plan, as one sentence naming
/// the op ("op 0: A has send of 8 MiB on rank 0 (peer 1), B has compute of
/// 8.76 MiB on rank 0"); empty when the plans are the same.
std::string FirstPlanDifference(const RunRecord& a, const RunRecord& b);

/// A row of a table: a group of ops on both sides.
struct CompareRow {
  std::string name;        // "reduce-scatter", "step 3", "stage 1", "communication"
  std::int64_t ops = 0;
  TimeNs a_ns = 0;         // span (rows) or summed time (totals) of run A
  TimeNs b_ns = 0;
  double op_error = 0;     // mean |B - A| / A over the ops' durations (0 for idle)
  double ratio() const { return a_ns > 0 ? b_ns / a_ns : 0.0; }
  double error() const { return a_ns > 0 ? (b_ns - a_ns) / a_ns : 0.0; }
};

/// The error of one op, for hover text and colour.
struct OpError {
  std::int32_t id = -1;
  TimeNs a_ns = 0;         // durations
  TimeNs b_ns = 0;
  double error = 0;        // (B - A) / A; 0 when A took no time
};

/// Ops of one kind and size, with what both runs did with them.
struct ErrorGroup {
  std::string name;        // "recv+ of 8 MiB"
  OpKind kind = OpKind::kCompute;
  ReduceOp reduce = ReduceOp::kNone;
  Bytes size_bytes = 0;    // the group's bytes, rounded down to a power of two
  Bytes mean_bytes = 0;
  Flops mean_flops = 0;
  std::int64_t ops = 0;
  TimeNs a_ns = 0;         // summed durations
  TimeNs b_ns = 0;
  double a_concurrency = 1;  // summed durations / time covered by the group's ops
  double b_concurrency = 1;
  TimeNs gap_ns() const { return b_ns - a_ns; }
};

struct Comparison {
  std::string a_label, b_label;
  std::string plan_name;
  CompareRow run;                    // the whole run's span
  std::vector<CompareRow> phases;    // by the ops' phase tag, in order of first start in A
  std::vector<CompareRow> steps;     // per logical step, for collectives (ops with a seq)
  std::vector<CompareRow> stages;    // per rank, for pipelines (ops with a micro-batch)
  CompareRow communication, compute, idle;
  TimeNs a_gaps_ns = 0, b_gaps_ns = 0;  // time within the span when no op of any rank runs
  std::vector<OpError> ops;          // sorted by id, as the runs' ops
  std::vector<ErrorGroup> groups;    // largest |gap| first
  std::string explanation;           // sentences naming the biggest contributor
};

/// Compares two runs of one plan. Throws Error (kInvalidInput) with
/// FirstPlanDifference when the plans differ.
Comparison CompareRuns(const RunRecord& a, const RunRecord& b);

/// The comparison as the CLI prints it (tables, totals, explanation), ending
/// with one line of fixed shape for scripts:
/// "# total: A 1580.9 us, B 588.3 us, B/A 0.3721" (the run's spans).
std::string FormatComparison(const Comparison& comparison);

/// The comparison as a JSON object (every row, every group; ops only when
/// `with_ops`).
std::string ComparisonJson(const Comparison& comparison, bool with_ops);

}  // namespace shardlab
