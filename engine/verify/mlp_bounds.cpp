#include "engine/verify/mlp_bounds.h"

#include <algorithm>
#include <cmath>

#include "engine/verify/bounds.h"

namespace shardlab {
namespace {

using Vec = std::vector<double>;

// c[m×n] += a[m×k]·b[k×n], row-major, j innermost (contiguous).
void GemmNN(const double* a, const double* b, double* c, std::int64_t m, std::int64_t k, std::int64_t n) {
  for (std::int64_t i = 0; i < m; ++i) {
    double* c_row = c + i * n;
    for (std::int64_t p = 0; p < k; ++p) {
      const double a_ip = a[i * k + p];
      if (a_ip == 0) continue;
      const double* b_row = b + p * n;
      for (std::int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
}

// c[m×n] += aᵀ·b with a stored [k×m], b [k×n].
void GemmTN(const double* a, const double* b, double* c, std::int64_t m, std::int64_t k, std::int64_t n) {
  for (std::int64_t p = 0; p < k; ++p) {
    const double* b_row = b + p * n;
    for (std::int64_t i = 0; i < m; ++i) {
      const double a_pi = a[p * m + i];
      if (a_pi == 0) continue;
      double* c_row = c + i * n;
      for (std::int64_t j = 0; j < n; ++j) c_row[j] += a_pi * b_row[j];
    }
  }
}

// bᵀ of b stored [rows×cols], so that a·bᵀ runs as GemmNN (contiguous,
// vectorisable) instead of as dot products.
Vec Transposed(const Vec& b, std::int64_t rows, std::int64_t cols) {
  Vec t(b.size());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) t[j * rows + i] = b[i * cols + j];
  return t;
}

Vec Squared(const Vec& v) {
  Vec out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i] * v[i];
  return out;
}

bool AnyPositive(const Vec& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return x > 0; });
}

BoundedTensor Exact(Vec value) {
  BoundedTensor t;
  t.variance.assign(value.size(), 0.0);
  t.det.assign(value.size(), 0.0);
  t.switch_variance.assign(value.size(), 0.0);
  t.value = std::move(value);
  return t;
}

// σ² of a tensor's error as the computation that reads it sees it.
Vec SeenVariance(const BoundedTensor& t) {
  Vec v = t.variance;
  for (std::size_t i = 0; i < v.size(); ++i) v[i] += t.switch_variance[i];
  return v;
}

}  // namespace

std::vector<double> BoundedTensor::Bound() const {
  std::vector<double> bound(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) bound[i] = kSigmas * std::sqrt(variance[i]) + det[i];
  return bound;
}

MlpBoundedReference::MlpBoundedReference(const MlpConfig& config, std::uint64_t seed, double unit_roundoff)
    : config_(config), u_(unit_roundoff) {
  CheckMlpConfig(config);
  const std::int64_t h = config.width, rows = config.batch;
  auto init = [&](MlpTensor tensor, int layer, std::int64_t count) {
    Vec values(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) values[i] = MlpInitValue(config, tensor, layer, i, seed);
    return values;
  };
  input_ = init(MlpTensor::kInput, 0, rows * h);
  target_ = init(MlpTensor::kTarget, 0, rows * h);
  for (int l = 0; l < config.layers; ++l) {
    weights_.push_back(Exact(init(MlpTensor::kWeight, l, h * h)));
    biases_.push_back(Exact(init(MlpTensor::kBias, l, h)));
    weight_grads_.push_back(Exact(Vec(h * h, 0.0)));
    bias_grads_.push_back(Exact(Vec(h, 0.0)));
  }
  weight_m1_ = weight_m2_ = weight_grads_;
  bias_m1_ = bias_m2_ = bias_grads_;
}

double MlpBoundedReference::loss_bound() const { return kSigmas * std::sqrt(loss_variance_); }

void MlpBoundedReference::TrainStep() {
  const int layers = config_.layers;
  const std::int64_t h = config_.width, rows = config_.batch, n = rows * h;
  const double u2 = u_ * u_, lambda = kSigmas;
  const double c_forward = static_cast<double>(h + 2) * static_cast<double>(h + 1) * u2;  // k = H + 1
  const double c_rows = static_cast<double>(rows + 1) * static_cast<double>(rows) * u2;   // k = B
  const double c_back = static_cast<double>(h + 1) * static_cast<double>(h) * u2;         // k = H
  const Vec zeros(static_cast<std::size_t>(n), 0.0);

  // Forward: z[l] and a[l] with their variances.
  std::vector<Vec> z(layers), z_var(layers), a(layers), a_var(layers);
  const Vec* x = &input_;
  const Vec* x_var = &zeros;
  for (int l = 0; l < layers; ++l) {
    const BoundedTensor& w = weights_[l];
    const BoundedTensor& b = biases_[l];
    const Vec w_var = SeenVariance(w), b_var = SeenVariance(b);
    z[l].assign(n, 0.0);
    GemmNN(x->data(), w.value.data(), z[l].data(), rows, h, h);
    Vec in(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) in[i] = (*x_var)[i] + c_forward * (*x)[i] * (*x)[i];
    z_var[l].assign(n, 0.0);
    GemmNN(in.data(), Squared(w.value).data(), z_var[l].data(), rows, h, h);
    if (AnyPositive(w_var)) {
      for (std::int64_t i = 0; i < n; ++i) in[i] = (*x_var)[i] + (*x)[i] * (*x)[i];
      GemmNN(in.data(), w_var.data(), z_var[l].data(), rows, h, h);
    }
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t o = 0; o < h; ++o) {
        z[l][r * h + o] += b.value[o];
        z_var[l][r * h + o] += b_var[o] + c_forward * b.value[o] * b.value[o];
      }
    a[l] = z[l];
    a_var[l] = z_var[l];
    if (l + 1 < layers)
      for (std::int64_t i = 0; i < n; ++i) {
        if (a[l][i] <= -lambda * std::sqrt(a_var[l][i])) a_var[l][i] = 0;  // surely cut to 0
        a[l][i] = std::max(a[l][i], 0.0);
      }
    x = &a[l];
    x_var = &a_var[l];
  }

  // Loss and its gradient with respect to the output.
  const Vec& y = a[layers - 1];
  const Vec& y_var = a_var[layers - 1];
  Vec g(n), g_var(n);
  double loss = 0, loss_var = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double diff = y[i] - target_[i];
    loss += diff * diff;
    g[i] = diff / static_cast<double>(rows);
    g_var[i] = y_var[i] / (static_cast<double>(rows) * rows) + (3 * u_ * g[i]) * (3 * u_ * g[i]);
    loss_var += g[i] * g[i] * y_var[i];
  }
  loss_ = loss / (2.0 * static_cast<double>(rows));
  loss_variance_ = loss_var + static_cast<double>(rows + 3) * u2 * loss_ * loss_;

  // Backward, layer by layer from the top.
  for (int l = layers - 1; l >= 0; --l) {
    Vec dz = g, dz_var = g_var;
    if (l + 1 < layers)
      for (std::int64_t i = 0; i < n; ++i) {
        const double zi = z[l][i], sz = std::sqrt(z_var[l][i]);
        if (zi > lambda * sz) continue;  // surely on
        dz[i] = zi > 0 ? g[i] : 0.0;
        if (zi < -lambda * sz || sz == 0) {
          dz_var[i] = 0;  // surely off
          continue;
        }
        // Within the bound of 0: the backend's switch may differ, and a
        // switch is one jump, not a sum of small terms: counted in full.
        const double jump = std::fabs(g[i]) + lambda * std::sqrt(g_var[i]);
        dz_var[i] = (zi > 0 ? g_var[i] : 0.0) + jump * jump;
      }
    const Vec& in = l == 0 ? input_ : a[l - 1];
    const Vec& in_var = l == 0 ? zeros : a_var[l - 1];
    const Vec dz2 = Squared(dz);
    BoundedTensor& dw = weight_grads_[l];
    dw.value.assign(h * h, 0.0);
    GemmTN(in.data(), dz.data(), dw.value.data(), h, rows, h);
    Vec rhs(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) rhs[i] = dz_var[i] + c_rows * dz2[i];
    dw.variance.assign(h * h, 0.0);
    GemmTN(Squared(in).data(), rhs.data(), dw.variance.data(), h, rows, h);
    if (l > 0) {
      for (std::int64_t i = 0; i < n; ++i) rhs[i] = dz2[i] + dz_var[i];
      GemmTN(in_var.data(), rhs.data(), dw.variance.data(), h, rows, h);
    }
    BoundedTensor& db = bias_grads_[l];
    db.value.assign(h, 0.0);
    db.variance.assign(h, 0.0);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t o = 0; o < h; ++o) {
        db.value[o] += dz[r * h + o];
        db.variance[o] += dz_var[r * h + o] + c_rows * dz2[r * h + o];
      }
    if (l == 0) break;
    const BoundedTensor& w = weights_[l];
    const Vec w_var = SeenVariance(w);
    const Vec wt = Transposed(w.value, h, h);
    g.assign(n, 0.0);
    GemmNN(dz.data(), wt.data(), g.data(), rows, h, h);
    for (std::int64_t i = 0; i < n; ++i) rhs[i] = dz_var[i] + c_back * dz2[i];
    g_var.assign(n, 0.0);
    GemmNN(rhs.data(), Squared(wt).data(), g_var.data(), rows, h, h);
    if (AnyPositive(w_var)) {
      for (std::int64_t i = 0; i < n; ++i) rhs[i] = dz2[i] + dz_var[i];
      GemmNN(rhs.data(), Transposed(w_var, h, h).data(), g_var.data(), rows, h, h);
    }
  }
  ++steps_;
  for (int l = 0; l < layers; ++l) {
    Update(weights_[l], weight_grads_[l], weight_m1_[l], weight_m2_[l]);
    Update(biases_[l], bias_grads_[l], bias_m1_[l], bias_m2_[l]);
  }
}

void MlpBoundedReference::Update(BoundedTensor& param, const BoundedTensor& grad, BoundedTensor& m1,
                                 BoundedTensor& m2) {
  const double lr = config_.learning_rate, u = u_, lambda = kSigmas;
  if (config_.optimizer == OptimizerKind::kSgd) {
    for (std::size_t i = 0; i < param.value.size(); ++i) {
      const double step = lr * grad.value[i];
      const double rounding = 2 * u * (std::fabs(param.value[i]) + std::fabs(step));
      param.value[i] -= step;
      param.variance[i] += lr * lr * grad.variance[i] + rounding * rounding;
    }
    return;
  }
  const double b1 = config_.adam_beta1, b2 = config_.adam_beta2, eps = config_.adam_epsilon;
  const double t = steps_;
  const double c1 = 1 - std::pow(b1, t), c2 = 1 - std::pow(b2, t);
  // |m̂|/sqrt(v̂) ≤ C_t for any gradient history (Cauchy–Schwarz), with room
  // for the kernel's rounding of m and v.
  double history = 0;
  for (int j = 0; j < steps_; ++j) history += std::pow(b1 * b1 / b2, j);
  const double most = lr * (1 - b1) / c1 * std::sqrt((1 - std::pow(b2, t)) / (1 - b2) * history) * (1 + 1e-5);
  auto step_of = [&](double m, double v) {
    const double f = lr * (m / c1) / (std::sqrt(std::max(v, 0.0) / c2) + eps);
    return std::clamp(f, -most, most);
  };
  for (std::size_t i = 0; i < param.value.size(); ++i) {
    const double g = grad.value[i], g_var = grad.variance[i], sg = std::sqrt(g_var);
    const double m_old = m1.value[i], v_old = m2.value[i];
    const double m = b1 * m_old + (1 - b1) * g;
    const double v = b2 * v_old + (1 - b2) * g * g;
    const double m_round = 3 * u * (b1 * std::fabs(m_old) + (1 - b1) * std::fabs(g));
    const double v_round = 4 * u * v;
    const double g2_err = 2 * std::fabs(g) * sg + g_var;
    m1.value[i] = m;
    m1.variance[i] = b1 * b1 * m1.variance[i] + (1 - b1) * (1 - b1) * g_var + m_round * m_round;
    m2.value[i] = v;
    m2.variance[i] = b2 * b2 * m2.variance[i] + (1 - b2) * (1 - b2) * g2_err * g2_err + v_round * v_round;
    const double sm = std::sqrt(m1.variance[i]), sv = std::sqrt(m2.variance[i]);
    const double f = step_of(m, v);
    double lo = f, hi = f;
    for (const double mc : {m - lambda * sm, m + lambda * sm})
      for (const double vc : {v - lambda * sv, v + lambda * sv}) {
        const double fc = step_of(mc, vc);
        lo = std::min(lo, fc);
        hi = std::max(hi, fc);
      }
    // The kernel's own rounding of m̂, v̂, the square root, the sum, the
    // quotient and the product: a few u of the step.
    const double width = std::max(hi - f, f - lo) + 8 * u * std::max(std::fabs(lo), std::fabs(hi));
    const double store = u * (std::fabs(param.value[i]) + std::fabs(f));
    param.value[i] -= f;
    if (std::fabs(m) <= lambda * sm) {  // m may have either sign: a switch
      param.det[i] += width;
      param.switch_variance[i] += width * width;  // one jump: counted in full
      param.variance[i] += store * store;
    } else {
      param.variance[i] += (width / lambda) * (width / lambda) + store * store;
    }
  }
}

}  // namespace shardlab
