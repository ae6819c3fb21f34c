// The "3d" and "plan" lab scenarios report the engine's own numbers: each
// measured quantity is compared with a direct run of ThreeDScenario or
// PlanParallelLayouts with the same settings, and bad parameters get one
// message naming the parameter.
#include <gtest/gtest.h>

#include <memory>

#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"
#include "engine/model/zero_memory.h"
#include "engine/run/executor.h"
#include "engine/planner/planner.h"
#include "engine/scenarios/three_d_scenario.h"
#include "engine/run/vector_sink.h"
#include "engine/topology/presets.h"

namespace shardlab {
namespace {

LabParam Num(const std::string& name, double value) {
  LabParam p;
  p.name = name;
  p.type = LabParamType::kNumber;
  p.number = value;
  return p;
}
LabParam Text(const std::string& name, const std::string& value) {
  LabParam p;
  p.name = name;
  p.text = value;
  return p;
}
LabParam Flag(const std::string& name, bool value) {
  LabParam p;
  p.name = name;
  p.type = LabParamType::kBool;
  p.flag = value;
  return p;
}

struct Direct {
  std::unique_ptr<PreparedThreeD> prepared;
  ThreeDSummary summary;
};

Direct RunDirect(const ThreeDScenario& scenario) {
  Direct d;
  d.prepared = PrepareThreeD(scenario);
  RunOptions options;
  options.seed = scenario.seed;
  options.timing_only = scenario.timing_only();
  Executor executor(CreateBackend("sim"), d.prepared->three_d.plan, d.prepared->topology, options);
  VectorSink sink;
  executor.RunToEnd(sink);
  EXPECT_EQ(executor.state(), ExecutorState::kDone) << executor.error();
  d.summary = SummarizeThreeD(*d.prepared, sink.events, executor.backend(), &executor.plan());
  return d;
}

std::string ErrorOf(const std::string& scenario, const std::vector<LabParam>& params) {
  try {
    RunLabScenario(scenario, params);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LabScenario3d, SmallModelReportsTheEnginesStepAndItsCheck) {
  const std::vector<LabParam> params = {Num("dp", 2), Num("pp", 2), Num("tp", 2),
                                        Num("microbatches", 4), Num("width", 64)};
  const LabRunResult lab = RunLabScenario("3d", params);
  ThreeDScenario sc;
  sc.grid = {2, 2, 2};
  sc.microbatches = 4;
  sc.mlp.layers = 8;
  sc.mlp.width = 64;
  sc.mlp.batch = 64;
  const Direct d = RunDirect(sc);
  const ThreeDSummary& s = d.summary;
  const LabValues& m = lab.measured;
  EXPECT_DOUBLE_EQ(m.at("step_time_ms"), s.step_ns * 1e-6);
  EXPECT_DOUBLE_EQ(m.at("step_time_s"), s.step_ns * 1e-9);
  EXPECT_DOUBLE_EQ(m.at("compute_fraction"), double(s.compute_ns) / s.step_ns);
  EXPECT_DOUBLE_EQ(m.at("tp_bytes_per_gpu"),
                   double(s.traffic[int(GroupKind::kTensor)].max_sent_bytes_per_rank));
  EXPECT_DOUBLE_EQ(m.at("pp_bytes_per_gpu"),
                   double(s.traffic[int(GroupKind::kPipeline)].max_sent_bytes_per_rank));
  EXPECT_DOUBLE_EQ(m.at("dp_bytes_per_gpu"),
                   double(s.traffic[int(GroupKind::kData)].max_sent_bytes_per_rank));
  EXPECT_DOUBLE_EQ(m.at("dp_time_ms"),
                   s.traffic[int(GroupKind::kData)].max_busy_ns_per_rank * 1e-6);
  EXPECT_GT(m.at("tp_bytes_per_gpu"), 0);
  EXPECT_GT(m.at("pp_bytes_per_gpu"), 0);
  EXPECT_GT(m.at("dp_bytes_per_gpu"), 0);
  EXPECT_DOUBLE_EQ(m.at("memory_per_gpu_bytes"), double(s.memory.tracked_peak_bytes));
  EXPECT_DOUBLE_EQ(m.at("mfu"), s.mfu);
  EXPECT_EQ(m.at("pipeline_microbatches"), 4);
  EXPECT_EQ(m.at("parameter_count"), 8.0 * 64 * 64);
  EXPECT_EQ(m.at("checked"), 1);
  EXPECT_EQ(m.at("correct"), 1);  // the small step matched one device
  EXPECT_EQ(m.at("fits"), 1);
}

TEST(LabScenario3d, PaperScaleMemoryIsTheFormulaAndDecidesFits) {
  // GPT-3 1.3B on one DGX A100 as dp 2 x pp 2 x tp 2, a small global batch
  // so the timing-only step stays short.
  std::vector<LabParam> params = {Num("dp", 2),
                                  Num("pp", 2),
                                  Num("tp", 2),
                                  Text("model", "gpt3-1.3b"),
                                  Num("global_batch", 16),
                                  Flag("timing_only", true)};
  const LabRunResult zero0 = RunLabScenario("3d", params);
  params.push_back(Num("zero", 1));
  const LabRunResult zero1 = RunLabScenario("3d", params);

  ThreeDScenario sc;
  sc.grid = {2, 2, 2};
  sc.model = "gpt3-1.3b";
  sc.global_batch = 16;
  const Direct d = RunDirect(sc);
  const TransformerShape& shape = d.prepared->shape;
  const double stage_params = (shape.layers / 2 * shape.LayerParameters() +
                               shape.EmbeddingParameters()) / 2;  // stage 0, split by tp
  const LabValues& m = zero0.measured;
  EXPECT_DOUBLE_EQ(m.at("model_state_bytes"), d.summary.memory.model_states_bytes);
  EXPECT_NEAR(m.at("model_state_bytes"), 16 * stage_params, 1e-6 * 16 * stage_params);
  EXPECT_NEAR(zero1.measured.at("model_state_bytes"),
              ZeroMemoryPerGpu(stage_params, 2, 1, 12).total(), 1e-6 * 16 * stage_params);
  EXPECT_LT(zero1.measured.at("model_state_bytes"), m.at("model_state_bytes"));
  EXPECT_DOUBLE_EQ(m.at("activation_bytes"), d.summary.memory.activations_bytes);
  EXPECT_DOUBLE_EQ(m.at("memory_per_gpu_bytes"),
                   m.at("model_state_bytes") + m.at("activation_bytes"));
  EXPECT_DOUBLE_EQ(m.at("step_time_s"), d.summary.step_ns * 1e-9);
  EXPECT_DOUBLE_EQ(m.at("mfu"), d.summary.mfu);
  EXPECT_DOUBLE_EQ(m.at("parameter_count"), shape.TotalParameters());
  const Topology topology = MakeTopologyPreset("dgx-a100");
  EXPECT_DOUBLE_EQ(m.at("gpu_memory_bytes"),
                   double(topology.nodes[topology.gpus[0]].device.memory_bytes));
  EXPECT_EQ(m.at("fits"), m.at("memory_per_gpu_bytes") <= m.at("gpu_memory_bytes") ? 1 : 0);
  EXPECT_EQ(m.at("checked"), 0);  // timing only: nothing to compare
  EXPECT_EQ(m.at("correct"), 0);
}

TEST(LabScenario3d, BadParametersNameTheParameter) {
  EXPECT_NE(ErrorOf("3d", {Text("model", "gpt3-175b")}).find("timing_only: "), std::string::npos);
  EXPECT_NE(ErrorOf("3d", {Flag("timing_only", true)}).find("timing_only: "), std::string::npos);
  EXPECT_NE(ErrorOf("3d", {Num("micro_batch", 2)}).find("micro_batch: "), std::string::npos);
  EXPECT_NE(ErrorOf("3d", {Num("width", 65536)}).find("width: "), std::string::npos);
  EXPECT_NE(ErrorOf("3d", {Num("dp", 4)}).find("grid"), std::string::npos)
      << "16 ranks do not fit one DGX A100";
  EXPECT_NE(ErrorOf("3d", {Text("model", "gpt5")}).find("model: "), std::string::npos);
  EXPECT_THROW(CheckLabScenario("3d", {Text("model", "gpt3-175b")}), Error);
}

TEST(LabScenarioPlan, ReportsThePlannersCountsAndBestLayout) {
  const std::vector<LabParam> base = {Text("model", "gpt3-1.3b"), Num("gpus", 16),
                                      Text("topology", "2x-dgx-a100-ib")};
  const LabRunResult lab = RunLabScenario("plan", base);
  PlannerRequest request;
  request.model = FindModelPreset("gpt3-1.3b");
  request.gpus = 16;
  const PlannerResult result = PlanParallelLayouts(request, MakeTopologyPreset("2x-dgx-a100-ib"));
  ASSERT_FALSE(result.feasible.empty());
  const LabValues& m = lab.measured;
  EXPECT_EQ(m.at("feasible_count"), double(result.feasible.size()));
  EXPECT_EQ(m.at("rejected_count"), double(result.rejected.size()));
  EXPECT_EQ(m.at("rejected_tp_heads") + m.at("rejected_pp_layers") +
                m.at("rejected_tp_crosses_node") + m.at("rejected_batch") +
                m.at("rejected_interleave") + m.at("rejected_memory"),
            m.at("rejected_count"));
  const PlanCandidate& best = result.feasible.front();
  EXPECT_EQ(m.at("best_dp"), best.layout.dp);
  EXPECT_EQ(m.at("best_pp"), best.layout.pp);
  EXPECT_EQ(m.at("best_tp"), best.layout.tp);
  EXPECT_EQ(m.at("best_zero"), best.layout.zero_stage);
  EXPECT_EQ(m.at("best_microbatches"), best.layout.micro_batches);
  EXPECT_DOUBLE_EQ(m.at("best_step_time_s"), best.time.step_ns * 1e-9);
  EXPECT_DOUBLE_EQ(m.at("best_mfu"), best.time.mfu);
  EXPECT_DOUBLE_EQ(m.at("best_memory_per_gpu_bytes"), best.memory.total());
  EXPECT_EQ(m.at("layout_rank"), 0);  // no layout named

  // Looking up the best layout finds it first; every one of its
  // configurations that fits is counted.
  std::vector<LabParam> lookup = base;
  lookup.push_back(Num("dp", best.layout.dp));
  lookup.push_back(Num("pp", best.layout.pp));
  lookup.push_back(Num("tp", best.layout.tp));
  const LabValues found = RunLabScenario("plan", lookup).measured;
  EXPECT_EQ(found.at("layout_rank"), 1);
  EXPECT_DOUBLE_EQ(found.at("layout_step_time_s"), found.at("best_step_time_s"));
  double same = 0;
  for (const PlanCandidate& c : result.feasible) {
    same += c.layout.dp == best.layout.dp && c.layout.pp == best.layout.pp &&
            c.layout.tp == best.layout.tp;
  }
  EXPECT_EQ(found.at("layout_feasible"), same);

  // A smaller GPU rejects more layouts for memory.
  std::vector<LabParam> small_gpu = base;
  small_gpu.push_back(Text("gpu_memory", "16G"));
  EXPECT_GT(RunLabScenario("plan", small_gpu).measured.at("rejected_memory"),
            m.at("rejected_memory"));
}

TEST(LabScenarioPlan, BadParametersNameTheParameter) {
  EXPECT_NE(ErrorOf("plan", {Num("gpus", 1024)}).find("gpus: "), std::string::npos);
  EXPECT_NE(ErrorOf("plan", {Num("dp", 64)}).find("dp: "), std::string::npos);
  EXPECT_NE(ErrorOf("plan", {Num("dp", 64), Num("pp", 2), Num("tp", 8)}).find("dp*pp*tp"),
            std::string::npos);
  EXPECT_NE(ErrorOf("plan", {Num("global_batch", -1)}).find("global_batch: "), std::string::npos);
}

}  // namespace
}  // namespace shardlab
