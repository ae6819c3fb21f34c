// The ZeRO scenario: the memory formulas against the ZeRO paper's 7.5B
// example, parameter counts as users type them, a 1B-parameter timing-only
// run whose measured memory and traffic match the formulas, a small real
// run checked against the reference, and errors that name their field.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/error.h"
#include "engine/run/executor.h"
#include "engine/run/vector_sink.h"
#include "engine/scenarios/zero_scenario.h"

namespace shardlab {
namespace {

// Rajbhandari et al., Figure 1: Ψ = 7.5B, N = 64, K = 12.
TEST(ZeroMemory, ThePapersSevenAndAHalfBillionExample) {
  const double psi = 7.5e9;
  EXPECT_NEAR(ZeroMemoryPerGpu(psi, 64, 0, 12).total() / 1e9, 120.0, 0.05);
  EXPECT_NEAR(ZeroMemoryPerGpu(psi, 64, 1, 12).total() / 1e9, 31.4, 0.05);
  EXPECT_NEAR(ZeroMemoryPerGpu(psi, 64, 2, 12).total() / 1e9, 16.6, 0.05);
  EXPECT_NEAR(ZeroMemoryPerGpu(psi, 64, 3, 12).total() / 1e9, 1.875, 0.001);
  // The seed texts' K = 8: 12Ψ for plain data parallelism.
  EXPECT_NEAR(ZeroMemoryPerGpu(psi, 64, 0, 8).total(), 12 * psi, 1);
  EXPECT_EQ(ZeroMemoryFormulaText(2, 12), "2Ψ + (2+12)Ψ/N");
}

TEST(ZeroMemory, ParameterCountsAsTyped) {
  EXPECT_EQ(ParseParameterCount("175B"), 175e9);
  EXPECT_EQ(ParseParameterCount("7.5b"), 7.5e9);
  EXPECT_EQ(ParseParameterCount("350M"), 350e6);
  EXPECT_EQ(ParseParameterCount("125k"), 125e3);
  EXPECT_EQ(ParseParameterCount("1000"), 1000);
  for (const char* bad : {"", "B", "-1B", "1X", "1BB", "nan", "0"})
    EXPECT_THROW(ParseParameterCount(bad), Error) << bad;
}

TEST(ZeroScenario, AModelOfAboutTheAskedSize) {
  for (const double psi : {1e6, 1e8, 1e9, 7.5e9}) {
    const MlpConfig m = MlpForParameterCount(psi);
    EXPECT_NEAR(MlpParameterCount(m) / psi, 1.0, 0.1) << psi;
  }
}

struct Ran {
  std::unique_ptr<PreparedZero> prepared;
  std::unique_ptr<Executor> executor;
  VectorSink sink;
  ZeroSummary summary;
};

std::unique_ptr<Ran> RunScenario(const ZeroScenario& s) {
  auto ran = std::make_unique<Ran>();
  ran->prepared = PrepareZero(s);
  RunOptions options;
  options.timing_only = s.timing_only;
  options.seed = s.seed;
  ran->executor = std::make_unique<Executor>(CreateBackend("sim"), ran->prepared->zero.plan,
                                             ran->prepared->topology, options);
  ran->executor->RunToEnd(ran->sink);
  EXPECT_EQ(ran->executor->state(), ExecutorState::kDone) << ran->executor->error();
  ran->summary = SummarizeZero(*ran->prepared, ran->sink.events, ran->executor->backend());
  return ran;
}

// `shardlab-cli run zero --stage 3 --ranks 8 --params 1B --timing-only`.
TEST(ZeroScenario, OneBillionParametersOnEightGpusTimingOnly) {
  for (int stage = 0; stage <= 3; ++stage) {
    ZeroScenario s;
    s.params.model = MlpForParameterCount(1e9);
    s.params.model.batch = 64;
    s.params.ranks = 8;
    s.params.stage = stage;
    s.timing_only = true;
    const auto ran = RunScenario(s);
    const ZeroSummary& z = ran->summary;
    ASSERT_EQ(z.memory.size(), 8u);
    for (const RankMemory& mem : z.memory) {
      auto at = [&](MemoryCategory c) { return static_cast<double>(mem.persistent[static_cast<int>(c)]); };
      EXPECT_NEAR(at(MemoryCategory::kParameters) / z.formula.parameters, 1.0, 1e-3) << stage;
      EXPECT_NEAR(at(MemoryCategory::kGradients) / z.formula.gradients, 1.0, 1e-3) << stage;
      EXPECT_NEAR(at(MemoryCategory::kOptimizerStates) / z.formula.optimizer_states, 1.0, 1e-3) << stage;
    }
    EXPECT_NEAR(z.sent_elements_per_step / z.formula_elements_per_step, 1.0, 0.02) << stage;
    EXPECT_GT(z.step_ns, 0);
    EXPECT_FALSE(z.check.checked);
  }
}

// Ψ = 7.5B: the master copy and Adam run on more elements than a 32-bit
// kernel length; they go in pieces, and the memory still meets the formula.
TEST(ZeroScenario, ModelsPastTwoBillionParametersRunInPieces) {
  ZeroScenario s;
  s.params.model = MlpForParameterCount(7.5e9);
  s.params.model.batch = 8;
  s.params.ranks = 8;
  s.params.stage = 0;
  s.timing_only = true;
  const auto ran = RunScenario(s);
  ASSERT_GT(ran->summary.parameter_count, 2147483647.0);
  const RankMemory& mem = ran->summary.memory[0];
  EXPECT_NEAR(mem.persistent[static_cast<int>(MemoryCategory::kOptimizerStates)] / ran->summary.formula.optimizer_states,
              1.0, 1e-6);
}

// Many Adam steps: single parameters may drift by rounding (Adam divides by
// sqrt(v)); their bounds grow as the computation says, with no step-count
// special case, and the check says correct.
TEST(ZeroScenario, ManyStepsStillCheckCorrect) {
  ZeroScenario s;
  s.params.model.layers = 4;
  s.params.model.width = 32;
  s.params.model.batch = 32;
  s.params.ranks = 4;
  s.params.stage = 2;
  s.params.steps = 30;
  const auto ran = RunScenario(s);
  EXPECT_TRUE(ran->summary.check.correct) << ran->summary.check.parameter_error;
  const Verdict& verdict = ran->summary.check.verdict;
  EXPECT_EQ(verdict.kind, VerdictKind::kCorrect) << verdict.Text();
  EXPECT_EQ(verdict.tensors, 2 * 4 + 1);  // every weight and bias (the shards put together), and the loss
  EXPECT_LE(verdict.worst.ratio, 1.0);
}

TEST(ZeroScenario, ASmallRealRunIsChecked) {
  ZeroScenario s;
  s.params.model.layers = 4;
  s.params.model.width = 16;
  s.params.model.batch = 16;
  s.params.model.learning_rate = 0.01f;
  s.params.ranks = 4;
  s.params.stage = 3;
  s.params.steps = 2;
  const auto ran = RunScenario(s);
  EXPECT_TRUE(ran->summary.check.checked);
  EXPECT_TRUE(ran->summary.check.correct) << ran->summary.check.parameter_error;
  EXPECT_GT(ran->summary.check.loss, 0);
}

TEST(ZeroScenario, BadInputNamesTheField) {
  auto message = [](const ZeroScenario& s) -> std::string {
    try {
      PrepareZero(s);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  ZeroScenario s;
  s.params.ranks = 16;
  s.params.model.batch = 16;
  EXPECT_EQ(message(s).rfind("ranks: 16 ranks but topology 'dgx-a100' has only 8 GPUs", 0), 0u) << message(s);
  s = ZeroScenario{};
  s.params.model = MlpForParameterCount(1e9);
  EXPECT_EQ(message(s).rfind("params: a real run of", 0), 0u) << message(s);
  s = ZeroScenario{};
  s.params.stage = 7;
  EXPECT_EQ(message(s).rfind("stage: ", 0), 0u) << message(s);
}

}  // namespace
}  // namespace shardlab
