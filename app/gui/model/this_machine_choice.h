// "This machine" in the app's machine list: the model of the machine the
// app runs on, as the CLI's `--topology this` builds it (one record, one
// model: engine/topology/this_machine.h, engine/run/machine_model.h).
//
//   settings.topology == "this" ─► the GPUs detected here (once per process)
//        │                           or settings.machine_gpus GPUs of
//        │                           settings.device_profile (calibrate's TOML)
//        ▼                           or neither: ThisMachineUnavailable's one line
//   ModelThisMachine(ranks) ─► MachineModel: plan_topology (the plan's ranks),
//                              machine (the GPUs), record.Describe()
//
// The app has no CUDA of its own (real hardware runs in `shardlab-cli
// worker`), so without a CUDA probe linked detection finds no GPU and the
// model needs a device profile; the worker of a cuda run detects its GPUs
// itself.
#pragma once

#include <string>

#include "engine/run/machine_model.h"

namespace shardlab::gui {

/// The topology name the app's settings (and `--topology`) use for it.
inline constexpr const char* kThisMachineTopology = "this";

inline bool IsThisMachine(const std::string& topology) { return topology == kThisMachineTopology; }

/// "" when This machine can be modelled with the profile at `profile_path`
/// ("" for none): a GPU was detected here, or a profile is given. Else the
/// one line why ("no GPU detected here: give a device profile ...").
std::string ThisMachineUnavailable(const std::string& profile_path);

/// The model of this machine for `ranks` ranks (0: one per GPU): the
/// detected GPUs, else `gpus` GPUs of the profile. Throws Error with
/// ThisMachineUnavailable's line, or the profile's "FILE:LINE: message"
/// for a bad one.
MachineModel ModelThisMachine(const std::string& profile_path, int gpus, int ranks);

}  // namespace shardlab::gui
