// The machine a measured trace ran on, when it is not the one drawn.
//
// A trace shows the machine its plan was made for (otherData.topology_file:
// the ring order, the routes); the run itself may have placed its ranks
// elsewhere, e.g. 8 ranks as virtual devices on one H200 for a plan made
// for a DGX A100. Its otherData.machine record says so, and the machine
// view says it under its caption, so nobody reads an H200's times as an
// A100's:
//
//   "measured on 1 NVIDIA H200 (detected), 8 ranks as virtual devices on GPU 0
//    sharing its HBM; drawn: dgx-a100, the machine the plan was made for"
//
// A simulated trace (clock "simulated": the simulator's run, e.g. of
// `--topology this` from a device profile) was modelled, not measured:
//
//   "modelled, not measured: 1 NVIDIA H200 (no GPU here ...), 8 ranks as
//    virtual devices on GPU 0 sharing its HBM; drawn: this, ..."
#pragma once

#include <string>

#include "engine/io/trace_reader.h"

namespace shardlab::gui {

/// The line, in the app's language; "" without a trace, for a trace that
/// records no machine, or when the record's GPUs are the ones drawn (as
/// many GPUs as the drawn machine, one rank each, of the model drawn).
std::string RecordedMachineLine(const LoadedTrace* trace);

}  // namespace shardlab::gui
