// What a backend can do, declared once beside its factory
// (engine/backends/*/NAME_backend.h) and registered with it
// (RegisterBackend, engine/run/backend.h). Everything outside
// engine/backends/ asks these questions instead of comparing names:
//
//   BackendTraitsOf("cuda").default_warmup      -> 1
//   FindBackendTraits(name)                     -> nullopt where none is declared
//
// Plain data in core/ so that every folder may ask (the trace writer its
// clock, the error bounds their dtype) without depending on the executor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/event.h"

namespace shardlab {

/// How a backend applies one kind of fault (faults.h).
enum class FaultSupport : std::uint8_t {
  kRefused,   // it cannot: FaultRefusal says why
  kModelled,  // the simulator's model of it
  kReal,      // done for real on the hardware (a slow rank's work delayed, a failed rank's sends withheld)
};

/// One of a backend's own flags that the app passes on to its worker
/// (`--mpi-timeout 5s`), with the check of its value.
struct BackendFlag {
  const char* name = "";  // without "--"
  /// Throws Error naming `spelling` when `value` is not one the backend takes.
  void (*check)(const std::string& spelling, const std::string& value) = nullptr;
};

/// A default-constructed value is what an undeclared backend gets: a real
/// backend that can do nothing special.
struct BackendTraits {
  /// The clock its events carry (ClockKind::kEmulated replaces it on
  /// transfers whose links are emulated).
  ClockKind event_clock = ClockKind::kHost;
  /// Real arithmetic on the host in float32 whatever a buffer's dtype (the
  /// simulator, the mpi backend); else in the buffer's own dtype (a GPU
  /// holds half buffers as half). ComputeDType (verify/bounds.h) asks.
  bool computes_in_float32 = false;

  /// Faults it supports, and how.
  FaultSupport slow_rank = FaultSupport::kRefused;
  FaultSupport failed_rank = FaultSupport::kRefused;
  FaultSupport failed_link = FaultSupport::kRefused;
  /// Why it cannot stop a rank, for the refusal; null: "which cannot stop
  /// a rank on request".
  const char* failed_rank_refusal = nullptr;

  /// It can hold each transfer for its modelled link's time
  /// (RunOptions::emulate_links; BackendEmulatesLinks).
  bool emulates_links = false;
  /// Untimed runs before the timed ones by default (DefaultWarmup): the
  /// first run on a GPU pays for first launches and library set-up.
  int default_warmup = 0;

  /// The app runs it only in a worker process ('shardlab-cli worker'),
  /// never in its own.
  bool needs_worker = false;
  /// One process per rank, started by mpirun: the CLI joins the job's
  /// process group, the app's worker is launched under mpirun.
  bool under_mpirun = false;
  /// Its own flags, which the app checks and passes on to the worker.
  std::vector<BackendFlag> worker_flags;

  /// It runs on this machine's GPUs: with no --topology it takes the
  /// detected machine, its trace records that machine, and its ops issue
  /// as the CUDA backend's SHARDLAB_CUDA_GRAPH says.
  bool runs_on_local_gpus = false;
  /// It runs the model of a machine: `--topology this` and a device
  /// profile change its run (ApplyMachineModelOn), not just the plan's.
  bool models_machine = false;
  /// It is a simulator: its times are modelled, not measured, its links are
  /// the topology's, its NCCL calls are the NCCL model's, and a run's time
  /// does not change from one run to the next.
  bool simulator = false;

  /// The clock of its host lane (Backend::host_lane): the simulator's
  /// modelled issues are on its clock, a real backend's calls on the host's.
  ClockKind host_lane_clock() const {
    return event_clock == ClockKind::kSimulated ? ClockKind::kSimulated : ClockKind::kHost;
  }
  bool TakesWorkerFlag(std::string_view flag) const {
    for (const BackendFlag& f : worker_flags)
      if (flag == f.name) return true;
    return false;
  }
};

/// The traits a declared backend registered (engine/backends/backend_registry.cpp);
/// nullopt when no backend of that name is declared.
std::optional<BackendTraits> FindBackendTraits(const std::string& name);

/// The same, or the default traits (what an undeclared backend gets).
inline BackendTraits BackendTraitsOrDefault(const std::string& name) {
  return FindBackendTraits(name).value_or(BackendTraits{});
}

/// The same; throws Error "unknown backend 'x' (available: sim, ...)" when
/// none is declared.
BackendTraits BackendTraitsOf(const std::string& name);

}  // namespace shardlab
