// One collective from the command line to a measured, checked result:
//
//   flags ──► CollectiveScenario ──► CheckCollectiveScenario ──► CollectiveSetup
//                                     (engine; per command)          │ per size
//                                                                    ▼
//              PrepareCollectiveAtSize ──► Plan ──► Executor(Backend) ──► events
//                                                                    │
//                       CollectiveOutcome ◄── SummarizeCollective ◄──┘
//
// The engine's collective_scenario.h decides what is valid, so the CLI and
// the app accept and reject the same scenarios; here the flags are parsed
// and the engine's "ranks: ..." errors are reported as "--ranks: ...".
// Shared by `run` (one size, with hooks for --step, --plan and --trace)
// and `sweep` (many sizes).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "app/cli/machine_args.h"
#include "app/cli/iterations.h"
#include "app/common/args.h"
#include "engine/run/faults.h"
#include "engine/algorithms/collective.h"
#include "engine/algorithms/verify.h"
#include "engine/core/event.h"
#include "engine/run/chunk_state.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/run/metrics.h"
#include "engine/topology/topology.h"

namespace shardlab::cli {

/// Host data above which results are timed but not checked, unless
/// --verify-max says otherwise: keeps a 1 GiB x 8-rank sweep row from
/// needing 8 GiB of RAM (and a minute) on a small CI machine.
inline constexpr Bytes kDefaultVerifyMaxBytes = Bytes{1} << 30;

/// Everything the shared flags decide, checked; the size comes per run.
struct CollectiveSetup {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  int ranks = 0;
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  std::string topology_name;        // as the user named it (preset or path)
  Topology topology;                // throttled links applied (--throttle-link)
  Faults faults;                    // --slow-rank, --throttle-link, --fail-link, --fail-rank
  std::string ring_order_mode;      // "auto", "rank" or "custom"
  std::vector<int> ring_order;      // empty unless the algorithm is a ring
  Gbps ring_bottleneck_gbps = 0;    // slowest hop of that ring; 0 when not a ring
  std::string backend = "sim";
  std::string device_profile;       // --device-profile FILE (sim), empty when none
  /// --topology this: the model of the machine (the plan is built on its
  /// plan_topology; the simulator runs on its machine with shared HBM).
  std::optional<ThisMachine> this_machine;
  bool emulate_links = false;       // --emulate-links (real GPUs)
  std::uint64_t seed = 1;
  bool timing_only = false;
  Bytes verify_max_bytes = kDefaultVerifyMaxBytes;
  /// Timed runs of the plan (run --iters), after `warmup` untimed ones
  /// (iterations.h); the time is their average, the last is checked.
  int iters = 1;
  int warmup = 0;
  /// The engine's checked scenario (no plan); each size is prepared from it.
  std::shared_ptr<const PreparedCollective> checked;
};

/// Adds the flags that run and sweep share (--algo, --ranks, --topology, ...).
void AddCollectiveFlags(std::vector<FlagSpec>& flags);

/// Reads and checks the shared flags; the collective is the first positional.
/// Throws UsageError (exit 2) on anything wrong, naming the flag.
CollectiveSetup SetupFromArgs(const ParsedArgs& args, const std::string& command);

/// What a step hook sees after each logical step (step 0: the inputs).
struct StepView {
  int step = 0;
  int steps = 0;
  Phase phase = Phase::kNone;
  TimeNs now_ns = 0;               // end of the last event so far
  const Plan& plan;
  const ChunkState& chunks;
};

struct RunHooks {
  std::function<void(const Plan&)> on_plan;        // built, before the run
  std::function<void(const StepView&)> on_step;    // set: run step by step
  std::function<void(const Plan&, std::span<const Event>)> on_done;  // set: events kept
  std::vector<HostEnqueueSpan>* host_lane = nullptr;  // set: the backend's, before on_done
};

struct CollectiveOutcome {
  CollectiveParams params;
  Bytes size_bytes = 0;            // one rank's buffer, as nccl-tests' "size"
  int steps = 0;
  std::size_t ops = 0;
  std::size_t events = 0;
  ClockKind clock = ClockKind::kSimulated;
  std::string placement;           // the backend's rank-to-GPU line (cuda), else empty
  std::string nccl_model;          // --algo nccl on sim: the model's "ring/LL128", else empty
  CollectiveMetrics metrics;
  bool checked = false;
  std::string not_checked_reason;  // when !checked: "timing only (--timing-only)", ...
  VerifyResult verify;
  IterationTimes iterations;       // every timed run's span; metrics use the average

  bool wrong() const { return checked && !verify.correct; }
};

/// Builds, runs and checks one collective of `size_bytes`. Throws
/// shardlab::Error: kInvalidInput for parameters the engine rejects,
/// kRuntime for a backend that fails.
CollectiveOutcome RunCollective(const CollectiveSetup& setup, Bytes size_bytes,
                                const RunHooks& hooks = {});

}  // namespace shardlab::cli
