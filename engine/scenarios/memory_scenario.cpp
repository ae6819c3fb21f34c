#include "engine/scenarios/memory_scenario.h"

#include <string>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/model/zero_memory.h"

namespace shardlab {

MemoryScenario MemoryFromParams(const ScenarioParams &p) {
  MemoryScenario sc;
  sc.parameters = p.Number("params");
  sc.ranks = static_cast<int>(p.Int("ranks"));
  sc.stage = static_cast<int>(p.Int("zero_stage"));
  sc.k_bytes = static_cast<int>(p.Int("k"));
  return sc;
}

namespace {

MemoryScenario CheckedMemory(const ScenarioParams& p) {
  const MemoryScenario m = MemoryFromParams(p);
  if (m.parameters <= 0) throw Error("params: must be more than 0", ErrorKind::kInvalidInput);
  return m;
}

std::map<std::string, double> MeasureMemory(const ScenarioParams& p, std::string* line) {
  const MemoryScenario m = CheckedMemory(p);
  const ZeroMemoryFormula f = ZeroMemoryPerGpu(m.parameters, m.ranks, m.stage, m.k_bytes);
  if (line != nullptr)
    *line = "ZeRO stage " + std::to_string(m.stage) + ", " +
            ZeroMemoryFormulaText(m.stage, m.k_bytes) + " per GPU = " +
            FormatFixed(f.total() / 1e9, 2) + " GB";
  return {
      {"memory_per_gpu_bytes", f.total()},
      {"memory_per_gpu_gb", f.total() / 1e9},
      {"parameter_bytes", f.parameters},
      {"gradient_bytes", f.gradients},
      {"optimizer_bytes", f.optimizer_states},
  };
}

}  // namespace

void RegisterScenario_memory_scenario() {
  using T = ParamType;
  ScenarioSpec s;
  s.name = "memory";
  s.title = "ZeRO memory (formulas)";
  s.summary = "ZeRO model-state bytes per GPU from the formulas (nothing runs)";
  s.params = {
      Param("params", T::kCount, "7.5B",
            "parameters: 175B, 7.5B (the ZeRO paper's example), 1.3B, 350M")
          .Min(1)
          .Unit("parameters"),
      Param("ranks", T::kInteger, "64", "data-parallel GPUs N")
          .Range(1, 1 << 24)
          .Unit("GPUs"),
      Param("zero_stage", T::kInteger, "0",
            "the ZeRO stage (the CLI marks it in its table of all four)")
          .Range(0, 3)
          .Unit("stage")
          .OldNames({"stage"}),
      Param("k", T::kInteger, "12",
            "optimizer bytes per parameter: 12 (the ZeRO paper), 8 (the seed "
            "texts)")
          .Range(0, 64)
          .Unit("bytes/parameter"),
  };
  s.measured = {
      {"memory_per_gpu_bytes", "bytes", "model states per GPU"},
      {"memory_per_gpu_gb", "GB", "the same in 10^9 bytes"},
      {"parameter_bytes", "bytes", "parameters per GPU"},
      {"gradient_bytes", "bytes", "gradients per GPU"},
      {"optimizer_bytes", "bytes", "optimizer states per GPU"},
  };
  s.check = [](const ScenarioParams& p) { CheckedMemory(p); };
  s.measure = MeasureMemory;
  RegisterScenario(std::move(s));
}

} // namespace shardlab
