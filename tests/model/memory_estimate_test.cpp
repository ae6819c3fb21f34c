// Memory of a 3D layout against the formulas worked by hand: the ZeRO
// stages' 2Ψ/2Ψ/KΨ split over dp, parameters split by tp and pp, and
// Korthikanti's activation bytes for GPT-3 175B.
#include "engine/model/memory_estimate.h"

#include <gtest/gtest.h>

#include "engine/model/zero_memory.h"

namespace shardlab {
namespace {

TransformerShape Gpt3() { return FindModelPreset("gpt3-175b"); }

TEST(MemoryEstimate, OneStageOneRankHoldsTheWholeModel) {
  const TransformerShape m = Gpt3();
  ParallelLayout l;
  EXPECT_DOUBLE_EQ(StageParametersPerGpu(m, l, 0), m.TotalParameters());
  const MemoryEstimate e = EstimateTrainingMemory(m, l);
  // Plain data parallelism: (2 + 2 + 12)Ψ = 16Ψ, about 2.8 TB for 175B.
  EXPECT_DOUBLE_EQ(e.model_states(), 16 * m.TotalParameters());
  EXPECT_NEAR(e.model_states() / 1e12, 2.79, 0.01);
}

TEST(MemoryEstimate, ZeroStagesMatchTheHandFormulasOverDp) {
  const TransformerShape m = Gpt3();
  ParallelLayout l;
  l.dp = 64;
  l.pp = 8;
  l.tp = 8;
  l.micro_batches = 24;
  const double psi = StageParametersPerGpu(m, l, 0);  // stage 0: 12 layers + embeddings, / 8
  EXPECT_DOUBLE_EQ(psi, (12 * m.LayerParameters() + m.EmbeddingParameters()) / 8);
  const double n = 64;
  const double expected[4] = {16 * psi, 4 * psi + 12 * psi / n, 2 * psi + 14 * psi / n,
                              16 * psi / n};
  for (int stage = 0; stage < 4; ++stage) {
    l.zero_stage = stage;
    const MemoryEstimate e = EstimateTrainingMemory(m, l, 0);
    EXPECT_NEAR(e.model_states(), expected[stage], 1e-6 * expected[stage]) << "stage " << stage;
    const ZeroMemoryFormula f = ZeroMemoryPerGpu(psi, 64, stage, 12);
    EXPECT_DOUBLE_EQ(e.parameters, f.parameters);
    EXPECT_DOUBLE_EQ(e.optimizer_states, f.optimizer_states);
  }
}

TEST(MemoryEstimate, StagesTogetherHoldTheModelPlusTheOutputCopy) {
  const TransformerShape m = Gpt3();
  for (const int pp : {2, 4, 8, 96}) {
    ParallelLayout l;
    l.pp = pp;
    double sum = 0;
    for (int s = 0; s < pp; ++s) sum += StageParametersPerGpu(m, l, s);
    EXPECT_NEAR(sum, m.TotalParameters() + double(m.vocab) * m.hidden, 1.0) << "pp " << pp;
  }
}

TEST(MemoryEstimate, ActivationsFollowKorthikanti) {
  const TransformerShape m = Gpt3();  // s 2048, h 12288, a 96: 5as/h = 80
  const double sbh = 2048.0 * 12288;
  ParallelLayout l;
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(m, l), sbh * (34 + 80));
  l.tp = 8;
  l.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(m, l), sbh * (34 + 80) / 8);
  l.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(m, l), sbh * (10 + 24.0 / 8 + 80.0 / 8));
  l.sequence_parallel = true;
  l.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(m, l), sbh * 34 / 8);
  l.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(m, l), sbh * 2 / 8);
  l.micro_batch = 4;
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(m, l), 4 * sbh * 2 / 8);
  EXPECT_EQ(ActivationFormulaText(l), "s·b·2h/t (full recompute, SP)");
}

TEST(MemoryEstimate, OneFOneBKeepsPMicroBatchesOnTheFirstStage) {
  const TransformerShape m = Gpt3();
  ParallelLayout l;
  l.pp = 8;
  l.tp = 8;
  l.micro_batches = 24;
  // 96 / 8 = 12 layers per stage; stage s holds min(m, p - s) micro-batches.
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(m, l, 0).layers_in_flight, 8 * 12);
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(m, l, 5).layers_in_flight, 3 * 12);
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(m, l, 7).layers_in_flight, 1 * 12);
  l.micro_batches = 2;  // fewer micro-batches than stages
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(m, l, 0).layers_in_flight, 2 * 12);
  // Interleaved, v = 2: the first stage holds L/p·(p + (p−1)/v) = 12·11.5.
  l.micro_batches = 24;
  l.interleave = 2;
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(m, l, 0).layers_in_flight, 12 * (8 + 7.0 / 2));
  // Logits only on the last stage; the worst stage is reported.
  EXPECT_EQ(EstimateTrainingMemory(m, l, 0).logits, 0);
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(m, l, 7).logits, 2048.0 * 50257 * 4 / 8);
  const MemoryEstimate worst = EstimateTrainingMemory(m, l);
  for (int s = 0; s < 8; ++s) EXPECT_GE(worst.total(), EstimateTrainingMemory(m, l, s).total());
}

TEST(MemoryEstimate, ZeroThreeAddsTwoGatheredLayers) {
  const TransformerShape m = Gpt3();
  ParallelLayout l;
  l.dp = 64;
  l.tp = 8;
  l.pp = 8;
  l.zero_stage = 2;
  EXPECT_EQ(EstimateTrainingMemory(m, l).zero3_gathered, 0);
  l.zero_stage = 3;
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(m, l).zero3_gathered, 2 * m.LayerParameters() / 8 * 2);
}

}  // namespace
}  // namespace shardlab
