#include "engine/model/mlp.h"

#include <cmath>

#include "engine/core/error.h"
#include "engine/core/fill.h"

namespace shardlab {

const char* OptimizerName(OptimizerKind kind) {
  return kind == OptimizerKind::kAdam ? "adam" : "sgd";
}

OptimizerKind ParseOptimizer(std::string_view name) {
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "adam") return OptimizerKind::kAdam;
  throw Error("optimizer: unknown optimizer '" + std::string(name) + "' (choose sgd or adam)",
              ErrorKind::kInvalidInput);
}

void CheckMlpConfig(const MlpConfig& config) {
  auto fail = [](const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); };
  if (config.layers < 1 || config.layers > 4096)
    fail("layers: " + std::to_string(config.layers) + " is out of range (1-4096)");
  if (config.width < 1 || config.width > 16384)
    fail("width: " + std::to_string(config.width) + " is out of range (1-16384)");
  if (config.batch < 1 || config.batch > (1 << 20))
    fail("batch: " + std::to_string(config.batch) + " is out of range (1-1048576 rows)");
  if (!(config.learning_rate > 0.0f) || !std::isfinite(config.learning_rate))
    fail("learning rate: must be a positive number");
}

std::int64_t MlpParameterCount(const MlpConfig& config) {
  const std::int64_t h = config.width;
  return config.layers * (h * h + h);
}

double MlpLayerForwardFlops(const MlpConfig& config, int rows) {
  return 2.0 * rows * static_cast<double>(config.width) * config.width;
}

namespace {

// Streams far above any buffer id, one per (layer, tensor).
std::int64_t InitStream(MlpTensor tensor, int layer) {
  return (std::int64_t{1} << 40) + std::int64_t{4} * layer + static_cast<int>(tensor);
}

float InitScale(const MlpConfig& config, MlpTensor tensor) {
  switch (tensor) {
    case MlpTensor::kWeight: return static_cast<float>(std::sqrt(6.0 / config.width));
    case MlpTensor::kBias: return 0.1f;
    default: return 1.0f;
  }
}

}  // namespace

Buffer MlpInitBuffer(int rank, std::string name, const MlpConfig& config, MlpTensor tensor,
                     int layer, std::int64_t count) {
  Buffer buffer;
  buffer.name = std::move(name);
  buffer.rank = rank;
  buffer.count = count;
  buffer.init = BufferInit::kRandom;
  buffer.init_stream = InitStream(tensor, layer);
  buffer.init_scale = InitScale(config, tensor);
  return buffer;
}

float MlpInitValue(const MlpConfig& config, MlpTensor tensor, int layer, std::int64_t index,
                   std::uint64_t seed) {
  return InputValue(seed, InitStream(tensor, layer), index) * InitScale(config, tensor);
}

KernelCall MlpOptimizerCall(const MlpConfig& config, BufferSlice param, BufferSlice grad,
                            BufferSlice first_moment, BufferSlice second_moment, int step) {
  KernelCall call;
  call.n = static_cast<std::int32_t>(param.count);
  call.a = grad;
  call.c = param;
  if (config.optimizer == OptimizerKind::kSgd) {
    call.kind = KernelKind::kAxpy;
    call.alpha = -config.learning_rate;
    return call;
  }
  call.kind = KernelKind::kAdam;
  call.alpha = config.learning_rate;
  call.beta1 = config.adam_beta1;
  call.beta2 = config.adam_beta2;
  call.epsilon = config.adam_epsilon;
  call.adam_step = step;
  call.b = first_moment;
  call.d = second_moment;
  return call;
}

MlpReference::MlpReference(const MlpConfig& config, std::uint64_t seed) : config_(config) {
  CheckMlpConfig(config);
  const std::int64_t h = config.width, rows = config.batch;
  auto init = [&](MlpTensor tensor, int layer, std::int64_t count) {
    std::vector<float> values(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
      values[i] = MlpInitValue(config, tensor, layer, i, seed);
    return values;
  };
  input_ = init(MlpTensor::kInput, 0, rows * h);
  target_ = init(MlpTensor::kTarget, 0, rows * h);
  for (int l = 0; l < config.layers; ++l) {
    weights_.push_back(init(MlpTensor::kWeight, l, h * h));
    biases_.push_back(init(MlpTensor::kBias, l, h));
  }
  weight_grads_.assign(config.layers, std::vector<float>(h * h, 0.0f));
  bias_grads_.assign(config.layers, std::vector<float>(h, 0.0f));
  weight_m1_ = weight_m2_ = weight_grads_;
  bias_m1_ = bias_m2_ = bias_grads_;
}

void MlpReference::TrainStep() {
  const int layers = config_.layers;
  const std::int64_t h = config_.width, rows = config_.batch;
  // Forward, keeping every layer's pre-activation z and output a.
  std::vector<std::vector<float>> z(layers), a(layers);
  const std::vector<float>* x = &input_;
  for (int l = 0; l < layers; ++l) {
    z[l].assign(rows * h, 0.0f);
    for (std::int64_t r = 0; r < rows; ++r) {
      float* z_row = &z[l][r * h];
      for (std::int64_t i = 0; i < h; ++i) {
        const float x_ri = (*x)[r * h + i];
        const float* w_row = &weights_[l][i * h];
        for (std::int64_t o = 0; o < h; ++o) z_row[o] += x_ri * w_row[o];
      }
      for (std::int64_t o = 0; o < h; ++o) z_row[o] += biases_[l][o];
    }
    a[l] = z[l];
    if (l + 1 < layers)
      for (float& v : a[l]) v = v > 0.0f ? v : 0.0f;
    x = &a[l];
  }
  // Loss and its gradient with respect to the output.
  const std::vector<float>& y = a[layers - 1];
  std::vector<float> grad_out(rows * h);
  double loss = 0;
  for (std::int64_t i = 0; i < rows * h; ++i) {
    const double diff = static_cast<double>(y[i]) - target_[i];
    loss += diff * diff;
    grad_out[i] = static_cast<float>(diff / static_cast<double>(rows));
  }
  loss_ = loss / (2.0 * static_cast<double>(rows));
  // Backward, layer by layer from the top.
  for (int l = layers - 1; l >= 0; --l) {
    std::vector<float> grad_z = grad_out;
    if (l + 1 < layers)
      for (std::int64_t i = 0; i < rows * h; ++i)
        if (z[l][i] <= 0.0f) grad_z[i] = 0.0f;
    const std::vector<float>& layer_in = l == 0 ? input_ : a[l - 1];
    std::vector<double> dw(static_cast<std::size_t>(h * h), 0.0);  // in double
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t i = 0; i < h; ++i) {
        const double x_ri = layer_in[r * h + i];
        double* dw_row = &dw[i * h];
        for (std::int64_t o = 0; o < h; ++o) dw_row[o] += x_ri * grad_z[r * h + o];
      }
    for (std::int64_t i = 0; i < h * h; ++i) weight_grads_[l][i] = static_cast<float>(dw[i]);
    for (std::int64_t o = 0; o < h; ++o) {
      double sum = 0;
      for (std::int64_t r = 0; r < rows; ++r) sum += grad_z[r * h + o];
      bias_grads_[l][o] = static_cast<float>(sum);
    }
    if (l == 0) break;
    grad_out.assign(rows * h, 0.0f);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t i = 0; i < h; ++i) {
        float sum = 0.0f;
        for (std::int64_t o = 0; o < h; ++o) sum += grad_z[r * h + o] * weights_[l][i * h + o];
        grad_out[r * h + i] = sum;
      }
  }
  ++steps_;
  for (int l = 0; l < layers; ++l) {
    Update(weights_[l], weight_grads_[l], weight_m1_[l], weight_m2_[l]);
    Update(biases_[l], bias_grads_[l], bias_m1_[l], bias_m2_[l]);
  }
}

// SGD, or Adam with bias correction, computed in double.
void MlpReference::Update(std::vector<float>& param, const std::vector<float>& grad,
                          std::vector<float>& m1, std::vector<float>& m2) {
  const double lr = config_.learning_rate;
  if (config_.optimizer == OptimizerKind::kSgd) {
    for (std::size_t i = 0; i < param.size(); ++i) param[i] = static_cast<float>(param[i] - lr * grad[i]);
    return;
  }
  const double b1 = config_.adam_beta1, b2 = config_.adam_beta2;
  for (std::size_t i = 0; i < param.size(); ++i) {
    const double m = b1 * m1[i] + (1 - b1) * grad[i];
    const double v = b2 * m2[i] + (1 - b2) * static_cast<double>(grad[i]) * grad[i];
    m1[i] = static_cast<float>(m);
    m2[i] = static_cast<float>(v);
    const double m_hat = m / (1 - std::pow(b1, steps_));
    const double v_hat = v / (1 - std::pow(b2, steps_));
    param[i] = static_cast<float>(param[i] - lr * m_hat / (std::sqrt(v_hat) + config_.adam_epsilon));
  }
}

}  // namespace shardlab
