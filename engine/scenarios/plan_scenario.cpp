#include "engine/scenarios/plan_scenario.h"

#include <string>
#include <utility>

#include "engine/core/error.h"
#include "engine/model/model_presets.h"

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
  RegisterScenario(std::move(s));
}

} // namespace shardlab
