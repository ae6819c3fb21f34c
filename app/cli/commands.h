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

/// `words` parsed against `spec` into `args`; true when they asked for
/// --help, which it has printed (the command then returns 0).
bool HelpPrinted(const CommandSpec& spec, std::span<const std::string> words, ParsedArgs& args);

/// Each command's flags and help text (built on each call: the table of
/// main.cpp finds a command by its spec's name).
CommandSpec RunSpec(), SweepSpec(), TopoSpec(), DemoSpec(), TpSweepSpec(), MemorySpec(), LabSpec(), WorkerSpec(),
    CalibrateSpec(), MpirunSpec(), PlanSpec(), CompareSpec(), InspectSpec();

/// The commands that take their words themselves (their first word picks
/// another spec: `run NAME`, `sweep tp-LAYER`, `mpirun ... -- COMMAND`);
/// the others take them parsed against their spec, --help printed by main().
/// `run COLLECTIVE`: one collective, with --step, --json, --trace, --plan;
/// `run NAME` of any other scenario goes to RunScenarioCommand.
int RunMain(std::span<const std::string> args);
/// `run COLLECTIVE ...` (the words from the kind on): the collective
/// scenario's own command, its report a line of nccl-tests.
int CollectiveRunMain(std::span<const std::string> args);
/// `sweep tp-LAYER`: the layer at several tp sizes, speedup and efficiency.
int TpSweepMain(const std::string& layer_word, std::span<const std::string> args);
/// `memory`: model-state bytes per GPU of every ZeRO stage, from formulas.
int MemoryMain(const ParsedArgs& args);
/// `lab list|check|run|key`: guided labs (engine/lab) for instructors.
int LabMain(const ParsedArgs& args);
/// `worker COLLECTIVE`: the run as the app's worker process: binary
/// records on stdout, commands on stdin (engine/io/worker_protocol.h).
int WorkerMain(const ParsedArgs& args);
/// `plan`: DP x PP x TP layouts of a model on a cluster, ranked by step time.
int PlanMain(const ParsedArgs& args);
/// `sweep COLLECTIVE`: a size sweep printed like nccl-tests' *_perf tables.
int SweepMain(std::span<const std::string> args);
/// `mpirun -np N -- COMMAND`: COMMAND on the mpi backend under mpirun; names
/// the rank that died and how.
int MpirunMain(std::span<const std::string> args);

/// `compare A B`: two runs of one plan side by side (engine/compare).
int CompareMain(const ParsedArgs& args);

/// `inspect FILE...`: what a file from the field holds (engine/field).
int InspectMain(const ParsedArgs& args);

/// `topo`: list presets, print a topology, choose a ring order.
int TopoMain(const ParsedArgs& args);
/// `calibrate`: measures this machine's GPU and writes a device profile.
int CalibrateMain(const ParsedArgs& args);
/// `demo`: the README's first stop, ring all-reduce step by step, then a sweep.
int DemoMain(const ParsedArgs& args);

}  // namespace shardlab::cli
