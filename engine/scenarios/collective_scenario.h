// CollectiveScenario: one collective from named parameters to a runnable,
// checkable plan. Shared by the CLI (run, sweep, demo) and the app's
// scenario panel, so both accept and reject exactly the same things.
//
//   CollectiveScenario {kind, algo, ranks, size, topology name, ring order}
//        │ CheckCollectiveScenario: every check, ring order, formula (no plan)
//        │ PrepareCollective = load topology + check + build the plan
//        ▼
//   PreparedCollective {params, plan, topology, ring order, formula}
//        │ Executor(backend) ... events
//        ▼
//   SummarizeCollective(prepared, run end, events, backend) -> metrics + verification
//
// Errors are shardlab::Error (kInvalidInput) whose message starts with the
// field in scenario terms, so a front end can point at it: "ranks: ",
// "size: ", "root: ", "ring order: ", "algo: ", "backend: ", "topology: ".
// (The CLI turns "ranks: ..." into "--ranks: ...".)
//
// The alpha-beta prediction. With n ranks, M = size_bytes (one rank's
// buffer), B = the slowest route bandwidth among the GPU pairs the algorithm
// uses (per direction; 1 GB/s = 1 B/ns) and alpha = the latency of the
// slowest such route, each logical step moves one chunk of M/n per pair:
//
//   ring all-reduce               2(n-1)·(α + M/(n·B))
//   ring reduce-scatter, gather    (n-1)·(α + M/(n·B))
//   ring broadcast, reduce        2(n-1)·(α + M/(n·B))  n pieces pipelined over n-1 hops
//   direct all-to-all              (n-1)·(α + M/(n·B))  one block per step and rank;
//                                                       lower bound α + (n-1)/n·M/B
//   tree all-reduce (estimate)    S·(α + 2M/(K·B))     S = K + 2d - 1 steps of pieces
//                                                       of M/(2K); the busiest rank (inner
//                                                       in one tree, leaf in the other)
//                                                       sends about four per step (tree.cpp)
//
// Contention (shared buses, PCIe switches, a CPU staging traffic) is not in
// the formula: that is what the simulator adds, and what the labs compare.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/verify.h"
#include "engine/plan/plan.h"
#include "engine/run/backend.h"
#include "engine/run/metrics.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/topology/topology.h"

namespace shardlab {

struct CollectiveScenario {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  int ranks = 8;                     // 1 .. the topology's GPU count; rank r on GPU r
  Bytes size_bytes = 0;              // one rank's buffer (nccl-tests' "size")
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;      // ignored by kinds that do not reduce
  int root = 0;                      // broadcast and reduce only
  std::string topology = "dgx-a100"; // preset name or file path
  std::string ring_order = "auto";   // auto | rank | "0,3,2,1" (checked for every algo)
  std::string backend = "sim";
  std::uint64_t seed = 1;
  bool timing_only = false;
  /// The model of one machine's host and memory (the simulator; the CLI's
  /// `--topology this` sets the same RunOptions from a device profile):
  /// 0: rank r on GPU r; N: the ranks are virtual devices of the
  /// topology's first N GPUs (rank r on GPU r mod N), sharing each GPU's
  /// memory bandwidth (RunOptions::shared_device_memory).
  int on_gpus = 0;
  TimeNs issue_ns = 0;     // RunOptions::op_issue_ns: the one host thread's cost per op issued
  TimeNs graph_op_ns = 0;  // RunOptions::graph_op_ns: a CUDA graph replay's delay per dependent op
};

/// The run options of the scenario on the simulator: seed, timing_only,
/// and the machine model above (placement, shared memory, host issue).
RunOptions CollectiveRunOptions(const CollectiveScenario& scenario);

/// The scenario the "collective" spec's parameters describe (backend "sim",
/// seed 1: a front end sets its own). ranks "all" means every GPU of the
/// topology: of `topology` when given, else of the one the parameters name.
/// algo "auto" is ring, direct for all-to-all.
CollectiveScenario CollectiveFromParams(const ScenarioParams& params,
                                        const Topology* topology = nullptr);

struct PreparedCollective {
  CollectiveScenario scenario;
  Topology topology;
  CollectiveParams params;
  Plan plan;                         // empty after CheckCollectiveScenario
  std::vector<int> ring_order;       // empty unless a ring
  std::string ring_order_mode;       // "auto", "rank", "custom"
  Gbps ring_bottleneck_gbps = 0;     // slowest hop of the ring; 0 if not a ring
  /// The alpha-beta formula's time for this collective on this topology
  /// (e.g. ring all-reduce 2(n-1)(alpha + M/(nB))), and the formula as text:
  /// "2(n-1)·(α + M/(n·B)) = 2·7·(700 ns + 8.39 MB / 300 GB/s) = 403 us".
  TimeNs predicted_ns = 0;
  std::string formula;
  TimeNs alpha_ns = 0;               // the formula's α: slowest route's latency
  Gbps bandwidth_gbps = 0;           // the formula's B: slowest route's bandwidth
};

/// Host memory a collective run with data may hold (its input and output
/// buffers as floats on every rank); the scenario's check refuses more
/// and asks for timing_only (the CLI's --verify-max plays this part for `run`).
inline constexpr double kMaxRealCollectiveHostBytes = 512.0 * 1024 * 1024;

/// A preset name or topology file, loaded; throws Error "topology: ...".
Topology LoadScenarioTopology(const std::string& preset_or_path);

/// Throws Error "<field>: 16 ranks but topology 'dgx-a100' has only 8 GPUs
/// (one rank per GPU)" when `count` ranks (or stages: `noun`) do not fit.
/// `named` is the topology as the user named it (empty: topology.name).
void CheckRanksFitTopology(const char* field, int count, const char* noun, const std::string& named,
                           const Topology& topology);

/// Throws Error "backend: unknown backend 'x' (available: sim or cuda)"
/// unless `backend` is registered.
void CheckScenarioBackend(const std::string& backend);

/// Every check and decision of PrepareCollective except building the plan
/// (ranks against the topology, size, root, ring order, parameters, the
/// formula), on a topology already loaded, e.g. from a cache. Cheap enough
/// for a GUI to call on each edit. The result's plan is empty.
std::unique_ptr<PreparedCollective> CheckCollectiveScenario(const CollectiveScenario& scenario,
                                                            const Topology& topology);

/// Checks and builds. Throws shardlab::Error (kInvalidInput) with a message
/// that names the field: "ranks: 16 ranks but topology 'dgx-a100' has only
/// 8 GPUs (one rank per GPU)".
std::unique_ptr<PreparedCollective> PrepareCollective(const CollectiveScenario& scenario);

/// As PrepareCollective, on a topology already loaded (a cache, a preset
/// built in code such as MakeUniformRing).
std::unique_ptr<PreparedCollective> PrepareCollective(const CollectiveScenario& scenario,
                                                      const Topology& topology);

/// The checked scenario `checked` at another size, with its plan built;
/// reuses the ring order and routes (a sweep searches the ring once).
/// Throws Error "size: ..." for a size the dtype cannot hold.
std::unique_ptr<PreparedCollective> PrepareCollectiveAtSize(const PreparedCollective& checked,
                                                            Bytes size_bytes);

struct CollectiveOutcomeSummary {
  CollectiveMetrics metrics;
  int steps = 0;
  std::size_t events = 0;
  bool checked = false;
  std::string not_checked_reason;
  VerifyResult verify;
};

/// Metrics from the events' span and, unless timing-only, the result
/// checked against the single-buffer reference using the backend's buffers.
/// `ran` is the plan the backend ran when it was moved out of
/// prepared.plan (into an Executor); null means prepared.plan.
CollectiveOutcomeSummary SummarizeCollective(const PreparedCollective& prepared,
                                             TimeNs run_end_ns, std::size_t events,
                                             const Backend& backend, const Plan* ran = nullptr);

}  // namespace shardlab
