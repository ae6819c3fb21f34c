// DpTrainScenario: multi-step data-parallel training of the small MLP with
// the training techniques the seed texts teach, from the "dp-train" spec's
// parameters to a trained run, its loss curve and its measurements.
//
//   ScenarioParams "dp-train" ──► DpTrainFromParams ──► DpTrainScenario
//        │ PrepareDpTrain: RunDpTraining (host arithmetic, engine/train/),
//        │   the same config without the technique (the baseline), the
//        │   timing plan (engine/train/dp_train_plan.h)
//        ▼
//   PreparedDpTrain {scenario, topology, result, baseline, plan}
//        │ Executor(sim, timing only) ... events (the app, `run dp-train`)
//        ▼
//   SummarizeDpTrain -> every quantity of the spec's `measured` list
//
// Accumulation, recomputation and plain data parallel are checked against
// the single-device batch in double (MlpBoundedReference, its bounds); the
// others change the arithmetic on purpose and are compared with the
// baseline's loss curve instead.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>

#include "engine/core/event.h"
#include "engine/run/backend.h"
#include "engine/run/faults.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/topology/topology.h"
#include "engine/train/dp_train_plan.h"
#include "engine/train/dp_trainer.h"
#include "engine/verify/verdict.h"

namespace shardlab {

struct DpTrainScenario {
  DpTrainConfig config;
  std::string topology = "pcie-gen3-4gpu";
  Faults faults;                 // slow_rank
  int plan_steps = 4;            // steps laid out on the timeline
};

/// Throws Error(kInvalidInput) "<param>: message" for values the spec's
/// ranges cannot say (topk in (0, 1], overflow R@STEP, recompute_layers).
DpTrainScenario DpTrainFromParams(const ScenarioParams& params);

struct PreparedDpTrain {
  DpTrainScenario scenario;
  Topology topology;
  DpTrainResult result;
  DpTrainResult baseline;        // synchronous, fp32, uncompressed, no accumulation split
  DpTrainPlan plan;              // moved out when an Executor takes it
  DpTrainPlan baseline_plan;     // for the time a technique saves or costs
};

std::unique_ptr<PreparedDpTrain> PrepareDpTrain(const DpTrainScenario& scenario);

struct DpTrainSummary {
  std::map<std::string, double> measured;  // the spec's quantities
  Verdict verdict;                          // against the reference, or not checked (why)
  std::string text;                         // the loss curve and the lines `run dp-train` prints
};

/// `events` of the prepared plan's run (timing only) on `backend`;
/// `baseline_events` of the baseline plan's.
DpTrainSummary SummarizeDpTrain(const PreparedDpTrain& prepared, std::span<const Event> events,
                                const Backend& backend, std::span<const Event> baseline_events,
                                const Plan& ran);

/// Prepare, run both plans on the simulator, summarise: the spec's measure.
DpTrainSummary MeasureDpTrain(const ScenarioParams& params);

}  // namespace shardlab
