// The elastic-recovery scenario (`run elastic`, a lab's scenario =
// "elastic"): the job of engine/algorithms/elastic.h run on the simulator,
// with its checkpoints written as real files and read back at the restart.
//
//   RunThrough(checkpoint's step) ──► BufferData(ckpt) ──► dir/ckpt-4.bin (temp file + rename)
//   ...
//   RunThrough(reload step − 1)   ──► read dir/ckpt-4.bin back: its bytes must equal what the
//                                     plan reloads, else the run stops (a torn checkpoint)
//   RunToEnd                      ──► final parameters of every rank vs the single-device
//                                     reference (MlpBoundedReference) that trains the same
//                                     steps and redoes the lost ones from the same checkpoint
//
// Measured from the events: when the rank failed, the time and GPU work
// lost since the checkpoint, the recovery (failure to the last re-shard
// transfer), the re-shard bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/algorithms/elastic.h"
#include "engine/core/event.h"
#include "engine/run/faults.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/topology/topology.h"
#include "engine/verify/verdict.h"

namespace shardlab {

struct ElasticScenario {
  ElasticParams params;
  std::string topology = "dgx-a100";
  std::uint64_t seed = 1;
  std::string checkpoint_dir = "auto";  // "auto": a fresh folder under the system's temp folder
};

ElasticScenario ElasticFromParams(const ScenarioParams& params);

/// The stragglers and slow links the parameters name (slow_rank,
/// throttle_link), checked against the job; throttles applied to `topology`.
Faults ElasticFaults(const ScenarioParams& params, Topology& topology, const ElasticPlan& job);

struct ElasticOutcome {
  std::vector<Event> events;
  TimeNs job_ns = 0;          // the whole job
  TimeNs failure_ns = 0;      // the failed rank's last op ends
  TimeNs checkpoint_ns = 0;   // the checkpoint the job restarts from was taken
  TimeNs lost_ns = 0;         // failure − checkpoint: progress lost
  TimeNs lost_gpu_ns = 0;     // GPU time of the lost ops, all ranks
  TimeNs recovery_ns = 0;     // failure to the end of the re-shard
  std::vector<std::string> checkpoint_files;  // written, in order
  std::string reloaded_file;  // the one read back at the restart
  Verdict verdict;
  double max_error = 0;       // largest |got − want| / max|want| over the final parameters
};

/// Builds the plan, runs it on the simulator (`faults`: slow ranks and
/// throttles, already applied to `topology`), writes and reads the
/// checkpoints, checks the result. Throws Error(kInvalidInput) for bad
/// parameters, Error(kRuntime) when a checkpoint file cannot be written or
/// reads back different.
ElasticOutcome RunElastic(const ElasticScenario& scenario, const ElasticPlan& job,
                          const Topology& topology, const Faults& faults);

}  // namespace shardlab
