#include "engine/model/tp_layer.h"

#include <cmath>
#include <string>

#include "engine/core/error.h"
#include "engine/core/fill.h"

namespace shardlab {
namespace {

constexpr int kMaxDim = 1 << 16;
// Streams far from the collectives' (buffer ids) and the MLP's (2^40 + ...).
constexpr std::int64_t kStreamBase = std::int64_t{1} << 41;

std::vector<float> Tensor(const TpLayerConfig& c, TpTensor t, std::int64_t count,
                          std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  const float scale = TpLayerScale(c, t);
  for (std::int64_t i = 0; i < count; ++i)
    v[static_cast<std::size_t>(i)] = scale * InputValue(seed, TpLayerStream(t), i);
  return v;
}

// c[m×n] = a[m×k]·b[k×n] (+ bias[n]), in double.
std::vector<float> MatMul(const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<float>* bias, int m, int n, int k) {
  std::vector<double> acc(static_cast<std::size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      const double a_ip = a[static_cast<std::size_t>(i) * k + p];
      const float* b_row = &b[static_cast<std::size_t>(p) * n];
      double* row = &acc[static_cast<std::size_t>(i) * n];
      for (int j = 0; j < n; ++j) row[j] += a_ip * b_row[j];
    }
  std::vector<float> c(acc.size());
  for (std::size_t i = 0; i < acc.size(); ++i)
    c[i] = static_cast<float>(acc[i] + (bias != nullptr ? (*bias)[i % static_cast<std::size_t>(n)] : 0.0f));
  return c;
}

// a[m×k] transposed to [k×m].
std::vector<float> Transpose(const std::vector<float>& a, int m, int k) {
  std::vector<float> t(a.size());
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p)
      t[static_cast<std::size_t>(p) * m + i] = a[static_cast<std::size_t>(i) * k + p];
  return t;
}

std::vector<float> ColumnSum(const std::vector<float>& a, int m, int n) {
  std::vector<double> s(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) s[static_cast<std::size_t>(j)] += a[static_cast<std::size_t>(i) * n + j];
  return std::vector<float>(s.begin(), s.end());
}

}  // namespace

const char* TpLayerKindName(TpLayerKind kind) {
  switch (kind) {
    case TpLayerKind::kColumnLinear: return "column";
    case TpLayerKind::kRowLinear: return "row";
    case TpLayerKind::kMlp: return "mlp";
  }
  return "?";
}

TpLayerKind ParseTpLayerKind(std::string_view name) {
  for (TpLayerKind k : {TpLayerKind::kColumnLinear, TpLayerKind::kRowLinear, TpLayerKind::kMlp})
    if (name == TpLayerKindName(k)) return k;
  throw Error("layer: unknown layer '" + std::string(name) + "' (choose column, row, mlp)",
              ErrorKind::kInvalidInput);
}

int TpLayerConfig::split_width() const {
  if (ffn > 0) return ffn;
  return kind == TpLayerKind::kMlp ? 4 * hidden : hidden;
}

void CheckTpLayerConfig(const TpLayerConfig& c) {
  auto fail = [](const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); };
  auto range = [&](const char* field, int value) {
    if (value < 1 || value > kMaxDim)
      fail(std::string(field) + ": " + std::to_string(value) + " is outside 1.." +
           std::to_string(kMaxDim));
  };
  range("tokens", c.tokens);
  range("hidden", c.hidden);
  if (c.ffn != 0) range("ffn", c.ffn);
  if (c.tp < 1 || c.tp > 4096) fail("tp: " + std::to_string(c.tp) + " is outside 1..4096");
  const int f = c.split_width();
  if (f % c.tp != 0) {
    const char* what = c.kind == TpLayerKind::kColumnLinear ? "output features"
                       : c.kind == TpLayerKind::kRowLinear  ? "input features"
                                                            : "inner (ffn) features";
    fail(std::string(c.ffn != 0 ? "ffn" : "hidden") + ": " + std::to_string(f) + " " + what +
         " do not split evenly over tp " + std::to_string(c.tp) +
         " (Megatron requires it): choose a multiple of " + std::to_string(c.tp));
  }
}

std::int64_t TpLayerStream(TpTensor tensor) { return kStreamBase + static_cast<int>(tensor); }

float TpLayerScale(const TpLayerConfig& c, TpTensor tensor) {
  const int f = c.split_width();
  switch (tensor) {
    case TpTensor::kWeight1:
      return static_cast<float>(std::sqrt(6.0 / (c.kind == TpLayerKind::kRowLinear ? f : c.hidden)));
    case TpTensor::kWeight2: return static_cast<float>(std::sqrt(6.0 / f));
    case TpTensor::kBias1:
    case TpTensor::kBias2: return 0.1f;
    case TpTensor::kInput:
    case TpTensor::kOutputGrad: return 1.0f;
  }
  return 1.0f;
}

TpLayerReference::TpLayerReference(const TpLayerConfig& c, std::uint64_t seed) : config(c) {
  CheckTpLayerConfig(c);
  const int t = c.tokens, h = c.hidden, f = c.split_width();
  const bool row = c.kind == TpLayerKind::kRowLinear;
  const int in = row ? f : h;
  const int out = c.kind == TpLayerKind::kColumnLinear ? f : h;
  x = Tensor(c, TpTensor::kInput, std::int64_t{t} * in, seed);
  dy = Tensor(c, TpTensor::kOutputGrad, std::int64_t{t} * out, seed);
  if (c.kind != TpLayerKind::kMlp) {
    // One linear: in -> out.
    w1 = Tensor(c, TpTensor::kWeight1, std::int64_t{in} * out, seed);
    b1 = Tensor(c, TpTensor::kBias1, out, seed);
    y = MatMul(x, w1, &b1, t, out, in);
    dw1 = MatMul(Transpose(x, t, in), dy, nullptr, in, out, t);
    db1 = ColumnSum(dy, t, out);
    dx = MatMul(dy, Transpose(w1, in, out), nullptr, t, in, out);
    return;
  }
  w1 = Tensor(c, TpTensor::kWeight1, std::int64_t{h} * f, seed);
  b1 = Tensor(c, TpTensor::kBias1, f, seed);
  w2 = Tensor(c, TpTensor::kWeight2, std::int64_t{f} * h, seed);
  b2 = Tensor(c, TpTensor::kBias2, h, seed);
  const std::vector<float> z = MatMul(x, w1, &b1, t, f, h);
  std::vector<float> a(z.size());
  for (std::size_t i = 0; i < z.size(); ++i) a[i] = z[i] > 0.0f ? z[i] : 0.0f;
  y = MatMul(a, w2, &b2, t, h, f);
  dw2 = MatMul(Transpose(a, t, f), dy, nullptr, f, h, t);
  db2 = ColumnSum(dy, t, h);
  std::vector<float> dz = MatMul(dy, Transpose(w2, f, h), nullptr, t, f, h);
  for (std::size_t i = 0; i < dz.size(); ++i)
    if (!(z[i] > 0.0f)) dz[i] = 0.0f;
  dw1 = MatMul(Transpose(x, t, h), dz, nullptr, h, f, t);
  db1 = ColumnSum(dz, t, f);
  dx = MatMul(dz, Transpose(w1, h, f), nullptr, t, h, f);
}

}  // namespace shardlab
