// `--topology this` on the command line: the model of the machine a run
// uses, from detection, a device profile (--device-profile, --gpus) or a
// trace that recorded its machine (--machine-from), with what was assumed
// said in the record's `how` (engine/topology/this_machine.h).
#pragma once

#include <optional>
#include <span>
#include <string>

#include "app/common/args.h"
#include "engine/core/event.h"
#include "engine/plan/plan.h"
#include "engine/run/backend.h"
#include "engine/run/machine_model.h"
#include "engine/topology/detect.h"
#include "engine/topology/this_machine.h"

namespace shardlab::cli {

/// The model itself (placement, topologies, run options) is the engine's
/// (engine/run/machine_model.h); this file finds its record from the flags.
using ThisMachine = MachineModel;

/// The flags --gpus, --machine-from and --issue.
void AddMachineFlags(std::vector<FlagSpec>& flags);

/// Builds the model for `ranks` ranks (0: one per GPU). Throws UsageError
/// (exit 2) naming what is missing: a GPU, a profile, a recorded machine.
ThisMachine ThisMachineFromArgs(const ParsedArgs& args, int ranks);

/// The machine a real run on this host used, for its trace: detected GPUs,
/// placement rank r on GPU r mod N, the profile at `profile_path`, else the
/// cached profile of the GPU's model (calibrated once on first use, after a
/// line on stderr; engine/topology/profile_cache.h). Call it after the timed
/// runs. Empty without a GPU.
std::optional<MachineRecord> RecordRealMachine(int ranks, const std::string& profile_path);

/// `--topology this` on a training command (run pipeline, tp-*, zero): the
/// flags --device-profile, --gpus, --machine-from and --issue.
void AddThisMachineRunFlags(std::vector<FlagSpec>& flags);

/// The model for a training command's run when its topology is "this",
/// for `ranks` ranks; nullopt for any other topology (whose --device-profile
/// and machine flags are then refused, naming the flag).
std::optional<ThisMachine> ThisMachineForRun(const ParsedArgs& args, const std::string& topology, int ranks);

/// On the simulator, runs the model of the machine (ApplyMachineModel): the
/// placement, shared HBM and the issue costs into *options, the machine's
/// GPUs into *run_topology. A real backend runs as it is.
void ApplyThisMachine(const ThisMachine& machine, const std::string& backend, RunOptions* options,
                      Topology* run_topology);

/// `--compare MODEL`: MODEL must be a backend that runs the model of a
/// machine (BackendTraits::models_machine: "sim"); throws UsageError
/// "--compare: unknown model 'x' (use sim)".
void CheckCompareModel(const ParsedArgs& args);

/// `--compare sim` of a training command (run pipeline, tp-*, zero): only
/// "sim", only on a real backend, not with --json. Returns whether asked.
bool CompareModelRequested(const ParsedArgs& args, const std::string& backend);

/// After a real run of `plan`: the simulator's run of it on the model of
/// this machine (`machine` under --topology this, else from the machine
/// flags, for `ranks` ranks), compared op by op; the text block printed
/// after the run's result.
std::string CompareRunWithModel(const ParsedArgs& args, const std::optional<ThisMachine>& machine, const Plan& plan,
                                std::span<const Event> events, const std::string& backend, int ranks);

/// What a training command's trace records of its machine: the model's,
/// or, for a CUDA run, the detected GPUs (with how the run issued its ops).
std::optional<MachineRecord> TraceMachine(const std::optional<ThisMachine>& machine, const std::string& backend,
                                          int ranks);

/// How the CUDA backend puts a run's ops on the GPU: "graph", or "eager"
/// under SHARDLAB_CUDA_GRAPH=0 (MachineRecord::issue).
std::string CudaIssueMode();

}  // namespace shardlab::cli
