// `nvidia-smi topo -m`: the matrix of how each pair of devices connects.
//
//           GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
//   GPU0     X      NV12    PXB     0-31,64-95      0               N/A
//   GPU1    NV12     X      SYS     0-31,64-95      0               N/A
//   NIC0    PXB     SYS      X
//
//   Legend:
//     X    = Self
//     SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes
//     ...
//     NV#  = Connection traversing a bonded set of # NVLinks
//   NIC Legend:
//     NIC0: mlx5_0
//
// Columns are split on white space (the tool writes tabs, copies from web
// pages have spaces); the device columns are the header's names before the
// affinity columns (GPU0.., NIC0.., or mlx5_0.. in versions before the NIC
// legend), and each needs its row, in the header's order: a matrix with
// fewer rows or cells stopped early (truncated).
// Cells are X, NV# (# bonded NVLinks), PIX, PXB, PHB, NODE, SYS (and the
// older SOC for SYS); others are warned about and kept. Terminal colour
// escapes are dropped. Nothing here names a GPU model: `topo -m` gives none.
#pragma once

#include <string>
#include <vector>

#include "engine/field/field_file.h"

namespace shardlab {

struct SmiTopology {
  std::string source;
  std::vector<std::string> devices;               // column and row names, in order ("GPU0", "NIC0")
  std::vector<std::vector<std::string>> matrix;   // [row][column], e.g. "NV12", "SYS", "X"
  std::vector<std::string> affinity_columns;      // "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"
  std::vector<std::vector<std::string>> affinity;  // [row][affinity column]; rows may have fewer
  std::vector<std::pair<std::string, std::string>> nic_legend;  // "NIC0" -> "mlx5_0"
  std::vector<std::string> warnings;

  bool IsGpu(std::size_t device) const;
  int gpus() const;
  int nics() const;
  /// GPU pairs joined by NVLink (an NV# cell, counted once per pair).
  int nvlinks() const;
  /// NVLinks in all: the sum of # over those pairs.
  int nvlink_lanes() const;
  /// Distinct NUMA Affinity values of the GPU rows (0 when the column is absent or N/A).
  int numa_nodes() const;
  /// The value of affinity column `name` in `row`, "" when absent.
  std::string Affinity(std::size_t row, const std::string& name) const;
};

/// Whether `head` looks like `nvidia-smi topo -m` output (a header naming GPU0 and a GPU0 row with X).
bool LooksLikeSmiTopology(std::string_view head);

/// Parses `file`; throws Error "file:line: what".
SmiTopology ParseSmiTopology(const FieldFile& file);

}  // namespace shardlab
