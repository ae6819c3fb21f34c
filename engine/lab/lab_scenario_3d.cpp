// The "3d" and "plan" lab scenarios: parameters onto ThreeDScenario /
// PlannerRequest, and each result reduced to the named quantities of the
// table in lab_scenario_table.cpp (labs/README.md documents them).
#include "engine/scenarios/fault_params.h"
#include "engine/lab/lab_scenario_3d.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "engine/algorithms/parallel_grid.h"
#include "engine/algorithms/pipeline_schedule.h"
#include "engine/algorithms/three_d.h"
#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/model/model_presets.h"
#include "engine/scenarios/collective_scenario.h"
#include "engine/run/executor.h"
#include "engine/planner/planner.h"
#include "engine/scenarios/plan_scenario.h"
#include "engine/run/vector_sink.h"

namespace shardlab {
namespace {

/// The real small-model step computes on the host; above this it refuses
/// (the same bound as `shardlab-cli run 3d`).
constexpr double kMaxHostFlops = 2e10;

std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

/// The engine's "dp: ..." messages already name the field; others get `field`.
Error WithField(const Error& e, const std::string& field) {
  const std::string message = e.what();
  const std::size_t colon = message.find(": ");
  if (colon != std::string::npos && colon < 16 && message.find(' ') > colon) {
    return Error(message, ErrorKind::kInvalidInput);
  }
  return Error(field + ": " + message, ErrorKind::kInvalidInput);
}

Bytes GpuMemory(const Topology& topology) {
  return topology.nodes[topology.gpus[0]].device.memory_bytes;
}

std::unique_ptr<PreparedThreeD> PrepareLabThreeD(const ScenarioParams& p) {
  const ThreeDScenario sc = ThreeDFromLabParams(p);
  try {
    return PrepareThreeD(sc);
  } catch (const Error& e) {
    throw WithField(e, "model");
  }
}

PlannerRequest PlanRequest(const ScenarioParams& p, Topology* topology) {
  try {
    *topology = LoadScenarioTopology(p.Text("topology"));
  } catch (const Error& e) {
    throw Error(std::string("topology: ") + e.what(), ErrorKind::kInvalidInput);
  }
  const PlannerRequest request = PlanFromParams(p, *topology);
  if (request.gpus > topology->num_gpus()) {
    throw Error("ranks: must be 1 .. " + std::to_string(topology->num_gpus()) + " (the GPUs of '" +
                    p.Text("topology") + "'), not " + std::to_string(request.gpus),
                ErrorKind::kInvalidInput);
  }
  const int dp = static_cast<int>(p.Int("dp")), pp = static_cast<int>(p.Int("pp")),
            tp = static_cast<int>(p.Int("tp"));
  const bool any = dp != 0 || pp != 0 || tp != 0;
  if (any && (dp < 1 || pp < 1 || tp < 1 || double(dp) * pp * tp != request.gpus)) {
    throw Error("dp: the layout to look up needs dp, pp and tp >= 1 with dp*pp*tp = ranks (" +
                    std::to_string(request.gpus) + "), or all three 0 for none; got " +
                    std::to_string(dp) + "*" + std::to_string(pp) + "*" + std::to_string(tp),
                ErrorKind::kInvalidInput);
  }
  return request;
}

double RecomputeNumber(Recompute r) {
  return r == Recompute::kNone ? 0 : r == Recompute::kSelective ? 1 : 2;
}

}  // namespace

ThreeDScenario ThreeDFromLabParams(const ScenarioParams& p) {
  ThreeDScenario sc = ThreeDFromParams(p);
  const bool small = sc.model == "small";
  const bool timing_only = p.Bool("timing_only");
  if (!small && !timing_only) {
    throw Error("timing_only: model '" + sc.model +
                    "' is paper-sized and runs without data: set timing_only = true",
                ErrorKind::kInvalidInput);
  }
  if (small && timing_only) {
    throw Error("timing_only: the small model always runs with data (it is checked against "
                "one device); timing_only is for the model presets",
                ErrorKind::kInvalidInput);
  }
  if (small) {
    for (const char* name : {"micro_batch", "global_batch"}) {
      if (p.Int(name) != 0) {
        throw Error(std::string(name) + ": only for a model preset (the small model uses batch "
                                        "and microbatches)",
                    ErrorKind::kInvalidInput);
      }
    }
    const double flops = 6.0 * sc.mlp.batch * double(sc.mlp.width) * sc.mlp.width * sc.mlp.layers;
    if (flops > kMaxHostFlops) {
      throw Error("width: one real step is " + Fixed(flops / 1e9, 0) +
                      " GFLOP of host arithmetic, above the 20 GFLOP a lab computes (a smaller "
                      "width, layers or batch, or a model preset with timing_only)",
                  ErrorKind::kInvalidInput);
    }
  }
  return sc;
}

// The same checks as PrepareThreeD without building the plan (a 512-GPU
// plan takes seconds; the validator checks every step and variant).
void CheckThreeDLab(const ScenarioParams& p) {
  const ThreeDScenario sc = ThreeDFromLabParams(p);
  try {
    CheckParallelGrid(sc.grid);
    const Topology topology = LoadScenarioTopology(sc.topology);
    CheckRanksFitTopology("grid", sc.grid.ranks(), "rank", sc.topology, topology);
    if (sc.timing_only()) {
      ThreeDTimingParams params;
      params.grid = sc.grid;
      params.schedule = sc.schedule;
      params.zero_stage = sc.zero_stage;
      params.model = FindModelPreset(sc.model);
      if (sc.micro_batch != 0) params.model.micro_batch = sc.micro_batch;
      if (sc.global_batch != 0) params.model.global_batch = sc.global_batch;
      params.dp_buckets = sc.dp_buckets;
      CheckThreeDTimingParams(params);
    } else {
      ThreeDParams params;
      params.grid = sc.grid;
      params.schedule = sc.schedule;
      params.microbatches = sc.microbatches;
      params.zero_stage = sc.zero_stage;
      params.model = sc.mlp;
      CheckThreeDParams(params);
    }
  } catch (const Error& e) {
    throw WithField(e, "model");
  }
}

LabRunResult RunThreeDLab(const ScenarioParams& p) {
  std::unique_ptr<PreparedThreeD> prepared = PrepareLabThreeD(p);
  const ThreeDScenario& sc = prepared->scenario;
  RunOptions options;
  options.seed = sc.seed;
  options.timing_only = sc.timing_only();
  options.faults = PrepareRunFaults(p, "sim", prepared->topology, prepared->three_d.plan);
  Executor executor(CreateBackend("sim"), std::move(prepared->three_d.plan), prepared->topology,
                    options);
  VectorSink sink;
  executor.RunToEnd(sink);
  if (executor.state() != ExecutorState::kDone) {
    throw Error("the run failed: " + executor.error(), ErrorKind::kRuntime);
  }
  const ThreeDSummary s =
      SummarizeThreeD(*prepared, sink.events, executor.backend(), &executor.plan());
  if (s.check.checked && !s.check.correct) {
    throw Error("the trained parameters differ from the single-device reference (" +
                    s.check.worst_tensor + "): a bug in the engine, please report it",
                ErrorKind::kRuntime);
  }
  // Paper scale: the formulas' model states + activations; the small model:
  // the simulator's tracked peak of every buffer.
  const double memory = sc.timing_only()
                            ? s.memory.model_states_bytes + s.memory.activations_bytes
                            : static_cast<double>(s.memory.tracked_peak_bytes);
  const double gpu_memory = static_cast<double>(GpuMemory(prepared->topology));
  const double parameters =
      sc.timing_only() ? prepared->shape.TotalParameters()
                       : double(sc.mlp.layers) * sc.mlp.width * sc.mlp.width;
  auto traffic = [&](GroupKind kind) { return s.traffic[static_cast<int>(kind)]; };
  const double step_ns = static_cast<double>(s.step_ns);
  LabRunResult out;
  out.measured = {
      {"step_time_s", step_ns * 1e-9},
      {"step_time_ms", step_ns * 1e-6},
      {"compute_ms", s.compute_ns * 1e-6},
      {"compute_fraction", step_ns > 0 ? s.compute_ns / step_ns : 0.0},
      {"bubble_formula", s.bubble_formula},
      {"pipeline_microbatches", static_cast<double>(s.microbatches)},
      {"tp_bytes_per_gpu",
       static_cast<double>(traffic(GroupKind::kTensor).max_sent_bytes_per_rank)},
      {"pp_bytes_per_gpu",
       static_cast<double>(traffic(GroupKind::kPipeline).max_sent_bytes_per_rank)},
      {"dp_bytes_per_gpu", static_cast<double>(traffic(GroupKind::kData).max_sent_bytes_per_rank)},
      {"tp_time_ms", traffic(GroupKind::kTensor).max_busy_ns_per_rank * 1e-6},
      {"pp_time_ms", traffic(GroupKind::kPipeline).max_busy_ns_per_rank * 1e-6},
      {"dp_time_ms", traffic(GroupKind::kData).max_busy_ns_per_rank * 1e-6},
      {"parameter_count", parameters},
      {"model_state_bytes", s.memory.model_states_bytes},
      {"activation_bytes", s.memory.activations_bytes},
      {"memory_per_gpu_bytes", memory},
      {"gpu_memory_bytes", gpu_memory},
      {"fits", gpu_memory > 0 && memory <= gpu_memory ? 1.0 : 0.0},
      {"model_flops", s.model_flops},
      {"mfu", s.mfu},
      {"checked", s.check.checked ? 1.0 : 0.0},
      {"correct", s.check.checked && s.check.correct ? 1.0 : 0.0},
  };
  const ParallelGrid& g = sc.grid;
  out.summary = "3D " + g.Text() + " ZeRO-" + std::to_string(sc.zero_stage) + " " +
                PipelineScheduleName(sc.schedule) + ", " + sc.model + " on " + sc.topology +
                ": step " + FormatTime(s.step_ns) + ", compute " +
                Fixed(100.0 * out.measured["compute_fraction"], 1) + "%, MFU " +
                Fixed(100.0 * s.mfu, 1) + "%, memory " + FormatBytes(static_cast<Bytes>(memory)) +
                " per GPU of " + FormatBytes(static_cast<Bytes>(gpu_memory)) +
                (out.measured["fits"] > 0 ? " (fits)" : " (does NOT fit)");
  if (s.check.checked) out.summary += ", matches one device";
  return out;
}

void CheckPlanLab(const ScenarioParams& p) {
  Topology topology;
  const PlannerRequest request = PlanRequest(p, &topology);
  (void)request;
}

LabRunResult RunPlanLab(const ScenarioParams& p) {
  Topology topology;
  const PlannerRequest request = PlanRequest(p, &topology);
  PlannerResult result;
  try {
    result = PlanParallelLayouts(request, topology);
  } catch (const Error& e) {
    throw WithField(e, "model");
  }
  double rejected[6] = {0, 0, 0, 0, 0, 0};
  for (const PlanCandidate& c : result.rejected) rejected[static_cast<int>(c.reason)] += 1;
  LabRunResult out;
  LabValues& m = out.measured;
  m["feasible_count"] = static_cast<double>(result.feasible.size());
  m["rejected_count"] = static_cast<double>(result.rejected.size());
  m["rejected_tp_heads"] = rejected[static_cast<int>(RejectReason::kTpSplitsHeads)];
  m["rejected_pp_layers"] = rejected[static_cast<int>(RejectReason::kPpSplitsLayers)];
  m["rejected_tp_crosses_node"] = rejected[static_cast<int>(RejectReason::kTpCrossesNode)];
  m["rejected_batch"] = rejected[static_cast<int>(RejectReason::kBatchNotDivisible)];
  m["rejected_interleave"] = rejected[static_cast<int>(RejectReason::kInterleaveInvalid)];
  m["rejected_memory"] = rejected[static_cast<int>(RejectReason::kOutOfMemory)];
  m["usable_memory_bytes"] = result.usable_memory_bytes;
  // With no feasible layout the best_ quantities are 0: a formula can test
  // feasible_count first.
  PlanCandidate best;
  if (!result.feasible.empty()) best = result.feasible.front();
  const ParallelLayout& l = best.layout;
  const bool have = !result.feasible.empty();
  m["best_dp"] = have ? l.dp : 0;
  m["best_pp"] = have ? l.pp : 0;
  m["best_tp"] = have ? l.tp : 0;
  m["best_zero"] = have ? l.zero_stage : 0;
  m["best_micro_batch"] = have ? l.micro_batch : 0;
  m["best_microbatches"] = have ? l.micro_batches : 0;
  m["best_interleave"] = have ? l.interleave : 0;
  m["best_recompute"] = have ? RecomputeNumber(l.recompute) : 0;
  m["best_step_time_s"] = have ? best.time.step_ns * 1e-9 : 0;
  m["best_mfu"] = have ? best.time.mfu : 0;
  m["best_memory_per_gpu_bytes"] = have ? best.memory.total() : 0;
  // The layout named by dp, pp, tp: its fastest feasible configuration.
  const int dp = static_cast<int>(p.Int("dp")), pp = static_cast<int>(p.Int("pp")),
            tp = static_cast<int>(p.Int("tp"));
  double layout_feasible = 0, layout_rank = 0, layout_step = 0, layout_mfu = 0, layout_zero = 0;
  for (std::size_t i = 0; i < result.feasible.size(); ++i) {
    const PlanCandidate& c = result.feasible[i];
    if (c.layout.dp != dp || c.layout.pp != pp || c.layout.tp != tp) continue;
    if (layout_feasible++ == 0) {
      layout_rank = static_cast<double>(i + 1);
      layout_step = c.time.step_ns * 1e-9;
      layout_mfu = c.time.mfu;
      layout_zero = c.layout.zero_stage;
    }
  }
  m["layout_feasible"] = layout_feasible;
  m["layout_rank"] = layout_rank;
  m["layout_step_time_s"] = layout_step;
  m["layout_mfu"] = layout_mfu;
  m["layout_zero"] = layout_zero;
  out.summary = "plan " + request.model.name + " on " + std::to_string(request.gpus) + " GPUs: " +
                std::to_string(result.feasible.size()) + " configurations fit, " +
                std::to_string(result.rejected.size()) + " rejected";
  if (have) {
    out.summary += "; best dp " + std::to_string(l.dp) + " pp " + std::to_string(l.pp) + " tp " +
                   std::to_string(l.tp) + " ZeRO-" + std::to_string(l.zero_stage) + ", " +
                   Fixed(best.time.step_ns * 1e-9, 2) + " s per step, MFU " +
                   Fixed(100 * best.time.mfu, 1) + "%";
  }
  return out;
}

}  // namespace shardlab
