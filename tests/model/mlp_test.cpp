// The reference model and the host kernels, checked against what they must
// compute independently of each other: finite differences of the loss, and
// small products worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/error.h"
#include "engine/model/mlp.h"
#include "engine/plan/host_kernels.h"

namespace shardlab {
namespace {

// Loss of the reference model whose parameter (layer, index) is nudged.
double LossWith(const MlpConfig& config, int layer, int index, bool bias, float delta) {
  // Rebuild with one parameter changed: TrainStep reports the loss before its update.
  MlpReference model(config, 3);
  std::vector<float>& params = bias ? model.mutable_bias(layer) : model.mutable_weight(layer);
  params[index] += delta;
  model.TrainStep();
  return model.loss();
}

TEST(MlpReference, GradientsMatchFiniteDifferencesOfTheLoss) {
  MlpConfig config;
  config.layers = 3;
  config.width = 5;
  config.batch = 4;
  MlpReference model(config, 3);
  model.TrainStep();
  const float h = 1e-2f;
  int checked = 0;
  for (int layer = 0; layer < config.layers; ++layer) {
    for (int index : {0, 7, 24}) {
      const double numeric =
          (LossWith(config, layer, index, false, h) - LossWith(config, layer, index, false, -h)) / (2 * h);
      EXPECT_NEAR(model.weight_grad(layer)[index], numeric, 2e-3 * std::max(1.0, std::fabs(numeric)))
          << "layer " << layer << " w[" << index << "]";
      ++checked;
    }
    const double numeric_bias =
        (LossWith(config, layer, 2, true, h) - LossWith(config, layer, 2, true, -h)) / (2 * h);
    EXPECT_NEAR(model.bias_grad(layer)[2], numeric_bias, 2e-3 * std::max(1.0, std::fabs(numeric_bias)));
  }
  EXPECT_EQ(checked, 9);
}

TEST(MlpReference, SgdMovesAgainstTheGradientAndLowersTheLoss) {
  MlpConfig config;
  config.layers = 4;
  config.width = 16;
  config.batch = 8;
  config.learning_rate = 0.05f;
  MlpReference model(config, 11);
  const std::vector<float> before = model.weight(2);
  model.TrainStep();
  const double first_loss = model.loss();
  for (std::size_t i = 0; i < before.size(); ++i)
    EXPECT_FLOAT_EQ(model.weight(2)[i], before[i] - 0.05f * model.weight_grad(2)[i]);
  for (int step = 0; step < 20; ++step) model.TrainStep();
  EXPECT_LT(model.loss(), first_loss);
}

TEST(MlpReference, BadConfigurationsNameTheField) {
  MlpConfig config;
  config.width = 0;
  try {
    CheckMlpConfig(config);
    FAIL() << "width 0 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("width: ", 0), 0u) << e.what();
  }
  EXPECT_THROW(ParseOptimizer("rmsprop"), Error);
  EXPECT_EQ(ParseOptimizer("adam"), OptimizerKind::kAdam);
}

TEST(HostKernels, MatMulWithEachTransposeMatchesHandWork) {
  // A = [1 2 3; 4 5 6] (2x3), B = [1 0; 0 1; 1 1] (3x2): A·B = [4 5; 10 11].
  std::vector<std::vector<float>> buffers = {
      {1, 2, 3, 4, 5, 6}, {1, 0, 0, 1, 1, 1}, {0, 0, 0, 0}, {1, 4, 2, 5, 3, 6}, {1, 0, 1, 0, 1, 1}};
  KernelCall call;
  call.kind = KernelKind::kMatMul;
  call.m = 2, call.n = 2, call.k = 3;
  call.a = {0, 0, 6};
  call.b = {1, 0, 6};
  call.c = {2, 0, 4};
  RunHostKernel(call, buffers);
  EXPECT_EQ(buffers[2], (std::vector<float>{4, 5, 10, 11}));
  call.accumulate = true;  // C += A·B
  RunHostKernel(call, buffers);
  EXPECT_EQ(buffers[2], (std::vector<float>{8, 10, 20, 22}));
  // A stored transposed (3x2) and B stored transposed (2x3): same product.
  call.accumulate = false;
  call.transpose_a = call.transpose_b = true;
  call.a = {3, 0, 6};
  call.b = {4, 0, 6};
  RunHostKernel(call, buffers);
  EXPECT_EQ(buffers[2], (std::vector<float>{4, 5, 10, 11}));
}

TEST(HostKernels, ElementwiseAndAdam) {
  std::vector<std::vector<float>> buffers = {{-1, 2, -3, 4}, {0, 0, 0, 0}, {1, 1, 1, 1}, {0}};
  KernelCall relu;
  relu.kind = KernelKind::kRelu;
  relu.m = 2, relu.n = 2;
  relu.a = {0, 0, 4};
  relu.c = {1, 0, 4};
  RunHostKernel(relu, buffers);
  EXPECT_EQ(buffers[1], (std::vector<float>{0, 2, 0, 4}));
  KernelCall sum = relu;
  sum.kind = KernelKind::kColumnSum;  // columns of [-1 2; -3 4]
  sum.c = {2, 0, 2};
  RunHostKernel(sum, buffers);
  EXPECT_EQ(buffers[2][0], -4.0f);
  EXPECT_EQ(buffers[2][1], 6.0f);
  // One Adam step from zero moments moves each parameter by lr against the
  // sign of its gradient (m̂/sqrt(v̂) = g/|g|).
  std::vector<std::vector<float>> adam = {{0.5f, -2.0f}, {1.0f, 1.0f}, {0, 0}, {0, 0}};
  KernelCall step;
  step.kind = KernelKind::kAdam;
  step.n = 2;
  step.a = {0, 0, 2};
  step.c = {1, 0, 2};
  step.b = {2, 0, 2};
  step.d = {3, 0, 2};
  step.alpha = 0.01f;
  RunHostKernel(step, adam);
  EXPECT_NEAR(adam[1][0], 0.99f, 1e-6);
  EXPECT_NEAR(adam[1][1], 1.01f, 1e-6);
}

}  // namespace
}  // namespace shardlab
