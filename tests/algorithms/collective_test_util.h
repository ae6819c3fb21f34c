// Helpers shared by the collective tests: build a collective, run it on the
// reference host executor and verify it.
#pragma once

#include <cstdint>
#include <string>

#include "engine/algorithms/collective.h"
#include "engine/algorithms/verify.h"
#include "engine/plan/host_data.h"
#include "engine/plan/plan.h"
#include "engine/plan/validate.h"

namespace shardlab::testing {

inline CollectiveParams MakeParams(CollectiveKind kind, CollectiveAlgo algo, int ranks,
                                   std::int64_t count) {
  CollectiveParams params;
  params.kind = kind;
  params.algo = algo;
  params.ranks = ranks;
  params.count = count;
  return params;
}

/// A plan and the host buffers after running it with ExecutePlanInOrder.
struct HostRun {
  Plan plan;
  HostBuffers buffers;
  VerifyResult verify;
};

inline HostRun RunOnHost(const CollectiveParams& params, std::uint64_t seed) {
  HostRun run;
  run.plan = BuildCollective(params);
  ValidatePlan(run.plan);
  AllocateHostBuffers(run.plan, seed, run.buffers);
  ExecutePlanInOrder(run.plan, run.buffers);
  const HostBuffers& buffers = run.buffers;
  run.verify = VerifyCollective(params, run.plan, seed,
                                [&buffers](BufferId id) { return buffers.view(id); });
  return run;
}

inline std::string Describe(const CollectiveParams& params) {
  return std::string(CollectiveAlgoName(params.algo)) + " " + CollectiveKindName(params.kind) +
         " ranks=" + std::to_string(params.ranks) + " count=" + std::to_string(params.count) +
         " root=" + std::to_string(params.root) + " tree_chunks=" +
         std::to_string(params.tree_chunks);
}

}  // namespace shardlab::testing
