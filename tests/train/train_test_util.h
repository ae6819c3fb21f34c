// Helpers of the training-technique tests: a small config and a timing-only
// simulator run of a plan.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/event.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"
#include "engine/train/dp_train_plan.h"
#include "engine/train/dp_trainer.h"

namespace shardlab::testing {

inline DpTrainConfig SmallConfig(int ranks = 4, int batch = 32, int steps = 1) {
  DpTrainConfig c;
  c.ranks = ranks;
  c.model.layers = 4;
  c.model.width = 16;
  c.model.batch = batch;
  c.model.optimizer = OptimizerKind::kSgd;
  c.model.learning_rate = 0.05f;
  c.steps = steps;
  return c;
}

struct SimRun {
  std::unique_ptr<Executor> executor;
  VectorSink sink;
};

inline std::unique_ptr<SimRun> RunOnSim(Plan plan, const std::string& topology = "pcie-gen3-4gpu") {
  auto run = std::make_unique<SimRun>();
  RunOptions options;
  options.timing_only = true;
  run->executor = std::make_unique<Executor>(CreateBackend("sim"), std::move(plan), MakeTopologyPreset(topology), options);
  run->executor->RunToEnd(run->sink);
  return run;
}

/// Bytes rank `rank`'s Send ops carry, from the plan itself.
inline Bytes PlanSentBytes(const Plan& plan, int rank) {
  Bytes sent = 0;
  for (const Op& op : plan.ops)
    if (op.kind == OpKind::kSend && op.rank == rank) sent += op.bytes;
  return sent;
}

}  // namespace shardlab::testing
