#include "engine/train/mlp_pass.h"

#include "engine/train/loss_scale.h"

namespace shardlab {

MlpParams MlpParams::ZerosLike(const MlpConfig& model) {
  const std::size_t h = static_cast<std::size_t>(model.width);
  MlpParams p;
  p.w.assign(static_cast<std::size_t>(model.layers), std::vector<float>(h * h, 0.0f));
  p.b.assign(static_cast<std::size_t>(model.layers), std::vector<float>(h, 0.0f));
  return p;
}

MlpParams MlpParams::Initial(const MlpConfig& model, std::uint64_t seed) {
  MlpParams p = ZerosLike(model);
  for (int l = 0; l < model.layers; ++l) {
    for (std::size_t i = 0; i < p.w[l].size(); ++i)
      p.w[l][i] = MlpInitValue(model, MlpTensor::kWeight, l, static_cast<std::int64_t>(i), seed);
    for (std::size_t i = 0; i < p.b[l].size(); ++i)
      p.b[l][i] = MlpInitValue(model, MlpTensor::kBias, l, static_cast<std::int64_t>(i), seed);
  }
  return p;
}

std::int64_t MlpParams::size() const {
  std::int64_t n = 0;
  for (std::size_t l = 0; l < w.size(); ++l) n += static_cast<std::int64_t>(w[l].size() + b[l].size());
  return n;
}

float& MlpParams::at(std::int64_t i) {
  const std::int64_t layer_size = static_cast<std::int64_t>(w[0].size() + b[0].size());
  const std::size_t l = static_cast<std::size_t>(i / layer_size);
  const std::int64_t in = i % layer_size;
  const std::int64_t hh = static_cast<std::int64_t>(w[0].size());
  return in < hh ? w[l][static_cast<std::size_t>(in)] : b[l][static_cast<std::size_t>(in - hh)];
}

float MlpParams::at(std::int64_t i) const { return const_cast<MlpParams*>(this)->at(i); }

std::vector<float> MlpParams::Flat() const {
  std::vector<float> flat;
  flat.reserve(static_cast<std::size_t>(size()));
  for (std::size_t l = 0; l < w.size(); ++l) {
    flat.insert(flat.end(), w[l].begin(), w[l].end());
    flat.insert(flat.end(), b[l].begin(), b[l].end());
  }
  return flat;
}

void MlpParams::SetFlat(const std::vector<float>& flat) {
  std::size_t at_ = 0;
  for (std::size_t l = 0; l < w.size(); ++l) {
    for (float& v : w[l]) v = flat[at_++];
    for (float& v : b[l]) v = flat[at_++];
  }
}

MlpData MlpData::Of(const MlpConfig& model, std::uint64_t seed) {
  const std::int64_t n = std::int64_t{model.batch} * model.width;
  MlpData d;
  d.input.resize(static_cast<std::size_t>(n));
  d.target.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    d.input[i] = MlpInitValue(model, MlpTensor::kInput, 0, i, seed);
    d.target[i] = MlpInitValue(model, MlpTensor::kTarget, 0, i, seed);
  }
  return d;
}

namespace {

// z[rows×H] = x·W + b, float sums in the reference's order, then rounded
// to `working` (fp16, bf16).
void LayerForward(const float* x, const std::vector<float>& w, const std::vector<float>& b,
                  std::int64_t rows, std::int64_t h, DType working, std::vector<float>& z) {
  z.assign(static_cast<std::size_t>(rows * h), 0.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    float* z_row = &z[static_cast<std::size_t>(r * h)];
    for (std::int64_t i = 0; i < h; ++i) {
      const float x_ri = x[r * h + i];
      const float* w_row = &w[static_cast<std::size_t>(i * h)];
      for (std::int64_t o = 0; o < h; ++o) z_row[o] += x_ri * w_row[o];
    }
    for (std::int64_t o = 0; o < h; ++o) z_row[o] += b[static_cast<std::size_t>(o)];
  }
  RoundToWorking(working, z);
}

}  // namespace

PassResult MlpForwardBackward(const MlpConfig& model, const MlpParams& params, const MlpData& data,
                              int row0, int rows_in, const PassOptions& options, MlpParams* grads) {
  const int layers = model.layers;
  const std::int64_t h = model.width, rows = rows_in;
  const double loss_rows = options.loss_rows > 0 ? options.loss_rows : model.batch;
  const float* input = data.input.data() + std::int64_t{row0} * h;
  const float* target = data.target.data() + std::int64_t{row0} * h;
  auto recomputes = [&](int l) {
    return !options.recompute.empty() && options.recompute[static_cast<std::size_t>(l)];
  };
  PassResult result;
  // Forward: keep z_l unless the layer recomputes it, and a_l.
  std::vector<std::vector<float>> z(static_cast<std::size_t>(layers)), a(static_cast<std::size_t>(layers));
  std::vector<float> scratch;
  for (int l = 0; l < layers; ++l) {
    const float* x = l == 0 ? input : a[l - 1].data();
    std::vector<float>& zl = recomputes(l) ? scratch : z[l];
    LayerForward(x, params.w[l], params.b[l], rows, h, options.working, zl);
    a[l] = zl;
    if (l + 1 < layers)
      for (float& v : a[l]) v = v > 0.0f ? v : 0.0f;
  }
  // Loss and dL/dy (scaled).
  const std::vector<float>& y = a[layers - 1];
  std::vector<float> grad_out(static_cast<std::size_t>(rows * h));
  double loss = 0;
  for (std::int64_t i = 0; i < rows * h; ++i) {
    const double diff = static_cast<double>(y[i]) - target[i];
    loss += diff * diff;
    grad_out[i] = static_cast<float>(diff / loss_rows) * options.loss_scale;
  }
  RoundToWorking(options.working, grad_out);
  result.loss = loss / (2.0 * loss_rows);
  // Backward.
  for (int l = layers - 1; l >= 0; --l) {
    const float* layer_in = l == 0 ? input : a[l - 1].data();
    if (recomputes(l)) {  // z_l again, from the kept input: the same operations
      LayerForward(layer_in, params.w[l], params.b[l], rows, h, options.working, z[l]);
      result.recompute_flops += 2 * rows * h * h + rows * h;
    }
    std::vector<float> grad_z = grad_out;
    if (l + 1 < layers)
      for (std::int64_t i = 0; i < rows * h; ++i)
        if (z[l][i] <= 0.0f) grad_z[i] = 0.0f;
    z[l].clear();
    z[l].shrink_to_fit();
    std::vector<double> dw(static_cast<std::size_t>(h * h), 0.0);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t i = 0; i < h; ++i) {
        const double x_ri = layer_in[r * h + i];
        double* dw_row = &dw[static_cast<std::size_t>(i * h)];
        for (std::int64_t o = 0; o < h; ++o) dw_row[o] += x_ri * grad_z[r * h + o];
      }
    std::vector<float>& gw = grads->w[l];
    std::vector<float>& gb = grads->b[l];
    for (std::int64_t i = 0; i < h * h; ++i) {
      float v = static_cast<float>(dw[i]);
      v = RoundToWorking(options.working, v);
      gw[i] = RoundToWorking(options.working, gw[i] + v);
    }
    for (std::int64_t o = 0; o < h; ++o) {
      double sum = 0;
      for (std::int64_t r = 0; r < rows; ++r) sum += grad_z[r * h + o];
      float v = static_cast<float>(sum);
      v = RoundToWorking(options.working, v);
      gb[o] = RoundToWorking(options.working, gb[o] + v);
    }
    if (l == 0) break;
    grad_out.assign(static_cast<std::size_t>(rows * h), 0.0f);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t i = 0; i < h; ++i) {
        float sum = 0.0f;
        for (std::int64_t o = 0; o < h; ++o) sum += grad_z[r * h + o] * params.w[l][i * h + o];
        grad_out[r * h + i] = sum;
      }
    RoundToWorking(options.working, grad_out);
  }
  return result;
}

double MlpBatchLoss(const MlpConfig& model, const MlpParams& params, const MlpData& data) {
  const std::int64_t h = model.width, rows = model.batch;
  std::vector<float> x = data.input, z;
  for (int l = 0; l < model.layers; ++l) {
    LayerForward(x.data(), params.w[l], params.b[l], rows, h, DType::kF32, z);
    if (l + 1 < model.layers)
      for (float& v : z) v = v > 0.0f ? v : 0.0f;
    x.swap(z);
  }
  double loss = 0;
  for (std::int64_t i = 0; i < rows * h; ++i) {
    const double diff = static_cast<double>(x[i]) - data.target[i];
    loss += diff * diff;
  }
  return loss / (2.0 * rows);
}

}  // namespace shardlab
