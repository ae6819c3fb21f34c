// The simulator backend: a discrete-event model of a Plan on a Topology,
// with real float32 arithmetic on host buffers (unless timing-only).
//
//   ready ops ──► compute/copy/reduce: busy for max(flops/rate, bytes/HBM)
//             └─► send+recv both ready (rendezvous)
//                   ──► route latency ──► fluid flow over link directions
//                                         (FlowNetwork: fair share)
//                   ──► done: data applied, both events emitted
//             └─► library collective (kCollective, --algo nccl): waits for
//                 every rank of its call, then the NCCL model's time
//                 (library_calls.h, nccl_model.h)
//
// The model of a real machine (RunOptions::shared_device_memory, set by
// `--topology this`): each GPU's HBM is one more resource of the flow
// network, of memory_gbps. A transfer between two ranks of one GPU (virtual
// devices) is a flow of 2x its bytes (3x when it reduces) through it, a
// memory-bound kernel a flow of the bytes it touches; all share it fairly
// with whatever else runs there. RunOptions::op_issue_ns makes op k of the
// plan (a transfer counts once) wait until k issue costs have passed: one
// host thread enqueues the whole plan in order. host_lane() shows exactly
// those issues: one span of op_issue_ns per unit, back to back from 0, on
// the row of the rank whose op it is (a transfer: its send's rank), clock
// simulated; empty when op_issue_ns is 0 (a graph replay issues nothing
// per op).
//
// Time is exact across steps: RunThroughStep(k) advances simulated time
// until every op of steps <= k has finished, and stops there; ops of later
// steps that were ready start on time and may already be in flight (or
// done, where the algorithm pipelines), just as on hardware. So stepping and
// running to the end give the same timeline.
#pragma once

#include <memory>

#include "engine/run/backend.h"

namespace shardlab {

std::unique_ptr<Backend> CreateSimBackend();

/// What the simulator is and can do (registered with CreateSimBackend).
inline BackendDeclaration SimBackendDeclaration() {
  BackendDeclaration d;
  d.name = "sim";
  d.description = "discrete-event simulator: link sharing, latency, real float32 data (default)";
  BackendTraits& t = d.traits;
  t.event_clock = ClockKind::kSimulated;
  t.computes_in_float32 = true;
  t.slow_rank = t.failed_rank = t.failed_link = FaultSupport::kModelled;
  t.models_machine = true;
  t.simulator = true;
  return d;
}

}  // namespace shardlab
