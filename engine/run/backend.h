// Backend: executes a Plan and reports one Event per op. Backends sit in a
// registry by name, each with what it can do (BackendTraits), so the CLI
// and the app need no #ifdef per backend and never compare its name.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/core/backend_traits.h"
#include "engine/core/event.h"
#include "engine/plan/plan.h"
#include "engine/run/faults.h"
#include "engine/run/memory_tracker.h"
#include "engine/topology/topology.h"

namespace shardlab {

struct RunOptions {
  bool timing_only = false;   // skip the data: paper-sized runs, time only
  std::uint64_t seed = 1;     // for BufferInit::kRandom
  std::vector<int> rank_to_gpu;  // GPU index of each rank; empty = rank r on GPU r
  /// Real hardware only: hold each transfer's stream for the time the
  /// topology's route would take (events say ClockKind::kEmulated).
  bool emulate_links = false;
  /// Simulator, the model of a real machine (`--topology this`): every op
  /// of a GPU that moves memory (a transfer between two ranks on it, a
  /// memory-bound kernel) is a flow through that GPU's HBM, sharing its
  /// memory_gbps with every other such op at that moment; a compute-bound
  /// kernel keeps its FLOP time. Off: each op has the bandwidth to itself.
  bool shared_device_memory = false;
  /// Simulator: what issuing one op costs the host thread that enqueues
  /// the whole plan in order (a launch and two timing events on a GPU);
  /// op k of the plan cannot start before k of these have passed. 0: free.
  TimeNs op_issue_ns = 0;
  /// Simulator, the model of a CUDA graph replay: an op that depends on
  /// others starts this long after it became ready (the GPU resolving the
  /// graph's edges and launching the op's nodes). 0: at once.
  TimeNs graph_op_ns = 0;
  /// Stragglers and failures (faults.h), resolved against the topology.
  /// The simulator applies them all; a backend that cannot says so in Load.
  Faults faults;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  /// Takes a validated plan; allocates and fills buffers (unless
  /// timing-only). The plan and topology must outlive the backend's use.
  /// Throws shardlab::Error on what this backend cannot run.
  virtual void Load(const Plan& plan, const Topology& topology, const RunOptions& options) = 0;

  /// Executes every op with step <= last_step that has not run yet, and
  /// returns when they are done or `cancel` became true (then it throws
  /// Error(kCancelled)). Events go to `sink` as ops finish.
  virtual void RunThroughStep(int last_step, EventSink& sink, const std::atomic<bool>& cancel) = 0;

  /// Back to the state right after Load: inputs refilled, clock at zero.
  virtual void Reset() = 0;

  /// A buffer's contents (empty in timing-only mode).
  virtual std::span<const float> BufferData(BufferId id) const = 0;

  /// Ops completed since Load or Reset.
  virtual std::size_t completed_ops() const = 0;

  /// Device memory allocated for the plan's buffers so far, per rank and
  /// category, with peaks (counted in timing-only runs too); null when the
  /// backend does not track it.
  virtual const MemoryUsage* memory() const { return nullptr; }

  /// One line for the user about where the plan runs ("8 ranks on 1 GPU as
  /// virtual devices: ..."), after Load; empty when there is nothing to say.
  virtual std::string placement() const { return ""; }

  /// The host lane of the last run: the CPU's enqueue calls, one span per
  /// unit of work (empty where the backend has none; the simulator's is
  /// its model's issues when RunOptions::op_issue_ns > 0).
  virtual std::vector<HostEnqueueSpan> host_lane() const { return {}; }
};

using BackendFactory = std::function<std::unique_ptr<Backend>()>;

/// What a backend is and can do, declared once beside its factory
/// (SimBackendDeclaration in engine/backends/sim/sim_backend.h, ...).
struct BackendDeclaration {
  std::string name;         // "sim", "cuda", "mpi": what --backend takes
  std::string description;  // one line for lists and tooltips
  BackendTraits traits;
};

/// The one way to register a backend (or replace one of the same name).
/// A null factory declares a backend this program cannot run itself: its
/// traits are known (the app runs cuda in a worker, which links it), but
/// CreateBackend and ListBackends do not offer it.
void RegisterBackend(const BackendDeclaration& declaration, BackendFactory factory);
/// Throws shardlab::Error listing the available backends when unknown.
std::unique_ptr<Backend> CreateBackend(const std::string& name);
struct BackendInfo {
  std::string name, description;
  BackendTraits traits;
};
/// The backends this program can run, in registration order.
std::vector<BackendInfo> ListBackends();
/// Every declared backend, also those only another program runs (a worker's).
std::vector<BackendInfo> ListDeclaredBackends();
/// A declared backend; nullopt when none has that name.
std::optional<BackendInfo> FindBackend(const std::string& name);

/// Checks the value of a worker flag some declared backend takes
/// (BackendTraits::worker_flags: "mpi-timeout"); throws Error naming
/// `spelling` when the value is bad, or when no backend takes `name`.
void CheckBackendWorkerFlag(const std::string& name, const std::string& spelling, const std::string& value);

/// Whether `backend` can emulate links (RunOptions::emulate_links): the
/// CUDA backend holds its streams for the modelled time; the simulator
/// models links already, and the others would ignore the option. The CLI's
/// --emulate-links and the app's "Emulate links" both ask this.
inline bool BackendEmulatesLinks(const std::string& backend) {
  return BackendTraitsOrDefault(backend).emulates_links;
}

}  // namespace shardlab
