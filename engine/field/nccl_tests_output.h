// The output of an nccl-tests benchmark (all_reduce_perf, all_gather_perf,
// ...): the parameters, the ranks and their devices, and one table per run.
//
//   # nThread 1 nGpus 1 minBytes 64 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ...
//   #  Rank  0 Group  0 Pid   1411 on inst-ks8ls-comp device  0 [0x0f] NVIDIA A100-SXM4-40GB
//   #                                                 out-of-place                  in-place
//   #       size    count   type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
//   #        (B) (elements)                          (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
//            64       16   float     sum      -1    38.75    0.00    0.00      0    38.62    0.00    0.00      0
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 24.2272
//
// Two layouts are read, by the header's column names: the current one (a
// root column, `#wrong` counts) and the older one (no root, an `error`
// column holding the largest error, often N/A), and the older device line
// without `Group`. Lines may carry launcher tags (`[1,0]<stdout>:`), and
// NCCL's own INFO lines may sit between the rows. A table that the file
// ends inside (no `# Avg bus bandwidth` after its rows) is an error that
// says where it stopped; a row whose columns do not fit its header is
// warned about and skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/json.h"
#include "engine/field/field_file.h"

namespace shardlab {

struct NcclTestsHalf {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::optional<double> wrong;  // #wrong (a count) or error (a size); nullopt for N/A
};

struct NcclTestsRow {
  std::int64_t size_bytes = 0;
  std::int64_t count = 0;
  std::string type, redop;
  std::optional<int> root;  // the root column, when the layout has one
  NcclTestsHalf out_of_place, in_place;
  int line = 0;
};

struct NcclTestsTable {
  std::string wrong_column;  // "#wrong" or "error"
  bool has_root = false;
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw_gbps;  // from "# Avg bus bandwidth"
  int line = 0;                          // of its header
};

struct NcclTestsDevice {
  int rank = -1;
  int group = -1;
  long pid = -1;
  std::string host;
  int device = -1;
  std::string busid;  // "0x0f", "0000:04:00"
  std::string name;   // "NVIDIA A100-SXM4-40GB"
  int line = 0;
};

struct NcclTestsOutput {
  std::string parameters;  // the "# nThread ..." line, without '#'
  std::vector<NcclTestsDevice> devices;
  std::vector<NcclTestsTable> tables;
  std::vector<std::string> warnings;

  int rows() const;
  /// Distinct ranks of the device lines.
  int ranks() const;
  /// Distinct hosts of the device lines.
  std::vector<std::string> hosts() const;
};

struct NcclTestsReadOptions {
  /// Warn about lines that are neither nccl-tests' nor NCCL's (off inside a log,
  /// where the application's own output is expected).
  bool warn_unfamiliar = true;
};

/// Reads every nccl-tests line of `file` (others skipped as the options say).
/// Throws Error "file:line: what" for a truncated table.
NcclTestsOutput ReadNcclTestsOutput(const FieldFile& file, const NcclTestsReadOptions& options = {});

/// Whether `head` holds nccl-tests' own lines (a table header or the parameter line).
bool LooksLikeNcclTestsOutput(std::string_view head);

/// The tables as `inspect` prints them: size, time and busbw per row, out-of-place and in-place.
std::string NcclTestsTablesText(const NcclTestsOutput& output);

/// The `tables` and `rows` fields of `inspect --json`, and with `devices` also
/// `ranks`, `hosts` and `devices`.
void WriteNcclTestsJson(JsonWriter& json, const NcclTestsOutput& output, bool devices);

}  // namespace shardlab
