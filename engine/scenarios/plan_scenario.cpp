#include "engine/scenarios/plan_scenario.h"

#include <string>
#include <utility>

#include "engine/core/error.h"
#include "engine/model/model_presets.h"
#include "engine/core/units.h"
#include "engine/planner/planner.h"
#include "engine/scenarios/collective_scenario.h"

namespace shardlab {

PlannerRequest PlanFromParams(const ScenarioParams& p, const Topology& topology) {
  PlannerRequest request;
  request.model = FindModelPreset(p.Text("model"));
  request.gpus = static_cast<int>(p.Int("ranks"));
  if (request.gpus == 0) request.gpus = topology.num_gpus();
  request.gpu_memory_bytes = p.Size("gpu_memory");
  const int global_batch = static_cast<int>(p.Int("global_batch"));
  if (global_batch > 0) request.model.global_batch = global_batch;
  return request;
}

ScenarioParams LayoutRunParams(const ParallelLayout& layout) {
  const ScenarioSpec* three_d = FindScenario("3d");
  if (three_d == nullptr) throw Error("scenario: no 3d scenario to run a layout on");
  ScenarioParams params(*three_d);
  params.Set("dp", std::to_string(layout.dp));
  params.Set("pp", std::to_string(layout.pp));
  params.Set("tp", std::to_string(layout.tp));
  params.Set("zero_stage", std::to_string(layout.zero_stage));
  return params;
}

namespace {

/// The engine's "dp: ..." messages already name the field; others get `field`.
Error WithField(const Error& e, const std::string& field) {
  const std::string message = e.what();
  const std::size_t colon = message.find(": ");
  if (colon != std::string::npos && colon < 16 && message.find(' ') > colon) {
    return Error(message, ErrorKind::kInvalidInput);
  }
  return Error(field + ": " + message, ErrorKind::kInvalidInput);
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

std::map<std::string, double> MeasurePlan(const ScenarioParams& p, std::string* line) {
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
  std::map<std::string, double> m;
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
  std::string text = "plan " + request.model.name + " on " + std::to_string(request.gpus) + " GPUs: " +
                std::to_string(result.feasible.size()) + " configurations fit, " +
                std::to_string(result.rejected.size()) + " rejected";
  if (have) {
    text += "; best dp " + std::to_string(l.dp) + " pp " + std::to_string(l.pp) + " tp " +
                   std::to_string(l.tp) + " ZeRO-" + std::to_string(l.zero_stage) + ", " +
                   FormatFixed(best.time.step_ns * 1e-9, 2) + " s per step, MFU " +
                   FormatFixed(100 * best.time.mfu, 1) + "%";
  }
  if (line != nullptr) *line = text;
  return m;
}


}  // namespace

void RegisterScenario_plan_scenario() {
  using T = ParamType;
  std::vector<std::string> presets;
  for (const TransformerShape &shape : ModelPresets())
    presets.push_back(shape.name);
  ScenarioSpec s;
  s.name = "plan";
  s.title = "3D planner";
  s.summary =
      "the 3D planner: every DP x PP x TP layout, ranked by analytic step time";
  ParamSpec topology = TopologyParam("a cluster preset or topology file");
  topology.default_text = "64x-dgx-a100-ib";
  s.params = {
      Param("model", T::kChoice, "gpt3-175b", "a model preset")
          .Choices(presets)
          .Noun("preset")
          .Short('m'),
      Param("ranks", T::kInteger, "0",
            "GPUs to plan for, the topology's first N; 0: all of it")
          .Range(0, 1 << 24)
          .Unit("GPUs")
          .OldNames({"gpus"}),
      topology,
      Param("gpu_memory", T::kSize, "0",
            "memory per GPU, e.g. 80G, 40G; 0: the GPU's own")
          .Min(0)
          .Unit("bytes"),
      Param("global_batch", T::kInteger, "0",
            "sequences per optimizer step; 0: the model's")
          .Range(0, 1 << 24)
          .Unit("sequences"),
      Param("dp", T::kInteger, "0",
            "a layout to look up (dp, pp, tp all 0: none)")
          .Range(0, 1 << 24)
          .Unit("GPUs")
          .NoCli(),
      Param("pp", T::kInteger, "0", "a layout to look up")
          .Range(0, 1 << 24)
          .Unit("GPUs")
          .NoCli(),
      Param("tp", T::kInteger, "0", "a layout to look up")
          .Range(0, 1 << 24)
          .Unit("GPUs")
          .NoCli(),
  };
  s.measured = {
      {"feasible_count", "", "configurations that fit"},
      {"rejected_count", "", "configurations rejected"},
      {"rejected_tp_heads", "",
       "rejected: tp does not divide heads / MLP width"},
      {"rejected_pp_layers", "", "rejected: pp does not divide the layers"},
      {"rejected_tp_crosses_node", "", "rejected: a TP group leaves NVLink"},
      {"rejected_batch", "", "rejected: dp x b does not divide the batch"},
      {"rejected_interleave", "", "rejected: interleaving does not divide"},
      {"rejected_memory", "", "rejected: out of memory"},
      {"usable_memory_bytes", "bytes",
       "the share of a GPU the estimate may fill"},
      {"best_dp", "", "the fastest layout's dp"},
      {"best_pp", "", "its pp"},
      {"best_tp", "", "its tp"},
      {"best_zero", "", "its ZeRO stage"},
      {"best_micro_batch", "", "its b"},
      {"best_microbatches", "", "its m"},
      {"best_interleave", "", "its v"},
      {"best_recompute", "", "its recomputation: 0 none, 1 selective, 2 full"},
      {"best_step_time_s", "s", "its analytic step time"},
      {"best_mfu", "", "its MFU"},
      {"best_memory_per_gpu_bytes", "bytes", "its memory estimate per GPU"},
      {"layout_feasible", "",
       "configurations of the given dp, pp, tp that fit"},
      {"layout_rank", "", "the rank of its fastest (1 = best; 0: none fits)"},
      {"layout_step_time_s", "s", "that configuration's step time"},
      {"layout_mfu", "", "its MFU"},
      {"layout_zero", "", "its ZeRO stage"},
  };
  s.check = [](const ScenarioParams& p) {
    Topology topology;
    PlanRequest(p, &topology);
  };
  s.measure = MeasurePlan;
  s.resolve = [](const ScenarioParams& p, std::map<std::string, double>& values) {
    if (p.Int("ranks") != 0) return;
    values["ranks"] = values["gpus"] = LoadScenarioTopology(p.Text("topology")).num_gpus();
  };
  RegisterScenario(std::move(s));
}

} // namespace shardlab
