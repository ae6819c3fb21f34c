#include "app/cli/machine_args.h"

#include <cstdlib>
#include <iostream>

#include "engine/compare/model_trace.h"
#include "engine/core/error.h"
#include "engine/io/trace_reader.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/profile_cache.h"

namespace shardlab::cli {

void AddMachineFlags(std::vector<FlagSpec>& flags) {
  flags.push_back({"gpus", 0, "N", "--topology this without a GPU here: the modelled machine has N GPUs "
                                   "of --device-profile (default: 1)"});
  flags.push_back({"machine-from", 0, "TRACE", "--topology this: the machine a trace recorded (GPU "
                                               "model, count, placement, profile)"});
  flags.push_back({"issue", 0, "MODE", "--topology this: how the modelled run issued its ops: graph "
                                       "(one CUDA graph replayed: no host cost per op) or eager (op by "
                                       "op: launch + 2 event records each); default: what the trace "
                                       "recorded, else eager"});
}

namespace {

DeviceProfile ProfileFromFlag(const ParsedArgs& args) {
  const std::string path = args.Get("device-profile");
  if (path.empty()) throw UsageError(args.Spelling("device-profile") + ": missing value");
  return LoadDeviceProfile(path);
}

int GpusFlag(const ParsedArgs& args) {
  return args.Has("gpus") ? static_cast<int>(ParseIntValue(args.Spelling("gpus"), args.Get("gpus"), 1, 65536)) : 1;
}

// The record with --issue applied when given.
MachineRecord WithIssueFlag(const ParsedArgs& args, MachineRecord record) {
  if (args.Has("issue")) {
    try {
      record.issue = CheckIssueMode(args.Get("issue"));
    } catch (const Error&) {
      throw UsageError(args.Spelling("issue") + ": unknown mode '" + args.Get("issue") + "' (graph or eager)");
    }
    record.how += "; --issue " + record.issue;
  }
  return record;
}

}  // namespace

ThisMachine ThisMachineFromArgs(const ParsedArgs& args, int ranks) {
  ThisMachine out;
  MachineRecord& record = out.record;
  if (args.Has("machine-from")) {
    const std::string path = args.Get("machine-from");
    if (path.empty()) throw UsageError(args.Spelling("machine-from") + ": missing value");
    const LoadedTrace trace = ReadChromeTraceFile(path);
    if (trace.machine) {
      record = *trace.machine;
      record.how = "recorded in " + path + (record.how.empty() ? "" : ": " + record.how);
      if (args.Has("device-profile")) {
        record.profile = ProfileFromFlag(args);
        record.how += "; rates from " + args.Get("device-profile");
      }
    } else {
      if (!args.Has("device-profile")) {
        throw UsageError(args.Spelling("machine-from") + ": " + path +
                         " does not record the machine it ran on (written before ShardLab recorded "
                         "it); give --device-profile FILE of its GPU and --gpus N (default 1) too");
      }
      const int gpus = GpusFlag(args);
      record = MachineFromProfile(ProfileFromFlag(args), gpus, "");
      record.how = "not recorded in " + path + ": assumed " + std::to_string(gpus) + " GPU" +
                   (gpus == 1 ? "" : "s") + (args.Has("gpus") ? " (--gpus)" : " (the default; --gpus N)") +
                   " of " + args.Get("device-profile");
    }
    const int recorded = static_cast<int>(record.rank_to_gpu.size());
    if (ranks <= 0) ranks = recorded > 0 ? recorded : record.gpus;
    // Another rank count than the trace's: its placement, when it is the
    // CUDA backend's rule (r mod N), is that rule for these ranks; a placement
    // of another shape fits only its own rank count (BuildMachineModel says so).
    if (recorded > 0 && ranks != recorded && record.rank_to_gpu == VirtualPlacement(recorded, record.gpus)) {
      record.rank_to_gpu.clear();
    }
    record = WithIssueFlag(args, std::move(record));
    try {
      return BuildMachineModel(std::move(record), ranks, std::nullopt);
    } catch (const Error& e) {
      // The trace's own field, when it is what is wrong; the rest (no profile, ...) as it is.
      const std::string what = e.what();
      if (e.kind() != ErrorKind::kInvalidInput || what.rfind("placement:", 0) != 0) throw;
      throw Error(path + ": otherData.machine." + what, ErrorKind::kInvalidInput);
    }
  } else {
    // The same record the app's "This machine" builds (engine/topology/this_machine.h).
    std::string no_gpu;
    out.detected = DetectThisMachine(&no_gpu);
    if (ThisMachineNeedsProfile(out.detected.has_value(), args.Get("device-profile", ""))) {
      if (args.Has("device-profile")) throw UsageError(args.Spelling("device-profile") + ": missing value");
      throw UsageError(args.Spelling("topology") + " this: " + no_gpu +
                       "; to model a GPU machine from here give --device-profile FILE (what "
                       "'shardlab-cli calibrate' measured there) and --gpus N (default 1), or "
                       "--machine-from TRACE with a trace that recorded its machine");
    }
    if (args.Has("device-profile") && args.Get("device-profile").empty())
      throw UsageError(args.Spelling("device-profile") + ": missing value");
    record = RecordThisMachine(out.detected, args.Get("device-profile", ""), out.detected ? 1 : GpusFlag(args));
    if (ranks <= 0) ranks = record.gpus;
  }
  return BuildMachineModel(WithIssueFlag(args, std::move(record)), ranks, std::move(out.detected));
}

std::optional<MachineRecord> RecordRealMachine(int ranks, const std::string& profile_path) {
  DetectedMachine detected;
  try {
    detected = DetectMachine();
  } catch (const Error&) {
    return std::nullopt;
  }
  if (detected.gpus.empty()) return std::nullopt;
  // After the run, never inside its timing: a first run of this GPU model measures it once.
  const RecordedProfile profile = ProfileForMachineRecord(
      detected.gpus.front().name, profile_path, ProfileCacheDir(), [] { return CalibrateDevice(0); },
      [](const std::string& line) { std::cerr << "shardlab-cli: " << line << "\n"; });
  return RecordMeasuredMachine(detected, ranks, CudaIssueMode(), profile);
}

void AddThisMachineRunFlags(std::vector<FlagSpec>& flags) {
  flags.push_back({"device-profile", 0, "FILE", "--topology this: the GPU's figures 'calibrate' measured "
                                                "(without a GPU here, the machine to model)"});
  AddMachineFlags(flags);
  flags.push_back({"compare", 0, "sim", "with a real backend: run the simulator's model of this machine "
                                        "(as --topology this builds it) on the same plan and print the "
                                        "compare table"});
}

std::optional<ThisMachine> ThisMachineForRun(const ParsedArgs& args, const std::string& topology, int ranks) {
  if (topology != "this") {
    if (args.Has("compare")) return std::nullopt;  // the machine flags describe the model compared with
    for (const char* flag : {"device-profile", "gpus", "machine-from", "issue"}) {
      if (args.Has(flag)) throw UsageError(args.Spelling(flag) + ": only with --topology this");
    }
    return std::nullopt;
  }
  return ThisMachineFromArgs(args, ranks);
}

void ApplyThisMachine(const ThisMachine& machine, const std::string& backend, RunOptions* options,
                      Topology* run_topology) {
  ApplyMachineModelOn(backend, machine, options, run_topology);
}

std::optional<MachineRecord> TraceMachine(const std::optional<ThisMachine>& machine, const std::string& backend,
                                          int ranks) {
  if (machine) {
    MachineRecord record = machine->record;
    if (BackendTraitsOrDefault(backend).runs_on_local_gpus) record.issue = CudaIssueMode();
    return record;
  }
  if (BackendTraitsOrDefault(backend).runs_on_local_gpus) return RecordRealMachine(ranks, "");
  return std::nullopt;
}

bool CompareModelRequested(const ParsedArgs& args, const std::string& backend) {
  if (!args.Has("compare")) return false;
  CheckCompareModel(args);
  if (BackendTraitsOrDefault(backend).simulator) {
    throw UsageError(args.Spelling("compare") + " sim: this run is the simulator already; compare a real run "
                     "(--backend cuda) with it, or a trace with 'shardlab-cli compare TRACE --model SETTINGS'");
  }
  if (args.Has("json")) throw UsageError(args.Spelling("compare") + ": not with --json (the table is text)");
  return true;
}

std::string CompareRunWithModel(const ParsedArgs& args, const std::optional<ThisMachine>& machine, const Plan& plan,
                                std::span<const Event> events, const std::string& backend, int ranks) {
  ThisMachine model = machine ? *machine : ThisMachineFromArgs(args, ranks);
  if (BackendTraitsOrDefault(backend).runs_on_local_gpus && !args.Has("issue")) {
    model.record.issue = CudaIssueMode();  // as this run did
  }
  const Comparison c = CompareWithMachineModel(plan, events, backend, model);
  return "#\n# --compare sim: the model of " + model.record.Describe() + "\n" + FormatComparison(c);
}

void CheckCompareModel(const ParsedArgs& args) {
  // The model is a backend that runs the model of a machine (the simulator).
  if (!BackendTraitsOrDefault(args.Get("compare")).models_machine) {
    throw UsageError(args.Spelling("compare") + ": unknown model '" + args.Get("compare") + "' (use sim)");
  }
}

std::string CudaIssueMode() {
  // As the CUDA backend reads it (engine/backends/cuda/cuda_backend.cpp).
  const char* graph = std::getenv("SHARDLAB_CUDA_GRAPH");
  return graph != nullptr && std::string(graph) == "0" ? "eager" : "graph";
}

}  // namespace shardlab::cli
