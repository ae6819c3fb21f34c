// The small real model that the training scenarios (pipeline, tensor and data
// parallel) train: a stack of fully connected layers of one width.
//
//   x ─► [z0 = x·W0 + b0, a0 = relu(z0)] ─► ... ─► [y = a(L-2)·W(L-1) + b(L-1)]
//                                                    loss = Σ‖y − t‖² / (2B)
//
// x (inputs) and t (targets) are B×H, each W is H×H (row = input feature),
// each b has H elements. The last layer has no activation. Parameters and data
// are drawn from FillInputs streams that depend only on (layer, tensor), so a
// model cut into stages, shards or replicas starts from the same numbers as
// the single-device reference below, and their results can be compared.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/plan/plan.h"

namespace shardlab {

enum class OptimizerKind : std::uint8_t { kSgd, kAdam };
const char* OptimizerName(OptimizerKind kind);  // "sgd", "adam"
/// Throws Error(kInvalidInput) "optimizer: ..." for anything else.
OptimizerKind ParseOptimizer(std::string_view name);

struct MlpConfig {
  int layers = 8;
  int width = 64;        // H: features in and out of every layer
  int batch = 32;        // B: rows of one training step (the global batch)
  OptimizerKind optimizer = OptimizerKind::kSgd;
  float learning_rate = 0.05f;
  float adam_beta1 = 0.9f;
  float adam_beta2 = 0.999f;
  float adam_epsilon = 1e-8f;
};

/// Throws Error(kInvalidInput) naming the field: "layers: ...", "width: ...",
/// "batch: ...", "learning rate: ...".
void CheckMlpConfig(const MlpConfig& config);

/// Parameters of the model (weights and biases, all layers).
std::int64_t MlpParameterCount(const MlpConfig& config);

/// FLOPs of one layer's forward over `rows` rows (2·rows·H²; the bias and
/// activation are memory traffic, not counted here).
double MlpLayerForwardFlops(const MlpConfig& config, int rows);

/// How every partition initialises a tensor: a kRandom buffer with the
/// tensor's stream and scale (weights: He-uniform, ±sqrt(6/H); biases ±0.1;
/// inputs and targets ±1).
enum class MlpTensor : std::uint8_t { kWeight, kBias, kInput, kTarget };
Buffer MlpInitBuffer(int rank, std::string name, const MlpConfig& config, MlpTensor tensor,
                     int layer, std::int64_t count);

/// The value element `index` of a tensor starts with (what MlpInitBuffer's
/// buffer holds once filled).
float MlpInitValue(const MlpConfig& config, MlpTensor tensor, int layer, std::int64_t index,
                   std::uint64_t seed);

/// The optimizer step of `count` parameters as a kernel: SGD (param −= lr·grad)
/// or Adam (with its two moment buffers, step t = `step`).
KernelCall MlpOptimizerCall(const MlpConfig& config, BufferSlice param, BufferSlice grad,
                            BufferSlice first_moment, BufferSlice second_moment, int step);

/// The single-device reference: the whole batch at once, plain loops, no
/// Plan. Training scenarios compare their buffers with it.
class MlpReference {
 public:
  MlpReference(const MlpConfig& config, std::uint64_t seed);

  /// Forward, loss, backward over the whole batch, then one optimizer step.
  void TrainStep();

  const MlpConfig& config() const { return config_; }
  const std::vector<float>& weight(int layer) const { return weights_[layer]; }
  const std::vector<float>& bias(int layer) const { return biases_[layer]; }
  /// For tests that perturb one parameter (finite differences).
  std::vector<float>& mutable_weight(int layer) { return weights_[layer]; }
  std::vector<float>& mutable_bias(int layer) { return biases_[layer]; }
  /// Gradients of the last TrainStep (before the update was applied).
  const std::vector<float>& weight_grad(int layer) const { return weight_grads_[layer]; }
  const std::vector<float>& bias_grad(int layer) const { return bias_grads_[layer]; }
  /// Loss of the last TrainStep, before its update.
  double loss() const { return loss_; }

 private:
  void Update(std::vector<float>& param, const std::vector<float>& grad, std::vector<float>& m1,
              std::vector<float>& m2);

  MlpConfig config_;
  std::vector<float> input_, target_;
  std::vector<std::vector<float>> weights_, biases_, weight_grads_, bias_grads_;
  std::vector<std::vector<float>> weight_m1_, weight_m2_, bias_m1_, bias_m2_;  // Adam
  int steps_ = 0;
  double loss_ = 0;
};

}  // namespace shardlab
