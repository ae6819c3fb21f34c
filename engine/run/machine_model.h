// The model of a recorded machine, as the simulator runs it: from a
// MachineRecord (GPU model, count, placement, profile, issue mode) the
// topology a plan runs on and the run options that make the simulator
// behave like that machine. Pure: no detection, no flags, no environment —
// the CLI's `--topology this` (app/cli/machine_args.h) finds the record,
// and a trace that recorded one (otherData.machine) gives it directly.
//
//   MachineRecord ──► BuildMachineModel(ranks) ──► MachineModel
//                                                    record (placement for `ranks`:
//                                                      the recorded one, else r mod N)
//                                                    machine: the physical GPUs
//                                                    plan_topology: one GPU per rank
//   MachineModel ──► ApplyMachineModel ──► RunOptions: placement, shared HBM,
//                                          per-op issue cost, graph node cost
//                                          + the machine as the run's topology
#pragma once

#include <optional>
#include <string>

#include "engine/run/backend.h"
#include "engine/topology/detect.h"
#include "engine/topology/this_machine.h"

namespace shardlab {

struct MachineModel {
  MachineRecord record;               // placement filled for the ranks
  std::optional<DetectedMachine> detected;
  Topology machine;                   // the physical GPUs
  Topology plan_topology;             // what the plan is built on (one GPU per rank)
};

/// The model of `record` for `ranks` ranks (0: the record's placement, or
/// one rank per GPU): the recorded placement (record.rank_to_gpu, checked
/// by CheckPlacement), else rank r on GPU r mod N; the machine's topology
/// (the detected links when `detected` is given) and, when two ranks share
/// a GPU, the virtual devices' topology. Throws Error when the record has
/// no profile or a placement that does not fit.
/// A recorded placement fits a plan of `ranks` ranks on `gpus` GPUs: one
/// entry per rank, each a GPU index in 0..gpus-1. Throws Error (kInvalidInput)
/// naming the field: "placement: 3 entries (one GPU per rank) for a plan of 4 ranks".
void CheckPlacement(const std::vector<int>& rank_to_gpu, int ranks, int gpus);

MachineModel BuildMachineModel(MachineRecord record, int ranks,
                               std::optional<DetectedMachine> detected = std::nullopt);

/// The simulator's options for the model: placement, shared HBM, the issue
/// costs of `record.issue` (ModelOpIssueNs, ModelGraphOpNs). Other fields
/// of *options are kept.
void ApplyMachineModel(const MachineRecord& record, RunOptions* options);

/// As above, and the machine's GPUs into *run_topology.
void ApplyMachineModel(const MachineModel& model, RunOptions* options, Topology* run_topology);

/// A run of `backend` on the model: a backend that models a machine
/// (BackendTraits::models_machine: the simulator) runs the model (as
/// above); a real backend is the machine itself and runs as it is. The
/// CLI's `--topology this` and the app's "This machine" both call it.
void ApplyMachineModelOn(const std::string& backend, const MachineModel& model, RunOptions* options,
                         Topology* run_topology);

/// "" when `faults` can run on the model of a machine, else why not
/// ("throttle_link: ..."): the model runs on the machine's own GPUs and
/// links, not on the links the plan was made for, so a link fault named
/// in the plan's machine has nothing to act on. Stragglers and failed
/// ranks are the ranks' own and stay.
std::string MachineModelFaultRefusal(const Faults& faults);

}  // namespace shardlab
