// MlpBoundedReference on its own: the single-device float reference
// (MlpReference, another order of the same float arithmetic) lands within
// every bound for SGD and Adam over many steps; the bounds stay tight
// enough to catch a gradient scaled by 1 + 1e-3; Adam's bound for a
// gradient within rounding of zero is in units of the learning rate.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/model/mlp.h"
#include "engine/verify/bounds.h"
#include "engine/verify/mlp_bounds.h"
#include "engine/verify/verdict.h"

namespace shardlab {
namespace {

Verdict CompareWithFloatReference(const MlpConfig& config, int steps) {
  MlpReference single(config, 7);
  MlpBoundedReference bounded(config, 7, UnitRoundoff(DType::kF32));
  for (int s = 0; s < steps; ++s) {
    single.TrainStep();
    bounded.TrainStep();
  }
  VerdictJudge judge;
  for (int l = 0; l < config.layers; ++l) {
    const std::string ls = std::to_string(l);
    judge.Compare("dw" + ls, single.weight_grad(l), bounded.weight_grad(l).value, bounded.weight_grad(l).Bound());
    judge.Compare("db" + ls, single.bias_grad(l), bounded.bias_grad(l).value, bounded.bias_grad(l).Bound());
    judge.Compare("w" + ls, single.weight(l), bounded.weight(l).value, bounded.weight(l).Bound());
    judge.Compare("b" + ls, single.bias(l), bounded.bias(l).value, bounded.bias(l).Bound());
  }
  judge.CompareScalar("loss", single.loss(), bounded.loss(), bounded.loss_bound());
  return judge.Finish();
}

TEST(MlpBoundedReference, TheFloatReferenceIsWithinEveryBound) {
  struct Case { int layers, width, batch; OptimizerKind optimizer; int steps; };
  for (const Case c : {Case{1, 16, 4, OptimizerKind::kSgd, 1}, Case{4, 64, 32, OptimizerKind::kSgd, 3},
                       Case{3, 96, 12, OptimizerKind::kAdam, 1}, Case{6, 64, 16, OptimizerKind::kAdam, 8},
                       Case{2, 128, 64, OptimizerKind::kAdam, 20}}) {
    MlpConfig config;
    config.layers = c.layers;
    config.width = c.width;
    config.batch = c.batch;
    config.optimizer = c.optimizer;
    if (c.optimizer == OptimizerKind::kAdam) config.learning_rate = 1e-3f;
    const Verdict v = CompareWithFloatReference(config, c.steps);
    EXPECT_TRUE(v.correct()) << c.layers << "x" << c.width << " batch " << c.batch << ": " << v.Text();
  }
}

// The last layer's gradient (no ReLU above it) is bounded far below a
// thousandth of its largest element, so a gradient scaled by 1 + 1e-3 is
// caught. Below a ReLU whose input lies within its bound of 0 the backend
// may switch it the other way, which moves a whole row's share of every
// lower gradient: those bounds hold that (a few percent here).
TEST(MlpBoundedReference, GradientBoundsAreTightWhereNoReluMaySwitch) {
  MlpConfig config;
  config.layers = 8;
  config.width = 256;
  config.batch = 32;
  MlpBoundedReference bounded(config, 1, UnitRoundoff(DType::kF32));
  bounded.TrainStep();
  for (int l = 0; l < config.layers; ++l) {
    const BoundedTensor& g = bounded.weight_grad(l);
    const std::vector<double> bound = g.Bound();
    double largest = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < g.value.size(); ++i)
      if (std::fabs(g.value[i]) > largest) largest = std::fabs(g.value[i]), at = i;
    if (l + 1 == config.layers)
      EXPECT_LT(bound[at], 1e-4 * largest) << "dw" << l;
    else
      EXPECT_LT(bound[at], 0.2 * largest) << "dw" << l;
  }
}

// One layer (no ReLU): every σ is a multiple of u, so the bounds scale as
// the dtypes' unit round-offs, 2^13 from fp32 to fp16 and 8 to bf16.
TEST(MlpBoundedReference, BoundsScaleWithTheUnitRoundoff) {
  MlpConfig config;
  config.layers = 1;
  config.width = 32;
  config.batch = 8;
  std::vector<double> bounds;
  for (const DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    MlpBoundedReference bounded(config, 1, UnitRoundoff(d));
    bounded.TrainStep();
    bounds.push_back(bounded.weight_grad(0).Bound()[5]);
  }
  EXPECT_NEAR(bounds[1] / bounds[0], 8192, 8192 * 1e-6);
  EXPECT_NEAR(bounds[2] / bounds[1], 8, 8 * 1e-6);
}

// Adam's first step moves every parameter by about ±lr: where the gradient
// is within its bound of zero, either sign may come out, and the bound says
// so in units of the learning rate.
TEST(MlpBoundedReference, AdamNearZeroGradientsGetABoundInUnitsOfTheLearningRate) {
  MlpConfig config;
  config.layers = 8;
  config.width = 128;
  config.batch = 32;
  config.optimizer = OptimizerKind::kAdam;
  config.learning_rate = 1e-3f;
  MlpBoundedReference bounded(config, 3, UnitRoundoff(DType::kF32));
  bounded.TrainStep();
  int near_zero = 0, either_sign = 0;
  for (int l = 0; l < config.layers; ++l) {
    const BoundedTensor& g = bounded.weight_grad(l);
    const std::vector<double> gb = g.Bound(), wb = bounded.weight(l).Bound();
    for (std::size_t i = 0; i < g.value.size(); ++i) {
      if (gb[i] > 0 && std::fabs(g.value[i]) <= gb[i]) {
        ++near_zero;
        EXPECT_GE(wb[i], 1e-3 * config.learning_rate) << "w" << l << "[" << i << "]";
        EXPECT_LE(wb[i], 4 * config.learning_rate) << "w" << l << "[" << i << "]";
        if (wb[i] >= config.learning_rate) ++either_sign;
      } else if (std::fabs(g.value[i]) > 1e3 * gb[i]) {
        EXPECT_LT(wb[i], 1e-2 * config.learning_rate) << "w" << l << "[" << i << "]";
      }
    }
  }
  EXPECT_GT(either_sign, 0);
  EXPECT_GT(near_zero, 0);  // gradients within rounding of 0 (below a ReLU that may switch)
}

}  // namespace
}  // namespace shardlab
