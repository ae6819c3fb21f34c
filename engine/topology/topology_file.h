// Topology files: a user-written TOML description of a machine.
//
//   name = "my-workstation"
//   [[node]]                     # one per GPU, switch, CPU, NIC
//   name = "gpu0"
//   kind = "gpu"                 # gpu | nvswitch | pcie-switch | cpu | nic | net-switch
//   model = "A100"               # gpus: a known model, or give the figures:
//   fp32_tflops = 19.5
//   fp16_tflops = 312
//   memory_gbps = 2039
//   memory_gb = 80
//   host = 0                     # optional: which box (default 0)
//   forward_gbps = 0             # optional, not on GPUs: capacity shared by all
//                                # traffic passing through (0 = unlimited)
//   [[link]]
//   a = "gpu0"
//   b = "nvswitch"
//   kind = "nvlink3"             # nvlink1..5 | pcie3..5 | upi | infiniband | ethernet
//   gbps = 300                   # per direction, GB/s
//   lanes = 12                   # optional: bonded NVLinks or PCIe lanes (default 1)
//   latency_us = 0.7             # optional (or latency_ns); default per kind
//
// GPUs get ranks in the order their [[node]] tables appear. Unknown keys are
// errors (a typo must not fall back to a default). Errors name the file,
// line and field: "box.toml:14: link.b: no node named 'gpu9'". The file is
// capped in size (1 MiB) and nesting before it is parsed (engine/core/toml.h,
// our own reader: Debian's toml++ aborts on malformed input, overflows the
// stack on deep nesting and mangles strings that start with a newline).
// assets/topologies/example-workstation.toml is a commented example.
#pragma once

#include <string>

#include "engine/topology/topology.h"

namespace shardlab {

Topology LoadTopologyFile(const std::string& path);
Topology ParseTopologyText(const std::string& text, const std::string& path_for_errors);

/// Writes a topology in the same format; ParseTopologyText reads it back equal.
std::string WriteTopologyText(const Topology& topology);

}  // namespace shardlab
