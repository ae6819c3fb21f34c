// LibraryCalls: the simulator's handling of library collectives (kCollective
// ops, `--algo nccl`): each call is timed by the NCCL model (nccl_model.h)
// and its data computed on the host buffers, as the library would leave it.
//
//   rank 0  ──[ ncclAllReduce .............. ]
//   rank 1  ────────[ ncclAllReduce ........ ]   every rank's op starts when
//   rank 2  ──────[ ncclAllReduce .......... ]   the rank calls it; all end
//                        last arrival ─┘   └─ + the model's time
//
// A call is the set of kCollective ops that share a collective_seq (one per
// rank, as NCCL needs every rank of the communicator to join).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/backends/sim/nccl_model.h"
#include "engine/plan/host_data.h"
#include "engine/plan/plan.h"
#include "engine/topology/topology.h"

namespace shardlab {

class LibraryCalls {
 public:
  /// Groups the plan's kCollective ops into calls and times each on the
  /// topology (`rank_gpu_node`: node id of each rank's GPU). Throws Error
  /// naming the op when one rank makes the same call twice.
  void Load(const Plan& plan, const Topology& topology, std::span<const std::int32_t> rank_gpu_node);
  /// Back to no rank having arrived.
  void Reset();
  bool empty() const { return calls_.empty(); }

  /// Op `id` (a kCollective) was issued. Returns true when it was the last
  /// rank of its call to arrive: the call then runs for duration_ns(id).
  bool Arrive(OpId id);
  TimeNs duration_ns(OpId id) const { return calls_[call_of_[id]].duration_ns; }
  std::span<const OpId> members(OpId id) const { return calls_[call_of_[id]].ops; }
  /// The model's choice for the call of op `id`, "ring/LL128".
  const std::string& choice(OpId id) const { return calls_[call_of_[id]].choice; }

  /// Applies the call's data once (the first member to finish does it).
  void ApplyData(const Plan& plan, OpId id, HostBuffers& data);

 private:
  struct Call {
    std::vector<OpId> ops;
    TimeNs duration_ns = 0;
    std::string choice;
    int arrived = 0;
    bool applied = false;
  };
  std::vector<Call> calls_;
  std::vector<std::int32_t> call_of_;  // per op: its call, or -1
};

}  // namespace shardlab
