// The commands of shardlab-cli. Each takes the words after its name and
// returns the exit code: 0 success, 1 runtime failure (a wrong result, a
// backend error), 2 bad input. Bad input is thrown as shardlab::Error
// (kInvalidInput) and turned into one line and code 2 by main().
#pragma once

#include <span>
#include <string>

#include "app/common/args.h"

namespace shardlab::cli {

inline constexpr const char* kProgram = "shardlab-cli";

#ifndef SHARDLAB_VERSION
#define SHARDLAB_VERSION "0.1.0"
#endif
/// `shardlab-cli --version` prints kProgram and this; `mpirun --host`
/// checks that every host prints the same.
inline constexpr const char* kVersion = SHARDLAB_VERSION;

/// Each command's flags and help text (built on first use).
const CommandSpec& RunSpec();
const CommandSpec& SweepSpec();
const CommandSpec& TopoSpec();
const CommandSpec& DemoSpec();
const CommandSpec& PipelineSpec();
const CommandSpec& ThreeDSpec();
const CommandSpec& TpRunSpec();
const CommandSpec& TpSweepSpec();
const CommandSpec& ZeroRunSpec();
const CommandSpec& MoeRunSpec();
const CommandSpec& InferenceRunSpec();
const CommandSpec& MemorySpec();
const CommandSpec& LabSpec();
const CommandSpec& WorkerSpec();
const CommandSpec& CalibrateSpec();
const CommandSpec& MpirunSpec();
const CommandSpec& PlanSpec();
const CommandSpec& CompareSpec();

/// `run COLLECTIVE`: one collective, with --step, --json, --trace, --plan.
int RunMain(std::span<const std::string> args);
/// `run pipeline`: pipeline-parallel training of the small MLP (run's
/// first word "pipeline" hands the rest of the words here).
int PipelineMain(std::span<const std::string> args);
/// `run tp-LAYER`: one tensor-parallel (Megatron) layer, forward and
/// backward (run's first word "tp-..." hands that word and the rest here).
int TpRunMain(const std::string& layer_word, std::span<const std::string> args);
/// `sweep tp-LAYER`: the layer at several tp sizes, speedup and efficiency.
int TpSweepMain(const std::string& layer_word, std::span<const std::string> args);
/// `run zero`: data-parallel / ZeRO training of the small MLP with Adam:
/// memory per rank by category, traffic per step, a checked result (run's
/// first word "zero" hands the rest of the words here).
int ZeroRunMain(std::span<const std::string> args);
/// `run 3d`: DP x PP x TP training, the small MLP checked or a model preset
/// timed at paper scale (run's first word "3d" hands the rest here).
int ThreeDMain(std::span<const std::string> args);
/// `run moe`: an expert-parallel mixture-of-experts layer: tokens per
/// expert, all-to-all bytes per rank, the straggler, a checked result
/// (run's first word "moe" hands the rest of the words here).
int MoeRunMain(std::span<const std::string> args);
/// `run inference`: a small decoder served on tp x pp x replicas GPUs: the
/// real run checked, then serving simulated per batching policy.
int InferenceRunMain(std::span<const std::string> args);
/// `memory`: model-state bytes per GPU of every ZeRO stage, from formulas.
int MemoryMain(std::span<const std::string> args);
/// `lab list|check|run|key`: guided labs (engine/lab) for instructors.
int LabMain(std::span<const std::string> args);
/// `worker COLLECTIVE`: the run as the app's worker process: binary
/// records on stdout, commands on stdin (engine/io/worker_protocol.h).
int WorkerMain(std::span<const std::string> args);
/// `plan`: DP x PP x TP layouts of a model on a cluster, ranked by step time.
int PlanMain(std::span<const std::string> args);
/// `sweep COLLECTIVE`: a size sweep printed like nccl-tests' *_perf tables.
int SweepMain(std::span<const std::string> args);
/// `mpirun -np N -- COMMAND`: COMMAND on the mpi backend under mpirun; names
/// the rank that died and how.
int MpirunMain(std::span<const std::string> args);

/// `compare A B`: two runs of one plan side by side (engine/compare).
int CompareMain(std::span<const std::string> args);

/// `topo`: list presets, print a topology, choose a ring order.
int TopoMain(std::span<const std::string> args);
/// `calibrate`: measures this machine's GPU and writes a device profile.
int CalibrateMain(std::span<const std::string> args);
/// `demo`: the README's first stop, ring all-reduce step by step, then a sweep.
int DemoMain(std::span<const std::string> args);

}  // namespace shardlab::cli
