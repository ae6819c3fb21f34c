// The model of the machine a run uses (`--topology this`), so that the
// simulator's run and the measured one describe the same hardware.
//
//   detected GPUs (topo --detect) ─┐
//   or N GPUs of a device profile ─┼─► MachineRecord ──► machine topology (N GPUs)
//   or a trace's "machine" record ─┘   (model, count,     + placement: rank r on GPU r mod N
//                                        placement,        + the run options of the model:
//                                        profile, how)       shared HBM, per-op issue cost
//
// When ranks outnumber GPUs the ranks are virtual devices, placed as the
// CUDA backend places them (rank r on GPU r mod N), or as a trace recorded
// them (its placement, e.g. blocks [0,0,1,1]). Two virtual ranks of
// one GPU exchange data by a device copy that reads and writes that GPU's
// HBM: in the model it shares the GPU's memory bandwidth with every other
// copy and memory-bound kernel running there at that moment
// (RunOptions::shared_device_memory). The device profile gives the rates
// (memory_gbps, fp32/fp16 TFLOP/s) and the per-op host cost the model
// charges: one launch and two timing events per op (kernel_launch_ns +
// 2 x event_record_ns), issued one after another in plan order by the one
// host thread that enqueues the whole plan (RunOptions::op_issue_ns) —
// unless the run replayed a CUDA graph (MachineRecord::issue "graph"),
// where the host issues nothing per op while the run is timed.
//
// A measured trace records its MachineRecord (otherData.machine), so a
// laptop rebuilds the model from the trace alone. Traces written before
// that have no record: the model then needs a profile and a GPU count, and
// says what it assumed (`how`).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/topology/detect.h"
#include "engine/topology/device_profile.h"
#include "engine/topology/topology.h"

namespace shardlab {

struct MachineRecord {
  std::string gpu_model;          // "NVIDIA H200"
  int gpus = 0;                   // physical GPUs the run used
  std::vector<int> rank_to_gpu;   // placement; empty when not known
  std::optional<DeviceProfile> profile;
  std::string how;                // how it was found: "detected", "device profile h200.toml", ...
  /// How the run put its ops on the GPU: "graph" (the CUDA backend's
  /// default: the plan captured once as a CUDA graph and replayed, so the
  /// host issues nothing per op in a timed run), "eager" (the host enqueues
  /// op by op: SHARDLAB_CUDA_GRAPH=0, or a backend without graphs), or ""
  /// (not recorded: the model assumes eager and says so).
  std::string issue;

  /// "1 NVIDIA H200 (device profile h200.toml), 8 ranks as virtual devices on GPU 0 sharing its HBM"
  std::string Describe() const;
};

/// N GPUs of `profile` (no detection: a laptop modelling a GPU machine).
MachineRecord MachineFromProfile(const DeviceProfile& profile, int gpus, const std::string& how);

/// The GPUs `topo --detect` finds here; nullopt without one, with the
/// detection's reason in *no_gpu ("no CUDA device: ..."). Never throws.
std::optional<DetectedMachine> DetectThisMachine(std::string* no_gpu);

/// The record of this machine when no trace gives it, as `--topology this`
/// and the app's "This machine" build it: the `detected` GPUs with the
/// rates of the device profile at `profile_path` (when it is "", the cached
/// profile of GPU 0's model, calibrated on GPU 0 on first use:
/// engine/topology/profile_cache.h), or, with nothing detected, `gpus` GPUs
/// of that profile.
/// Throws Error for a bad profile file ("file:line: ..."), and when
/// nothing was detected and no profile given (front ends say it their way
/// first: ThisMachineNeedsProfile).
MachineRecord RecordThisMachine(const std::optional<DetectedMachine>& detected,
                                const std::string& profile_path, int gpus);

/// Where the profile of a measured run's machine record comes from, and
/// what was done to get it.
struct RecordedProfile {
  std::optional<DeviceProfile> profile;
  std::string how;  // "profile h200.toml", "cached profile PATH", "calibrated now on GPU 0, cached at PATH"
};

/// The profile a measured run's trace records for GPU model `gpu_model`:
/// the file at `profile_path` when it is given (Error "file:line: ..." when
/// bad), else the cached profile in `cache_dir`; on first use `calibrate`
/// measures GPU 0, after `notice` was called once with one line ("calibrating
/// NVIDIA H200 once for the trace's machine record; cached at PATH"). The
/// run is over by then, so a cached file that does not parse or a
/// calibration that fails does not fail it: no profile, `how` says why, and
/// `notice` gets that line too.
RecordedProfile ProfileForMachineRecord(const std::string& gpu_model, const std::string& profile_path,
                                        const std::string& cache_dir, const std::function<DeviceProfile()>& calibrate,
                                        const std::function<void(const std::string&)>& notice);

/// The record of a measured run's machine: the `detected` GPUs (not empty),
/// `ranks` placed as the CUDA backend places them, ops issued as `issue`,
/// and `profile` (ProfileForMachineRecord).
MachineRecord RecordMeasuredMachine(const DetectedMachine& detected, int ranks, const std::string& issue,
                                    const RecordedProfile& profile);

/// True when RecordThisMachine would need a profile it was not given: no
/// GPU detected here and `profile_path` empty.
inline bool ThisMachineNeedsProfile(bool detected, const std::string& profile_path) {
  return !detected && profile_path.empty();
}

/// The placement the CUDA backend uses: rank r on GPU r mod gpus.
std::vector<int> VirtualPlacement(int ranks, int gpus);

/// Whether two ranks of `rank_to_gpu` are on one GPU (virtual devices).
bool SharesAGpu(const std::vector<int>& rank_to_gpu);

/// The machine as a topology: the detected GPUs and links when `detected`
/// is given, else `record.gpus` GPUs joined through PCIe to one CPU (as
/// detection without NVML builds them); every GPU takes the profile's
/// figures. Throws Error when the record has no profile.
Topology BuildMachineTopology(const MachineRecord& record, const struct DetectedMachine* detected = nullptr);

/// The hub of VirtualDeviceTopology: it stands for the memory system the
/// virtual ranks of one GPU share (kSharedMemoryNode), or, with several
/// GPUs, for their memories and the links between them
/// (kSharedMachineNode); never for a switch (the views label it so).
inline constexpr const char* kSharedMemoryNode = "memory";
inline constexpr const char* kSharedMachineNode = "memory and links";

/// A topology of `ranks` GPUs of the machine's device, joined through one
/// hub (kSharedMemoryNode): what a plan for that many ranks is built on
/// (ring order 0..n-1), when the machine itself has fewer GPUs than ranks.
Topology VirtualDeviceTopology(const MachineRecord& record, int ranks);

/// The per-op host cost of the model: kernel_launch_ns + 2 x event_record_ns
/// from the profile (0 when it has neither).
TimeNs OpIssueNs(const DeviceProfile& profile);

/// The per-op host cost the model of `record`'s run charges: none for a
/// graph replay, OpIssueNs of its profile otherwise (eager, or not recorded).
TimeNs ModelOpIssueNs(const MachineRecord& record);

/// ShardLab's graph runs each op as three dependent nodes: a start stamp,
/// the op's kernel or copy, an end stamp (engine/backends/cuda).
inline constexpr int kGraphNodesPerOp = 3;

/// What the model of a graph replay adds before a dependent op starts:
/// kGraphNodesPerOp x the profile's graph_node_ns; 0 for an eager run or a
/// profile without it.
TimeNs ModelGraphOpNs(const MachineRecord& record);

/// "graph" and "eager" as `--issue` takes them; throws Error otherwise.
std::string CheckIssueMode(const std::string& text);

class JsonWriter;
struct JsonValue;

/// Writes the record as a JSON object (a trace's otherData.machine).
void WriteMachineRecord(JsonWriter& w, const MachineRecord& record);

/// Reads what WriteMachineRecord wrote; `where` names it in errors
/// ("run.json: otherData.machine.gpus: ..."). Throws Error.
MachineRecord ReadMachineRecord(const JsonValue& value, const std::string& where);

}  // namespace shardlab
