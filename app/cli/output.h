// How shardlab-cli prints results: the nccl-tests table (the field's common
// language), the "# ..." header lines around it, and the JSON objects of
// --json. Humans read the table; scripts read the JSON.
//
//   #       size         count      type   redop    root     time   algbw   busbw  #wrong
//   #        (B)    (elements)                               (us)  (GB/s)  (GB/s)
//       67108864      16777216     float     sum      -1   1790.5   37.48   65.59       0
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "app/common/args.h"

#include "app/cli/collective_run.h"
#include "engine/run/critical_path.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/core/json.h"
#include "engine/core/units.h"

namespace shardlab::cli {

/// One line of the table.
struct TableRow {
  Bytes size_bytes = 0;
  std::int64_t count = 0;
  std::string type;                   // "float"
  std::string redop;                  // "sum", or "none" for collectives that do not reduce
  int root = -1;                      // -1 for collectives without a root
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::optional<std::int64_t> wrong;  // nullopt: not checked ("N/A")
  std::string nccl_model;             // the simulator's NCCL choice ("ring/LL"), or empty
};

TableRow RowFor(const CollectiveOutcome& outcome);
/// With `nccl_model`, one more column: the algorithm/protocol the
/// simulator's NCCL model chose for the row (--algo nccl on sim).
void PrintTableHeader(std::ostream& out, bool nccl_model = false);
void PrintTableRow(std::ostream& out, const TableRow& row);

/// "ring all-reduce, 8 ranks" (+ ", root 2" for rooted kinds).
std::string DescribeCollective(const CollectiveSetup& setup);

/// "0 1 2 3 (auto), slowest hop 300 GB/s per direction" for the header.
std::string DescribeRing(const CollectiveSetup& setup);

/// "correct (max_abs_err 0, 134217728 values checked)", "WRONG (...)" or
/// "not checked (timing only ...)".
std::string ResultText(const CollectiveOutcome& outcome);

/// The --json fields that the flags decide (no braces): scenario, algo,
/// ranks, dtype, redop, root, backend, topology, ring_order, seed, timing_only.
void WriteSetupFields(JsonWriter& json, const CollectiveSetup& setup);

/// The --json fields of one measured size: bytes, count, time_us (the
/// average), iterations {warmup, iters, average_us, best_us}, algbw_gbps, busbw_gbps, steps, ops, events, clock, checked, correct,
/// max_abs_err, wrong, not_checked_reason (null when checked).
void WriteOutcomeFields(JsonWriter& json, const CollectiveOutcome& outcome);

/// Checks that --trace FILE can be written, before a long run rather than
/// after it; appending leaves an old trace intact. Throws UsageError.
void CheckTracePath(const ParsedArgs& args, const std::string& path);

/// Each line of `text` as a "# " comment line.
std::string CommentLines(const std::string& text);

/// "critical_path": {end_us, compute_us, communication_us, link_wait_us,
/// idle_us, bounding_rank, slowest_hop, ops: [{op, rank, peer, kind,
/// start_us, end_us, idle_before_us, link_wait_us}]}.
void WriteCriticalPathJson(JsonWriter& json, const CriticalPath& path);

/// Runs a training command's plan to the end into `sink`; a run that did not
/// finish throws Error(kRuntime) "the run failed: ..." (exit 1).
void RunToEndOrThrow(Executor& executor, VectorSink& sink);

/// Writes the Chrome trace of a finished run, titled "PLAN on TOPOLOGY
/// (BACKEND)"; `rank_labels` (optional) name each rank's process.
void WriteRunTrace(const std::string& path, const Plan& plan, const Topology& topology,
                   std::span<const Event> events, const std::string& topology_name,
                   const std::string& backend, std::vector<std::string> rank_labels = {},
                   std::vector<HostEnqueueSpan> host_lane = {},
                   std::optional<MachineRecord> machine = std::nullopt, std::string plan_settings = {});

}  // namespace shardlab::cli
